// AES-GCM and ChaCha20-Poly1305 on the device: the keystream of the CTR and
// ChaCha20 kernels, and the authenticator evaluated in parallel.
//
// Both authenticators are Horner's rule over 16-byte blocks, acc = (acc +
// m) * K, with K = H (GHASH, GF(2^128)) or K = r (Poly1305, integers mod
// 2^130 - 5). Unrolled, block i of n contributes m_i * K^(n - i), so any
// thread can weigh any block once it knows the block's distance from the
// end. The work is cut up accordingly:
//
//  - A message's keystream blocks but the last go to the bulk kernel, in
//    segments of kSegmentBlocks. Segments are aligned on the END of that
//    run (the first may be short), so segment j's weight is the same power
//    of K^(V * kSegmentBlocks) in every message (V = authenticator blocks per
//    keystream block: 1 for AES, 4 for ChaCha20).
//  - In a segment, thread t takes blocks t, t + kThreads, ... in tiles of
//    kBlocksPerThread blocks per thread, as the plain keystream kernels do
//    (AES-GCM with their tile; ChaCha20-Poly1305 with one block per thread,
//    for registers, see tuning.h). Poly1305 (and GHASH on GPUs before
//    sm_80) feeds each slot k of a tile into its own Horner chain per
//    thread, whose step is the constant K^(V * kBlocksPerThread * kThreads)
//    (ThreadChains). The chains step together, one multiplication per
//    block, independent of each other so their latencies overlap; at the
//    segment's end they are joined, slot k weighed by
//    K^(V kThreads (kBlocksPerThread - 1 - k)).
//    Poly1305 sums a keystream block's four products (its chain's step and
//    three powers of r) before reducing once (FoldedChains): a reduction's
//    carries cost as much as a multiplication.
//    GHASH from sm_80 on runs 16 chains per warp on the binary tensor cores
//    instead (WarpChains, gf_mma_absorb): the multiplication by a constant
//    is a bit matrix, which keeps it off the integer and shared-memory
//    pipes the T-table AES fills. Either way the threads' values are then
//    weighed by K^(V (kThreads - 1 - t)), split into a lane and a warp
//    factor, and summed by shuffles and one pass through shared memory
//    (reduce_block): no thread waits on another for more than a sum.
//    GCM on the tensor cores runs the bulk in two passes over the segments
//    (BulkWork): the keystream, then GHASH over the ciphertext when
//    sealing, the other way round when opening. Each pass keeps one
//    kernel's registers and shared memory to itself, so the keystream runs
//    as the CTR kernel does and GHASH's chains at the tensor cores' speed;
//    reading the ciphertext again costs far less than the two sharing an SM.
//  - The finish kernel, one block per message, combines the segments the
//    same way, then takes the last keystream block, the lengths block and
//    the tag on one thread.
//
// The state after the associated data (hashed on the host) enters as an
// addend of the first authenticator block: acc0 * K^n is exactly what a
// sequential pass would have carried into the message.
//
// This header holds what both constructions share: the jobs and launches,
// the fields, and the kernels over a Scheme. The schemes are in
// gcm_kernels.cuh and chacha_poly_kernels.cuh; the host side that keys and
// launches them is aead_keyed.cuh, and the AeadCipher over it aead_gpu.cu.
#pragma once

#include <type_traits>

#include "backends/cuda/aes_device.cuh"
#include "backends/cuda/arx_device.cuh"
#include "backends/cuda/block_mode_kernels.cuh"
#include "backends/cuda/gf128_device.cuh"
#include "backends/cuda/keystream_kernels.cuh"
#include "backends/cuda/memory.cuh"
#include "backends/cuda/poly1305_device.cuh"
#include "backends/cuda/tuning.h"

