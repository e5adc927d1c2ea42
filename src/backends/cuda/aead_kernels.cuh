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

// ---- GCM -----------------------------------------------------------------

// J0's counter part: GCM increments only its low 32 bits (inc32), so block
// q of the message is encrypted under high || low96 || (j0 + 1 + q mod 2^32).
struct GcmCounter {
  uint64_t high;
  uint64_t low;  // the low 32 bits cleared
  uint32_t j0;

  __device__ explicit GcmCounter(const uint32_t (&nonce)[4])
      : high(uint64_t{nonce[0]} << 32 | nonce[1]), low(uint64_t{nonce[2]} << 32), j0(nonce[3]) {}
  __device__ uint64_t block(uint64_t q) const { return low | static_cast<uint32_t>(j0 + 1 + q); }
  __device__ uint64_t pre_counter() const { return low | j0; }
};

// What GCM's chains step by. Warp chains (gf_mma_absorb; GPUs from sm_80
// on) take kGcmMmaGroups slots of a tile per step (tuning.h), so that one
// packing of the tensor cores' sums serves 32 kGcmMmaGroups blocks. Blocks a
// and b of a chain lie two apart and a slot's group kThreads on from the one
// before, so slot g of a step is weighed by [H^d ; H^(d - 2)], d = kThreads
// (kGcmMmaGroups - g). Thread chains (nibble tables; sm_75, whose tensor
// cores lack the .b1 AND): H^(kBlocksPerThread kThreads) steps each chain,
// H^kThreads joins them.
inline constexpr int kGcmMmaGroups = tuning::kAeadGhashGroupsPerStep;
struct GcmWarpSteps {
  Gf128MmaFragments group[kGcmMmaGroups];
};
struct GcmThreadSteps {
  Gf128Columns tile_step;
  Gf128Columns slot_step;
};

template <int kRounds, int kThreads, bool kTensorCores>
struct GcmBulkKey {
  AesCtrGenerator<TTableAes, kRounds> cipher;  // its IV is unused: counters come from J0
  std::conditional_t<kTensorCores, GcmWarpSteps, GcmThreadSteps> steps;
  // Over H; for warp chains scaled by H^-kThreads, the factor the last step
  // of every chain adds to what the segment's end needs.
  Ladder<GhashField, kThreads> ladder;
};

// The bulk of a GCM message, or one of its passes (`kBulkWork`): warp chains
// run in a pass of their own, the thread chains of GPUs without .b1 tensor
// cores with the keystream.
template <int kRounds, int kThreads, int kBlocksPerThread, bool kTensorCores, BulkWork kBulkWork>
struct GcmBulk {
  static constexpr BulkWork kWork = kBulkWork;
  static constexpr bool kCipher = bulk_keystream(kWork);
  static constexpr bool kHash = bulk_hash(kWork);
  static constexpr int kBlockBytes = 16;
  static constexpr int kHashBlocks = 1;
  // The AES T-table, then the chains' step: the mma fragments, or the tile
  // step's nibble tables; each where the pass needs it.
  static constexpr uint32_t kStepAt = kCipher ? TTableAes::kTableBytes / sizeof(uint32_t) : 0;
  static constexpr size_t kStepWords =
      !kHash ? 0 : kTensorCores ? sizeof(GcmWarpSteps) / sizeof(uint32_t) : size_t{kGf128TableWords};
  static constexpr size_t kTableBytes = kStepAt * sizeof(uint32_t) + kStepWords * sizeof(uint32_t);
  using Field = GhashField;
  using Key = GcmBulkKey<kRounds, kThreads, kTensorCores>;
  using Chains = std::conditional_t<kTensorCores, WarpChains<kBlocksPerThread, kGcmMmaGroups>,
                                    ThreadChains<GhashField, kBlocksPerThread>>;

  const Key *key;
  const uint32_t *step;  // in shared memory
  typename AesCtrGenerator<TTableAes, kRounds>::State state;
  GcmCounter counter;
  Gf128 initial;
  uint4 initial_block;  // the same as memory words, for warp chains

  __device__ GcmBulk(const Key &k, const AeadMessageJob &message, uint32_t *shared)
      : key(&k),
        step(shared + kStepAt),
        counter(message.nonce),
        initial(GhashField::load(message.initial)),
        initial_block(gf_to_block(initial)) {
    for (int i = threadIdx.x; i < static_cast<int>(kStepWords); i += kThreads) {
      if constexpr (kTensorCores) {
        shared[kStepAt + i] = (&k.steps.group[0].word[0][0][0])[i];
      } else {
        shared[kStepAt + i] = gf_table_word(k.steps.tile_step, i);
      }
    }
    if constexpr (kCipher) {
      key->cipher.prepare(state, shared);  // its closing barrier covers the step too
    } else {
      __syncthreads();
    }
  }
  // Before each tile: the warp's blocks are first + k kThreads + lane.
  __device__ void begin_tile(uint64_t first) {
    if constexpr (kCipher) {
      key->cipher.template begin_tile<kThreads, kBlocksPerThread>(
          state, first, [&](uint64_t q) { return Counter128{counter.high, counter.block(q)}; });
    }
  }
  __device__ void keystream(uint64_t q, uint32_t out[4]) { key->cipher.encrypt_counter_in_tile(state, counter.block(q), out); }
  // Warp chains: this lane's block (none before the message), the first
  // block carrying the AAD state; a step's arranged groups.
  __device__ uint4 warp_block(const uint4 (&text)[1], bool present, bool first) const {
    uint4 block = make_uint4(0, 0, 0, 0);
    if (present) block = text[0];
    return first ? block ^ initial_block : block;
  }
  __device__ void absorb_warp(Gf128WarpChains &chains, const uint32_t (&arranged)[kGcmMmaGroups][4]) const {
    gf_mma_absorb(chains, arranged, reinterpret_cast<const Gf128MmaFragments *>(step));
  }
  // Thread chains: the block's value, the first carrying the AAD state.
  __device__ Gf128 group(const uint4 (&text)[1], bool first) const {
    const Gf128 block = gf_from_block(text[0]);
    return first ? gf_add(block, initial) : block;
  }
  __device__ void step_each(Gf128 (&chains)[kBlocksPerThread]) const {
#pragma unroll
    for (int c = 0; c < kBlocksPerThread; ++c) chains[c] = gf_multiply(chains[c], step);
  }
  __device__ Gf128 join(const Gf128 &value) const { return gf_multiply(value, key->steps.slot_step); }
  __device__ Gf128 lane_factor() const { return key->ladder.lane[threadIdx.x % 32]; }
  __device__ Gf128 warp_factor() const { return key->ladder.warp[threadIdx.x / 32]; }
};

// SP 800-38D: [len(A)]_64 || [len(C)]_64, in bits.
__device__ inline Gf128 gcm_lengths(uint64_t aad_len, uint64_t len) {
  return {{static_cast<uint32_t>(aad_len >> 29), static_cast<uint32_t>(aad_len << 3), static_cast<uint32_t>(len >> 29),
           static_cast<uint32_t>(len << 3)}};
}

template <int kRounds, int kThreads>
struct GcmFinishKey {
  AesCtrGenerator<ReferenceAes, kRounds> cipher;  // one block per message: the byte-wise cipher will do
  Gf128 h;
  Gf128Columns stride;                  // N^kThreads, N = H^kSegmentBlocks: the segments' run step
  Ladder<GhashField, kThreads> ladder;  // over N
};

template <int kRounds, int kThreads>
struct GcmFinish {
  static constexpr int kCtaThreads = kThreads;  // the finish kernel's CTA
  static constexpr int kBlockBytes = 16;
  static constexpr size_t kTableBytes = ReferenceAes::shared_bytes(false);
  using Field = GhashField;
  using Key = GcmFinishKey<kRounds, kThreads>;

  const Key *key;
  typename AesCtrGenerator<ReferenceAes, kRounds>::State state;
  GcmCounter counter;