namespace warpcrypt::cuda {

// One message of a launch, in device memory, prepared by the host. `in` and
// `out` hold the message from byte `base` on: a message that starts in host
// memory reaches the device piece by piece, each piece a run of whole
// segments (the last with the tail), and each launch sees one piece.
struct AeadMessageJob {
  const uint8_t *in;
  uint8_t *out;
  uint8_t *tag;          // sealing writes it; opening compares with it
  int32_t *verified;     // opening: 1 or 0 once the finish kernel is done
  uint64_t len;
  uint64_t aad_len;
  uint64_t first_segment;  // its first segment among the launch's
  uint64_t base;           // the message byte in[0] and out[0] hold
  // GCM: J0, the pre-counter block, as four big-endian words.
  // ChaCha20-Poly1305: the nonce as three little-endian words.
  uint32_t nonce[4];
  uint32_t initial[5];  // the authenticator state after the AAD
  bool aligned;         // in and out are 16-byte aligned
};

// A strided batch (wc_aead_strided): equal-length messages, nonces and tags
// at fixed strides, so that any thread can compute any message's job and
// the host does nothing per message. No associated data, so the
// authenticator starts at zero.
struct StridedBatch {
  const uint8_t *in;
  uint8_t *out;
  uint64_t len;
  uint64_t stride;
  const uint8_t *nonces;
  uint64_t nonce_stride;
  uint8_t *tags;
  uint64_t tag_stride;
  int32_t *verified;  // opening: one verdict per message; null when sealing
  uint64_t count;
  uint64_t segments_per_message;  // the bulk kernel's; 0 for short messages
  bool gcm;                       // GCM's J0 (big-endian words, counter 1), else ChaCha20's nonce words

  __device__ AeadMessageJob message(uint64_t i) const {
    AeadMessageJob job{};
    job.in = in + i * stride;
    job.out = out + i * stride;
    job.tag = tags + i * tag_stride;
    job.verified = verified != nullptr ? verified + i : nullptr;
    job.len = len;
    job.first_segment = i * segments_per_message;
    // Nonces may sit at any byte: read them a byte at a time.
    const uint8_t *nonce = nonces + i * nonce_stride;
    for (int w = 0; w < 3; ++w) {
      const uint8_t *b = nonce + 4 * w;
      job.nonce[w] = gcm ? uint32_t{b[0]} << 24 | uint32_t{b[1]} << 16 | uint32_t{b[2]} << 8 | b[3]
                         : uint32_t{b[3]} << 24 | uint32_t{b[2]} << 16 | uint32_t{b[1]} << 8 | b[0];
    }
    job.nonce[3] = gcm ? 1 : 0;
    job.aligned = reinterpret_cast<uintptr_t>(job.in) % 16 == 0 && reinterpret_cast<uintptr_t>(job.out) % 16 == 0;
    return job;
  }
};

struct AeadLaunch {
  // A batch's messages in device memory, or null for one message, which
  // then travels in `single` and needs no upload before the launch, or for
  // a strided batch of short messages, whose jobs are computed from
  // `strided`.
  const AeadMessageJob *messages;
  AeadMessageJob single;
  uint32_t message_count;
  // The bulk kernel's block b takes segment segment_offset + b: a piece of a
  // message runs its own segments only.
  uint64_t segment_offset;
  void *segment_values;  // one authenticator element per segment
  uint32_t tag_len;
  bool seal;
  // Short messages' keystream pass: items of tuning::kAeadEachItemBytes per
  // message, enough for the launch's longest (at most the CTA's threads).
  uint32_t each_items = 0;
  StridedBatch strided{};  // count 0 unless the launch is a strided batch of short messages