  __device__ GcmFinish(const Key &k, const AeadMessageJob &message, uint32_t *shared)
      : key(&k), counter(message.nonce) {
    key->cipher.prepare(state, shared);
  }
  __device__ void keystream(uint64_t q, uint32_t out[4]) { key->cipher.encrypt_counter(state, counter.high, counter.block(q), out); }
  // Few blocks per message come here: two varying factors will do.
  __device__ Gf128 times_key(const Gf128 &a) const { return gf_multiply(a, key->h); }
  __device__ Gf128 step(const Gf128 &acc) const { return gf_multiply(acc, key->stride); }
  __device__ Gf128 lane_factor() const { return key->ladder.lane[threadIdx.x % 32]; }
  __device__ Gf128 warp_factor() const { return key->ladder.warp[threadIdx.x / 32]; }
  __device__ static Gf128 lengths(uint64_t aad_len, uint64_t len) { return gcm_lengths(aad_len, len); }
  // T = E(K, J0) xor the GHASH value, as memory words.
  __device__ uint4 tag(const Gf128 &hash) {
    uint32_t mask[4];
    key->cipher.encrypt_counter(state, counter.high, counter.pre_counter(), mask);
    const uint4 y = gf_to_block(hash);
    return make_uint4(mask[0] ^ y.x, mask[1] ^ y.y, mask[2] ^ y.z, mask[3] ^ y.w);
  }
};

// ---- ChaCha20-Poly1305 ---------------------------------------------------

// The key with a message's nonce: RFC 8439 puts the 32-bit block counter in
// word 12 and the nonce in words 13-15; ArxKey's 64-bit counter spans words
// 12-13, so the first nonce word rides in its high half.
__device__ inline ArxKey chacha_message_key(const ArxKey &key, const uint32_t (&nonce)[4], uint32_t first_block) {
  ArxKey k = key;
  k.counter = uint64_t{nonce[0]} << 32 | first_block;
  k.nonce[0] = nonce[1];
  k.nonce[1] = nonce[2];
  return k;
}

// Block 0 of the keystream is the one-time Poly1305 key: r (clamped), s.
__device__ inline void poly1305_key(const ArxKey &key, const uint32_t (&nonce)[4], Poly *r, uint4 *s) {
  uint32_t block[16];
  arx_keystream<ChaCha20Block>(chacha_message_key(key, nonce, 0), 0, block);
  *r = poly_clamped_r(make_uint4(block[0], block[1], block[2], block[3]));
  *s = make_uint4(block[4], block[5], block[6], block[7]);
}

// base^exponent from powers[i] = base^(2^i).
__device__ inline Poly poly_power(const Poly *powers, uint32_t exponent) {
  Poly result = Poly1305Field::one();
  for (int i = 0; exponent != 0; ++i, exponent >>= 1) {
    if (exponent & 1) result = poly_multiply(result, powers[i]);
  }
  return result;
}

// r is per message, so so are all its powers: a block derives them once,
// thread 0 squaring into shared memory, each thread then raising its own
// factors from them. base[i] = B^(2^i) for i up to log2(kMaxExponent).
template <uint64_t kMaxExponent>
struct PolyPowers {
  static_assert((kMaxExponent & (kMaxExponent - 1)) == 0, "a power of two, reached by squarings alone");
  static constexpr int kBits = log2_exact(kMaxExponent) + 1;
  static constexpr int kMaxBit = kBits - 1;  // base[kMaxBit] = B^kMaxExponent
  Poly r;
  Poly base[kBits];

  // Thread 0 only: fills base[] from base[0].
  __device__ void square_up() {
    for (int i = 1; i < kBits; ++i) base[i] = poly_multiply(base[i - 1], base[i - 1]);
  }
  __device__ Poly power(uint64_t exponent) const { return poly_power(base, static_cast<uint32_t>(exponent)); }
};

__device__ inline Poly poly_fourth_power(const Poly &r) {
  const Poly square = poly_multiply(r, r);
  return poly_multiply(square, square);
}

// RFC 8439 2.8: le64(len(AAD)) || le64(len(ciphertext)), a full block.
__device__ inline Poly chacha_poly_lengths(uint64_t aad_len, uint64_t len) {
  return poly_from_block(make_uint4(static_cast<uint32_t>(aad_len), static_cast<uint32_t>(aad_len >> 32),
                                    static_cast<uint32_t>(len), static_cast<uint32_t>(len >> 32)),
                         1);
}

struct ChaChaPolyKey {
  ArxKey arx;  // key words and constants; nonce and counter come per message
};

// The bulk kernel's Poly1305 constants are computed once per CTA into
// shared memory. Threads hold in registers only those every block uses:
// a ChaCha20 block in flight with its data takes most of a thread's
// registers, and every register more costs the SM resident warps, which
// this latency-bound kernel needs.
template <uint64_t kMaxExponent>
struct ChaChaPolyConstants {
  PolyPowers<kMaxExponent> powers;  // of L = r^4; the tile step L^kMaxExponent is the last
  Poly r_squared;
  Poly r_cubed;
  Poly initial;  // the state after the associated data
};

template <int kThreads, int kBlocksPerThread>
struct ChaChaPolyBulk {
  static constexpr BulkWork kWork = BulkWork::both;
  static constexpr int kBlockBytes = 64;
  static constexpr int kHashBlocks = 4;
  using Constants = ChaChaPolyConstants<uint64_t{kBlocksPerThread} * kThreads>;
  using Powers = decltype(Constants::powers);
  static constexpr size_t kTableBytes = sizeof(Constants);
  using Field = Poly1305Field;
  using Key = ChaChaPolyKey;
  using Chains = FoldedChains<Poly1305Field, kBlocksPerThread>;

  ArxKey message_key;
  const Constants *constants;
  Poly r;
  Poly r_squared;
  Poly r_cubed;
  Poly tile_step;

  __device__ ChaChaPolyBulk(const Key &key, const AeadMessageJob &message, uint32_t *shared)
      : message_key(chacha_message_key(key.arx, message.nonce, 1)),
        constants(reinterpret_cast<const Constants *>(shared)) {
    if (threadIdx.x == 0) {
      auto &c = *reinterpret_cast<Constants *>(shared);
      uint4 s;
      poly1305_key(key.arx, message.nonce, &c.powers.r, &s);
      c.r_squared = poly_multiply(c.powers.r, c.powers.r);
      c.r_cubed = poly_multiply(c.r_squared, c.powers.r);
      // L = r^4: one keystream block holds four authenticator blocks.
      c.powers.base[0] = poly_multiply(c.r_cubed, c.powers.r);
      c.powers.square_up();
      c.initial = Poly1305Field::load(message.initial);
    }
    __syncthreads();
    r = constants->powers.r;
    r_squared = constants->r_squared;
    r_cubed = constants->r_cubed;
    tile_step = constants->powers.base[Powers::kMaxBit];
  }
  __device__ void begin_tile(uint64_t) const {}  // the keystream is a function of the block alone
  __device__ void keystream(uint64_t q, uint32_t out[16]) const { arx_keystream<ChaCha20Block>(message_key, q, out); }
  // The keystream block's four authenticator blocks weighed from its end,
  // m0 r^3 + m1 r^2 + m2 r + m3, summed before one reduction; the message's
  // first block carries the AAD state.
  __device__ PolyWide weighed(const uint4 (&text)[4], bool first) const {
    Poly m0 = poly_from_block(text[0], 1);
    if (first) m0 = poly_add(m0, constants->initial);
    const PolyWide high = poly_add(poly_products(m0, r_cubed), poly_products(poly_from_block(text[1], 1), r_squared));
    return poly_add(poly_add(high, poly_products(poly_from_block(text[2], 1), r)), poly_from_block(text[3], 1));
  }
  __device__ Poly group(const uint4 (&text)[4], bool first) const { return poly_reduce(weighed(text, first)); }
  __device__ Poly fold(const Poly &chain, const uint4 (&text)[4], bool first) const {
    return poly_reduce(poly_add(poly_products(chain, tile_step), weighed(text, first)));
  }
  __device__ Poly join(const Poly &value) const { return poly_multiply(value, constants->powers.power(kThreads)); }
  __device__ Poly lane_factor() const { return constants->powers.power(lane_exponent(threadIdx.x)); }
  __device__ Poly warp_factor() const { return constants->powers.power(warp_exponent<kThreads>(threadIdx.x)); }
};