  __device__ AeadMessageJob message(uint32_t index) const {
    if (messages != nullptr) return messages[index];
    return strided.count != 0 ? strided.message(index) : single;
  }
};

__host__ __device__ constexpr uint64_t aead_keystream_blocks(uint64_t len, uint64_t block_bytes) {
  return (len + block_bytes - 1) / block_bytes;
}
// Every keystream block but the last, which the finish kernel takes.
__host__ __device__ constexpr uint64_t aead_bulk_blocks(uint64_t len, uint64_t block_bytes) {
  return len == 0 ? 0 : aead_keystream_blocks(len, block_bytes) - 1;
}
__host__ __device__ constexpr uint64_t aead_segments(uint64_t len, uint64_t block_bytes, uint64_t segment_blocks) {
  return (aead_bulk_blocks(len, block_bytes) + segment_blocks - 1) / segment_blocks;
}

// ---- Authenticator fields -------------------------------------------------

struct GhashField {
  using Element = Gf128;
  static constexpr int kWords = 4;
  __host__ __device__ static Element one() { return {{0x80000000u, 0, 0, 0}}; }
  __host__ __device__ static Element add(const Element &a, const Element &b) { return gf_add(a, b); }
  __host__ __device__ static Element multiply(const Element &a, const Element &b) { return gf_multiply(a, b); }
  // Sums need no care in characteristic 2.
  __host__ __device__ static Element settle(const Element &a) { return a; }
  __device__ static Element from_block(uint4 block) { return gf_from_block(block); }
  __device__ static Element shuffle_xor(const Element &a, int offset) {
    Element b;
#pragma unroll
    for (int i = 0; i < kWords; ++i) b.w[i] = __shfl_xor_sync(0xffffffffu, a.w[i], offset);
    return b;
  }
  __host__ __device__ static Element load(const uint32_t (&words)[5]) {
    return {{words[0], words[1], words[2], words[3]}};
  }
};

struct Poly1305Field {
  using Element = Poly;
  static constexpr int kWords = 5;
  __host__ __device__ static Element one() { return {{1, 0, 0, 0, 0}}; }
  __host__ __device__ static Element add(const Element &a, const Element &b) { return poly_add(a, b); }
  // `b` is carried; `a` at most a product plus a block.
  __host__ __device__ static Element multiply(const Element &a, const Element &b) { return poly_multiply(a, b); }
  // Sums of up to 32 carried elements fit the limbs; carry them before use.
  __host__ __device__ static Element settle(const Element &a) { return poly_carry(a); }
  // Every authenticated block is a full 16 bytes (RFC 8439 pads with
  // zeros), so every block gets the 2^128 bit.
  __device__ static Element from_block(uint4 block) { return poly_from_block(block, 1); }
  __device__ static Element shuffle_xor(const Element &a, int offset) {
    Element b;
#pragma unroll
    for (int i = 0; i < kWords; ++i) b.limb[i] = __shfl_xor_sync(0xffffffffu, a.limb[i], offset);
    return b;
  }
  __host__ __device__ static Element load(const uint32_t (&words)[5]) {
    return {{words[0], words[1], words[2], words[3], words[4]}};
  }
};

// Sum over the block's threads t of value_t * B^(kThreads - 1 - t), given
// each thread's lane factor B^(31 - lane) and warp factor
// B^(32 (warps - 1 - warp)). Valid in thread 0; `scratch` holds one element
// per warp. Every thread must call it.
template <class Field, int kThreads>
__device__ typename Field::Element reduce_block(typename Field::Element value,
                                                const typename Field::Element &lane_factor,
                                                const typename Field::Element &warp_factor,
                                                typename Field::Element *scratch) {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps");
  constexpr int kWarps = kThreads / 32;
  value = Field::multiply(value, lane_factor);
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) value = Field::add(value, Field::shuffle_xor(value, offset));
  value = Field::settle(value);
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = Field::multiply(value, warp_factor);
  __syncthreads();
  typename Field::Element total = scratch[0];
  if (threadIdx.x == 0) {
    for (int w = 1; w < kWarps; ++w) total = Field::add(total, scratch[w]);
    total = Field::settle(total);
  }
  return total;
}

// The lane and warp exponents reduce_block's factors stand for.
__host__ __device__ constexpr uint32_t lane_exponent(uint32_t thread) { return 31 - thread % 32; }
template <int kThreads>
__host__ __device__ constexpr uint32_t warp_exponent(uint32_t thread) {
  return 32 * (kThreads / 32 - 1 - thread / 32);
}