template <int kThreads, uint64_t kSegmentBlocks>
struct ChaChaPolyFinish {
  static_assert((kSegmentBlocks & (kSegmentBlocks - 1)) == 0, "N comes from squarings alone");
  static constexpr int kCtaThreads = kThreads;  // the finish kernel's CTA
  static constexpr int kBlockBytes = 64;
  using Powers = PolyPowers<kThreads>;  // of N = r^(4 kSegmentBlocks)
  static constexpr size_t kTableBytes = sizeof(Powers);
  using Field = Poly1305Field;
  using Key = ChaChaPolyKey;

  ArxKey message_key;
  Poly r;
  uint4 s;
  Poly stride;  // N^kThreads
  Poly lane;
  Poly warp;

  __device__ ChaChaPolyFinish(const Key &key, const AeadMessageJob &message, uint32_t *shared)
      : message_key(chacha_message_key(key.arx, message.nonce, 1)) {
    auto &powers = *reinterpret_cast<Powers *>(shared);
    if (threadIdx.x == 0) {
      poly1305_key(key.arx, message.nonce, &powers.r, &s);
      Poly n = poly_fourth_power(powers.r);
      for (uint64_t e = 1; e < kSegmentBlocks; e *= 2) n = poly_multiply(n, n);
      powers.base[0] = n;
      powers.square_up();
    }
    __syncthreads();
    r = powers.r;
    stride = powers.power(kThreads);
    lane = powers.power(lane_exponent(threadIdx.x));
    warp = powers.power(warp_exponent<kThreads>(threadIdx.x));
  }
  __device__ void keystream(uint64_t q, uint32_t out[16]) const { arx_keystream<ChaCha20Block>(message_key, q, out); }
  __device__ Poly times_key(const Poly &a) const { return poly_multiply(a, r); }
  __device__ Poly step(const Poly &acc) const { return poly_multiply(acc, stride); }
  __device__ Poly lane_factor() const { return lane; }
  __device__ Poly warp_factor() const { return warp; }
  __device__ static Poly lengths(uint64_t aad_len, uint64_t len) { return chacha_poly_lengths(aad_len, len); }
  __device__ uint4 tag(const Poly &hash) const { return poly_tag(hash, s); }
};

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
//    (aead_each_gcm_tag_kernel), each thread finishing its message's tag.
// Sealing runs the keystream pass first. Opening runs the tag pass first,
// and the keystream pass then writes zeros in place of every message that
// failed, so no unauthenticated plaintext is ever written. (One thread
// doing both for its message needed a ChaCha20 block's and Poly1305's
// registers at once, 124 a thread, and left most of the SM idle; see
// docs/lab-notes/performance-history.md.)

// GCM's tag pass hashes on the tensor cores where the bulk does (sm_80 on):
// a warp takes 16 messages at once, one per chain (aead_each_gcm_tag_kernel),
// each step four consecutive blocks of every message in two groups of two,
// weighed [H^4 ; H^3] and [H^2 ; H]. Two groups keep the fragments at the
// nibble tables' 8 KiB, so the pass still holds three CTAs per SM beside
// the T-table the tags' E(K, J0) needs.
inline constexpr int kGcmEachGroups = 2;
struct GcmEachWarpSteps {
  Gf128MmaFragments group[kGcmEachGroups];
  GfHoleFactor h;  // the lengths block's product, once per message
};

template <int kRounds, bool kTensorCores>
struct GcmEachKey {
  AesCtrGenerator<TTableAes, kRounds> cipher;  // its IV is unused: counters come from J0
  std::conditional_t<kTensorCores, GcmEachWarpSteps, Gf128Columns> h;
};