__host__ __device__ constexpr int log2_exact(uint64_t x) { return x <= 1 ? 0 : 1 + log2_exact(x / 2); }

// Factors for reduce_block over base B, computed on the host for GCM (B is
// a power of the per-key H): lane[l] = B^(31 - l), times a scale where the
// values carry a common factor, and warp[w] = B^(32 (warps - 1 - w)).
template <class Field, int kThreads>
struct Ladder {
  typename Field::Element lane[32];
  typename Field::Element warp[kThreads / 32];
};

// How a bulk kernel's thread keeps its share of the authenticator over a
// segment's tiles: absorb takes the tile's slot `slot` (this thread's block
// there), next_tile moves every chain one tile further from the segment's
// end, and value is what reduce_block weighs by the thread's ladder factors.
//
// Thread chains: one Horner chain per slot, stepped by the scheme's
// constant tile step (step_each), joined at the end by its slot step.
template <class Field, int kSlots>
struct ThreadChains {
  static constexpr bool kWholeWarp = false;  // each thread absorbs the blocks it has
  typename Field::Element chain[kSlots] = {};

  template <class Scheme>
  __device__ void next_tile(const Scheme &scheme) {
    scheme.step_each(chain);
  }
  template <class Scheme, int kVectors>
  __device__ void absorb(const Scheme &scheme, int slot, const uint4 (&text)[kVectors], bool first) {
    chain[slot] = Field::add(chain[slot], scheme.group(text, first));
  }
  template <class Scheme>
  __device__ typename Field::Element value(const Scheme &scheme) const {
    typename Field::Element total = chain[0];
#pragma unroll
    for (int k = 1; k < kSlots; ++k) total = Field::add(scheme.join(total), chain[k]);
    return total;
  }
};

// Folded chains: thread chains whose step is taken as each tile's block
// joins its chain (fold: chain * step + block), so that a scheme with a
// delayed reduction (Poly1305) sums the step's product with the block's
// before reducing once. A slot's blocks before the message come first,
// while its chain is still zero, so the steps they skip multiply zero.
template <class Field, int kSlots>
struct FoldedChains : ThreadChains<Field, kSlots> {
  bool stepped = false;  // past the first tile: blocks join chain * step

  template <class Scheme>
  __device__ void next_tile(const Scheme &) {
    stepped = true;
  }
  template <class Scheme, int kVectors>
  __device__ void absorb(const Scheme &scheme, int slot, const uint4 (&text)[kVectors], bool first) {
    this->chain[slot] = stepped ? scheme.fold(this->chain[slot], text, first) : scheme.group(text, first);
  }
};

// Warp chains (GHASH on the binary tensor cores, gf128_device.cuh): the
// warp's 32 blocks of a slot are consecutive, the same slot of the next tile
// kThreads blocks on, so 16 chains per warp take kGroups slots per step,
// each slot's matrix constant. Every lane of the warp takes part.
template <int kSlots, int kGroups>
struct WarpChains {
  static_assert(kSlots % kGroups == 0, "whole steps per tile");
  static constexpr bool kWholeWarp = true;  // every lane absorbs, a block it lacks as zeros
  Gf128WarpChains chains;
  uint32_t arranged[kGroups][4];

  template <class Scheme>
  __device__ void next_tile(const Scheme &) {}
  template <class Scheme>
  __device__ void absorb(const Scheme &scheme, int slot, const uint4 (&text)[1], bool present, bool first) {
    gf_mma_arrange(scheme.warp_block(text, present, first), arranged[slot % kGroups]);
    if (slot % kGroups == kGroups - 1) scheme.absorb_warp(chains, arranged);
  }
  template <class Scheme>
  __device__ Gf128 value(const Scheme &) const {
    return gf_mma_chain_value(chains);
  }
};

// What one launch of the bulk kernel does with its segments: the keystream
// and the authenticator together, or one of them (GCM's two passes).
enum class BulkWork { both, keystream, hash };
__host__ __device__ constexpr bool bulk_keystream(BulkWork work) { return work != BulkWork::hash; }
__host__ __device__ constexpr bool bulk_hash(BulkWork work) { return work != BulkWork::keystream; }

// ---- Kernels -------------------------------------------------------------

// The message a segment belongs to: the last whose first segment is not
// after it (messages without segments share their successor's start).
__device__ inline uint32_t message_of_segment(const AeadLaunch &launch, uint64_t segment) {
  if (launch.messages == nullptr) return 0;
  uint32_t low = 0;
  uint32_t high = launch.message_count;
  while (high - low > 1) {
    const uint32_t mid = low + (high - low) / 2;
    if (launch.messages[mid].first_segment <= segment) {
      low = mid;
    } else {
      high = mid;
    }
  }
  return low;
}

// One block per segment: the keystream XOR of kSegmentBlocks keystream
// blocks and their authenticator value, weighed from the segment's end, or
// one of the two (Scheme::kWork). Hashing alone, a sealing launch reads the
// ciphertext its keystream pass wrote.
template <class Scheme, int kThreads, int kBlocksPerThread, int kTilesPerSegment, int kMinBlocksPerSm>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm)
    aead_bulk_kernel(const __grid_constant__ typename Scheme::Key key, const __grid_constant__ AeadLaunch launch) {
  using Field = typename Scheme::Field;
  using Element = typename Field::Element;
  constexpr int kBytes = Scheme::kBlockBytes;
  constexpr int kVectors = kBytes / 16;
  constexpr int64_t kSegmentBlocks = int64_t{kThreads} * kBlocksPerThread * kTilesPerSegment;
  constexpr bool kKeystream = bulk_keystream(Scheme::kWork);
  constexpr bool kHash = bulk_hash(Scheme::kWork);
  extern __shared__ uint32_t shared[];

  const uint64_t segment = launch.segment_offset + blockIdx.x;
  const AeadMessageJob message = launch.message(message_of_segment(launch, segment));
  Scheme scheme(key, message, shared);
  const int64_t bulk = static_cast<int64_t>(aead_bulk_blocks(message.len, kBytes));
  const int64_t segments = (bulk + kSegmentBlocks - 1) / kSegmentBlocks;
  const int64_t start = bulk - (segments - static_cast<int64_t>(segment - message.first_segment)) * kSegmentBlocks;
  const uint8_t *in = Scheme::kWork == BulkWork::hash && launch.seal ? message.out : message.in;
  uint8_t *out = message.out;
  const int64_t base = static_cast<int64_t>(message.base);  // this piece's blocks are at or after it
  const bool aligned = message.aligned;

  typename Scheme::Chains chains;
  for (int tile = 0; tile < kTilesPerSegment; ++tile) {
    if (kHash && tile != 0) chains.next_tile(scheme);
    // Load the tile's data first, so its latency hides behind the keystream.
    int64_t block[kBlocksPerThread];
    uint4 data[kBlocksPerThread][kVectors];
#pragma unroll
    for (int k = 0; k < kBlocksPerThread; ++k) {
      block[k] = start + (int64_t{tile} * kBlocksPerThread + k) * kThreads + threadIdx.x;
      if (block[k] < 0) continue;  // before the message: the first segment is short
#pragma unroll
      for (int v = 0; v < kVectors; ++v) data[k][v] = load_block(in + (block[k] * kBytes - base) + 16 * v, aligned);
    }
    scheme.begin_tile(static_cast<uint64_t>(start + int64_t{tile} * kBlocksPerThread * kThreads + threadIdx.x / 32 * 32));
#pragma unroll
    for (int k = 0; k < kBlocksPerThread; ++k) {
      const bool present = block[k] >= 0;
      uint4 ciphertext[kVectors];  // what the authenticator takes; set where present
      if (present) {
        if constexpr (kKeystream) {
          uint32_t keystream[kBytes / 4];
          scheme.keystream(static_cast<uint64_t>(block[k]), keystream);
#pragma unroll
          for (int v = 0; v < kVectors; ++v) {
            const uint4 result = data[k][v] ^ make_uint4(keystream[4 * v], keystream[4 * v + 1],
                                                         keystream[4 * v + 2], keystream[4 * v + 3]);
            store_block(out + (block[k] * kBytes - base) + 16 * v, result, aligned);
            ciphertext[v] = launch.seal ? result : data[k][v];
          }
        } else {
#pragma unroll
          for (int v = 0; v < kVectors; ++v) ciphertext[v] = data[k][v];
        }
        if constexpr (kHash && !Scheme::Chains::kWholeWarp) {
          chains.absorb(scheme, k, ciphertext, block[k] == 0);
        }
      }
      if constexpr (kHash && Scheme::Chains::kWholeWarp) {
        chains.absorb(scheme, k, ciphertext, present, block[k] == 0);
      }
    }
  }
  if constexpr (kHash) {
    const Element value = chains.value(scheme);
    auto *scratch = reinterpret_cast<Element *>(reinterpret_cast<uint8_t *>(shared) + Scheme::kTableBytes);
    const Element total = reduce_block<Field, kThreads>(value, scheme.lane_factor(), scheme.warp_factor(), scratch);
    if (threadIdx.x == 0) static_cast<Element *>(launch.segment_values)[segment] = total;
  }
}