template <int kRounds, bool kTensorCores>
struct GcmEach {
  static constexpr int kBlockBytes = 16;
  // The AES T-table, then H's nibble tables (conflict-free, see gf128) or
  // the warp steps' fragments, 8 KiB either way.
  static constexpr uint32_t kHashTableAt = TTableAes::kTableBytes / sizeof(uint32_t);
  static constexpr size_t kHashWords = kTensorCores ? sizeof(Gf128MmaFragments) * kGcmEachGroups / sizeof(uint32_t)
                                                    : size_t{kGf128TableWords};
  static_assert(kHashWords == kGf128TableWords, "the fragments take the tables' place");
  static constexpr size_t kTableBytes = TTableAes::kTableBytes + kHashWords * sizeof(uint32_t);
  using Field = GhashField;
  using Key = GcmEachKey<kRounds, kTensorCores>;

  const Key *key;
  const uint32_t *hash_table;
  typename AesCtrGenerator<TTableAes, kRounds>::State state;
  GcmCounter counter{{0, 0, 0, 0}};

  // Every thread of the CTA: loads the tables, ending with a barrier.
  __device__ GcmEach(const Key &k, uint32_t *shared) : key(&k), hash_table(shared + kHashTableAt) {
    for (int i = threadIdx.x; i < static_cast<int>(kHashWords); i += blockDim.x) {
      if constexpr (kTensorCores) {
        shared[kHashTableAt + i] = (&k.h.group[0].word[0][0][0])[i];
      } else {
        shared[kHashTableAt + i] = gf_table_word(k.h, i);
      }
    }
    key->cipher.prepare(state, shared);
  }
  __device__ const Gf128MmaFragments *fragments() const {
    return reinterpret_cast<const Gf128MmaFragments *>(hash_table);
  }
  __device__ void begin_keystream(const AeadMessageJob &message) { counter = GcmCounter(message.nonce); }
  __device__ Gf128 begin(const AeadMessageJob &message) {
    begin_keystream(message);
    return GhashField::load(message.initial);
  }
  __device__ void keystream(uint64_t q, uint32_t out[4]) { key->cipher.encrypt_counter(state, counter.high, counter.block(q), out); }
  __device__ Gf128 times_key(const Gf128 &a) const {
    if constexpr (kTensorCores) {
      return gf_multiply(a, key->h.h);
    } else {
      return gf_multiply(a, hash_table);
    }
  }
  __device__ static Gf128 lengths(uint64_t aad_len, uint64_t len) { return gcm_lengths(aad_len, len); }
  __device__ uint4 tag(const Gf128 &hash) {
    uint32_t mask[4];
    key->cipher.encrypt_counter(state, counter.high, counter.pre_counter(), mask);
    const uint4 y = gf_to_block(hash);
    return make_uint4(mask[0] ^ y.x, mask[1] ^ y.y, mask[2] ^ y.z, mask[3] ^ y.w);
  }
};

struct ChaChaPolyEach {
  static constexpr int kBlockBytes = 64;
  static constexpr size_t kTableBytes = 0;
  using Field = Poly1305Field;
  using Key = ChaChaPolyKey;

  const Key *key;
  ArxKey message_key{};
  Poly r{};
  uint4 s{};

  __device__ ChaChaPolyEach(const Key &k, uint32_t *) : key(&k) {}
  __device__ void begin_keystream(const AeadMessageJob &message) {
    message_key = chacha_message_key(key->arx, message.nonce, 1);
  }
  // The tag pass needs no keystream but block 0, the Poly1305 key.
  __device__ Poly begin(const AeadMessageJob &message) {
    poly1305_key(key->arx, message.nonce, &r, &s);
    return Poly1305Field::load(message.initial);
  }
  __device__ void keystream(uint64_t q, uint32_t out[16]) const { arx_keystream<ChaCha20Block>(message_key, q, out); }
  __device__ Poly times_key(const Poly &a) const { return poly_multiply(a, r); }
  __device__ static Poly lengths(uint64_t aad_len, uint64_t len) { return chacha_poly_lengths(aad_len, len); }
  __device__ uint4 tag(const Poly &hash) const { return poly_tag(hash, s); }
};

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