// One whole keystream block of kBytes XORed from `in` to `out`; zeros go
// out instead where `release` is false.
template <int kBytes>
__device__ __forceinline__ void xor_keystream_block(const uint32_t (&keystream)[kBytes / 4], const uint8_t *in,
                                                    uint8_t *out, bool aligned, bool release) {
#pragma unroll
  for (int v = 0; v < kBytes / 16; ++v) {
    const uint4 data = load_block(in + 16 * v, aligned);
    const uint32_t *k = keystream + 4 * v;
    store_block(out + 16 * v, release ? data ^ make_uint4(k[0], k[1], k[2], k[3]) : make_uint4(0, 0, 0, 0), aligned);
  }
}

// Keystream blocks `first` to the message's end on one thread, XORed into
// the output; zeros go out instead where `release` is false.
template <class Scheme>
__device__ void xor_keystream_serially(Scheme &scheme, const AeadMessageJob &message, uint64_t first,
                                       bool release) {
  constexpr uint64_t kBytes = Scheme::kBlockBytes;
  for (uint64_t offset = first * kBytes; offset < message.len; offset += kBytes) {
    uint32_t keystream[kBytes / 4];
    scheme.keystream(offset / kBytes, keystream);
    const uint8_t *in = message.in + (offset - message.base);
    uint8_t *out = message.out + (offset - message.base);
    if (message.len - offset >= kBytes) {
      xor_keystream_block<kBytes>(keystream, in, out, message.aligned, release);
      continue;
    }
    const auto count = static_cast<uint32_t>(message.len - offset);
    for (uint32_t i = 0; i < count; ++i) out[i] = release ? in[i] ^ byte_of(keystream, static_cast<int>(i)) : 0;
  }
}

// `len` bytes of text absorbed into `state`, 16 at a time, the last block
// zero-padded as both constructions hash it (Horner's rule).
template <class Scheme, class Element>
__device__ Element hash_text_serially(Scheme &scheme, const uint8_t *text, uint64_t len, bool aligned,
                                      Element state) {
  using Field = typename Scheme::Field;
  uint64_t at = 0;
  for (; len - at >= 16; at += 16) {
    state = scheme.times_key(Field::add(state, Field::from_block(load_block(text + at, aligned))));
  }
  if (at == len) return state;
  uint8_t last[16] = {};
  for (uint64_t i = at; i < len; ++i) last[i - at] = text[i];
  return scheme.times_key(Field::add(state, Field::from_block(load_block(last, false))));
}

// The lengths block and the tag: sealing writes it; opening compares it in
// constant time and writes the verdict. Returns whether the message is
// authentic (always, when sealing).
template <class Scheme, class Element>
__device__ bool finish_tag(Scheme &scheme, const AeadMessageJob &message, const AeadLaunch &launch, Element state) {
  state = scheme.times_key(Scheme::Field::add(state, Scheme::lengths(message.aad_len, message.len)));
  const uint4 tag = scheme.tag(state);
  const uint32_t tag_words[4] = {tag.x, tag.y, tag.z, tag.w};
  if (launch.seal) {
    for (uint32_t i = 0; i < launch.tag_len; ++i) message.tag[i] = byte_of(tag_words, static_cast<int>(i));
    return true;
  }
  uint32_t difference = 0;
  for (uint32_t i = 0; i < launch.tag_len; ++i) difference |= byte_of(tag_words, static_cast<int>(i)) ^ message.tag[i];
  *message.verified = difference == 0 ? 1 : 0;
  return difference == 0;
}

// One block per message: the segments' values combined, the last keystream
// block, the lengths block and the tag. Opening compares the tag in
// constant time and, if it does not match, zeroes the output it holds (a
// piece's caller zeroes the rest).
template <class Scheme, int kThreads, uint64_t kSegmentBlocks>
__global__ void __launch_bounds__(kThreads)
    aead_finish_kernel(const __grid_constant__ typename Scheme::Key key, const __grid_constant__ AeadLaunch launch) {
  using Field = typename Scheme::Field;
  using Element = typename Field::Element;
  constexpr int kBytes = Scheme::kBlockBytes;
  extern __shared__ uint32_t shared[];
  __shared__ bool authentic;

  const AeadMessageJob message = launch.message(blockIdx.x);
  Scheme scheme(key, message, shared);
  const uint64_t bulk = aead_bulk_blocks(message.len, kBytes);
  const uint64_t segments = (bulk + kSegmentBlocks - 1) / kSegmentBlocks;
  const Element *values = static_cast<const Element *>(launch.segment_values) + message.first_segment;

  // Thread t takes the segments whose distance from the last is kThreads - 1
  // - t plus a multiple of kThreads: the bulk kernel's split, one level up.
  Element acc{};
  bool started = false;
  for (uint64_t j = (segments + threadIdx.x) % kThreads; j < segments; j += kThreads) {
    acc = started ? Field::add(scheme.step(acc), values[j]) : values[j];
    started = true;
  }
  auto *scratch = reinterpret_cast<Element *>(reinterpret_cast<uint8_t *>(shared) + Scheme::kTableBytes);
  const Element segment_sum = reduce_block<Field, kThreads>(acc, scheme.lane_factor(), scheme.warp_factor(), scratch);

  if (threadIdx.x == 0) {
    // The bulk kernel's values leave out one factor K (every block of the
    // run is weighed from exponent 0); the AAD state enters here when there
    // was no bulk block to carry it.
    Element state = bulk != 0 ? scheme.times_key(segment_sum) : Field::load(message.initial);
    // The last keystream block's bytes: hashed as ciphertext, before they
    // are decrypted or after they are encrypted.
    const uint64_t tail = bulk * kBytes - message.base;
    const uint64_t tail_len = message.len - bulk * kBytes;
    if (!launch.seal) state = hash_text_serially(scheme, message.in + tail, tail_len, message.aligned, state);
    xor_keystream_serially(scheme, message, bulk, true);
    if (launch.seal) state = hash_text_serially(scheme, message.out + tail, tail_len, message.aligned, state);
    authentic = finish_tag(scheme, message, launch, state);
  }
  __syncthreads();
  if (!authentic) {
    for (uint64_t i = threadIdx.x; i < message.len - message.base; i += kThreads) message.out[i] = 0;
  }
}

// ---- Short messages: a keystream pass and a tag pass ----------------------