// Block `index` of `len` bytes of text, the last one zero-padded.
__device__ __forceinline__ uint4 text_block(const uint8_t *text, uint64_t len, uint64_t index, bool aligned) {
  const uint64_t at = index * 16;
  if (len - at >= 16) return load_block(text + at, aligned);
  uint8_t last[16] = {};
  for (uint64_t i = at; i < len; ++i) last[i - at] = text[i];
  return load_block(last, false);
}

// GCM's tag pass on the tensor cores (GcmEachKey): the warp's 16 messages of
// a turn end together, so a message shorter than the warp's longest starts
// with zero blocks, which add nothing to its chain while it is still zero;
// the AAD state joins the message's first block. Lane 4q + i takes message
// q + 8 (i % 2), block a of each group where i < 2, block b where i >= 2
// (gf_mma_arrange's layout), and lanes 4q and 4q + 1 end with their
// message's GHASH, which they finish as the serial pass does.
template <int kRounds, int kThreads, int kMinBlocksPerSm>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm)
    aead_each_gcm_tag_kernel(const __grid_constant__ GcmEachKey<kRounds, true> key,
                             const __grid_constant__ AeadLaunch launch) {
  constexpr uint32_t kMessagesPerWarp = 16;
  constexpr uint64_t kStepBlocks = 2 * kGcmEachGroups;
  constexpr uint64_t kWarps = kThreads / 32;
  extern __shared__ uint32_t shared[];
  GcmEach<kRounds, true> scheme(key, shared);
  const int lane = threadIdx.x % 32;
  const uint32_t chain = lane / 4 + 8 * (lane % 2);
  const int role = lane % 4 / 2;  // block a or b of each group
  for (uint64_t first = (uint64_t{blockIdx.x} * kWarps + threadIdx.x / 32) * kMessagesPerWarp;
       first < launch.message_count; first += uint64_t{gridDim.x} * kWarps * kMessagesPerWarp) {
    const bool present = first + chain < launch.message_count;
    const AeadMessageJob message = present ? launch.message(static_cast<uint32_t>(first + chain)) : AeadMessageJob{};
    // The ciphertext: the keystream pass's output when sealing, the input
    // when opening.
    const uint8_t *ciphertext = launch.seal ? message.out : message.in;
    const uint64_t blocks = (message.len + 15) / 16;
    uint32_t steps = static_cast<uint32_t>((blocks + kStepBlocks - 1) / kStepBlocks);
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) steps = max(steps, __shfl_xor_sync(0xffffffffu, steps, offset));
    const Gf128 initial = GhashField::load(message.initial);
    const uint4 initial_block = gf_to_block(initial);
    const int64_t lead = int64_t{steps} * kStepBlocks - static_cast<int64_t>(blocks);
    Gf128WarpChains chains;
    for (uint32_t step = 0; step < steps; ++step) {
      uint32_t arranged[kGcmEachGroups][4];
#pragma unroll
      for (int g = 0; g < kGcmEachGroups; ++g) {
        const int64_t index = int64_t{step} * kStepBlocks + 2 * g + role - lead;
        uint4 block = make_uint4(0, 0, 0, 0);
        if (index >= 0) block = text_block(ciphertext, message.len, static_cast<uint64_t>(index), message.aligned);
        if (index == 0) block = block ^ initial_block;
        gf_mma_arrange(block, arranged[g]);
      }
      gf_mma_absorb(chains, arranged, scheme.fragments());
    }
    const Gf128 hash = gf_mma_chain_value(chains);
    if (present && lane % 4 < 2) {
      scheme.begin(message);
      finish_tag(scheme, message, launch, blocks != 0 ? hash : initial);
    }
  }
}

// A strided batch's descriptors, written on the device for the kernels of
// long messages, which find a segment's message among them.
__global__ void describe_strided_kernel(const __grid_constant__ StridedBatch batch, AeadMessageJob *jobs) {
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < batch.count;
       i += uint64_t{gridDim.x} * blockDim.x) {
    jobs[i] = batch.message(i);
  }
}

}  // namespace warpcrypt::cuda