// A batch of short messages (packets, tensor shards) would leave a segment
// per message almost empty and pay a CTA's set-up for each. It runs in two
// passes instead, each CTA loading its tables once for all the messages a
// grid-stride loop hands it (messages are whole here: `base` is 0):
//  - the keystream pass cuts every message into items of
//    tuning::kAeadEachItemBytes, one per thread, consecutive threads on
//    consecutive items, as the plain keystream kernels run;
//  - the tag pass gives every message to one thread, which hashes its
//    ciphertext serially and writes the tag or, opening, the verdict; GCM
//    on GPUs with .b1 tensor cores hashes 16 messages per warp instead
//    (aead_each_gcm_tag_kernel, gcm_kernels.cuh), each thread finishing its message's tag.
// Sealing runs the keystream pass first. Opening runs the tag pass first,
// and the keystream pass then writes zeros in place of every message that
// failed, so no unauthenticated plaintext is ever written. (One thread
// doing both for its message needed a ChaCha20 block's and Poly1305's
// registers at once, 124 a thread, and left most of the SM idle; see
// The messages of a CTA's turn in the keystream pass: launch.each_items
// items each, as many messages as fill the CTA's threads.
template <int kThreads>
struct EachItemSlot {
  uint32_t messages_per_turn;
  uint32_t message;  // this thread's among them; messages_per_turn if none
  uint32_t item;

  __device__ explicit EachItemSlot(uint32_t items)
      : messages_per_turn(kThreads / items), message(threadIdx.x / items), item(threadIdx.x % items) {}
};

template <class Scheme, int kThreads, int kMinBlocksPerSm>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm)
    aead_each_keystream_kernel(const __grid_constant__ typename Scheme::Key key,
                               const __grid_constant__ AeadLaunch launch) {
  constexpr uint64_t kBytes = Scheme::kBlockBytes;
  constexpr int kBlocks = tuning::kAeadEachItemBytes / kBytes;
  extern __shared__ uint32_t shared[];
  Scheme scheme(key, shared);
  const EachItemSlot<kThreads> slot(launch.each_items);
  if (slot.message >= slot.messages_per_turn) return;  // the CTA's last few threads, when items do not divide it
  const uint64_t at = uint64_t{slot.item} * tuning::kAeadEachItemBytes;
  for (uint64_t index = uint64_t{blockIdx.x} * slot.messages_per_turn + slot.message; index < launch.message_count;
       index += uint64_t{gridDim.x} * slot.messages_per_turn) {
    const AeadMessageJob message = launch.message(static_cast<uint32_t>(index));
    if (at >= message.len) continue;
    scheme.begin_keystream(message);
    // Opening: the tag pass has run, and a message that failed gets zeros.
    const bool release = launch.seal || *message.verified == 1;
    if (message.len - at >= tuning::kAeadEachItemBytes) {  // a whole item, its blocks unrolled
#pragma unroll
      for (int b = 0; b < kBlocks; ++b) {
        uint32_t keystream[kBytes / 4];
        scheme.keystream(at / kBytes + b, keystream);
        xor_keystream_block<kBytes>(keystream, message.in + at + b * kBytes, message.out + at + b * kBytes,
                                    message.aligned, release);
      }
      continue;
    }
    xor_keystream_serially(scheme, message, at / kBytes, release);  // the message's last, short item
  }
}

template <class Scheme, int kThreads, int kMinBlocksPerSm>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm)
    aead_each_tag_kernel(const __grid_constant__ typename Scheme::Key key, const __grid_constant__ AeadLaunch launch) {
  extern __shared__ uint32_t shared[];
  Scheme scheme(key, shared);
  for (uint64_t index = uint64_t{blockIdx.x} * kThreads + threadIdx.x; index < launch.message_count;
       index += uint64_t{gridDim.x} * kThreads) {
    const AeadMessageJob message = launch.message(static_cast<uint32_t>(index));
    // The ciphertext: the keystream pass's output when sealing, the input
    // when opening.
    const uint8_t *ciphertext = launch.seal ? message.out : message.in;
    const auto state = hash_text_serially(scheme, ciphertext, message.len, message.aligned, scheme.begin(message));
    finish_tag(scheme, message, launch, state);
  }
}

}  // namespace warpcrypt::cuda
