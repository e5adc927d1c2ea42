// Keystream modes: AES-CTR, Salsa20 and ChaCha20 XOR a keystream that is a
// pure function of the block index, so any byte range of the stream can be
// computed anywhere, in place, in any order.
#pragma once

#include "backends/cuda/aes_device.cuh"
#include "backends/cuda/arx_device.cuh"
#include "backends/cuda/block_mode_kernels.cuh"
#include "backends/cuda/memory.cuh"

namespace warpcrypt::cuda {

struct KeystreamJob {
  const uint8_t *in;
  uint8_t *out;
  uint64_t position;     // stream byte of in[0]
  uint64_t len;
  uint64_t first_block;  // stream block holding `position`
  uint64_t blocks;       // stream blocks touched
  bool aligned;          // in - position and out - position are 16-byte aligned
};

// AES-CTR keystream: E(IV + block) with the IV a 128-bit big-endian counter.
// Only the last column (bytes 12-15) of a counter changes between
// neighbouring blocks, and each first-round output column reads exactly one
// byte of it. So the other three lookups of every column are computed once
// per run of counters sharing their top 96 bits and cached: the first round
// costs 4 table lookups instead of 16.
template <class Cipher, int kRounds>
struct AesCtrGenerator {
  static constexpr int kBlockBytes = 16;
  static constexpr bool kInverse = false;

  aes::RoundKeys keys;
  uint64_t iv_high;  // IV bytes 0-7 as a big-endian integer
  uint64_t iv_low;   // bytes 8-15
  AesTablesView tables;

  struct State {
    Cipher cipher;
    uint64_t cached_top = ~uint64_t{0};  // top 96 bits' low word, with a validity bit
    uint64_t cached_high = 0;
    uint4 partial{};
  };

  __device__ void prepare(State &state, uint32_t *shared) const {
    load_cipher(state.cipher, shared, tables, false);
  }

  __device__ __forceinline__ void keystream(State &state, uint64_t block, uint32_t out[4]) const {
    const uint64_t low = iv_low + block;
    const uint64_t high = iv_high + (low < iv_low ? 1 : 0);
    encrypt_counter(state, high, low, out);
  }

  // E(high || low) for any 128-bit counter value: GCM, whose counter wraps
  // at 32 bits, forms its own counters and comes in here.
  __device__ __forceinline__ void encrypt_counter(State &state, uint64_t high, uint64_t low, uint32_t out[4]) const {
    // Column words are little-endian, the counter big-endian: byte-swap.
    const uint4 counter = make_uint4(__byte_perm(static_cast<uint32_t>(high >> 32), 0, 0x0123),
                                     __byte_perm(static_cast<uint32_t>(high), 0, 0x0123),
                                     __byte_perm(static_cast<uint32_t>(low >> 32), 0, 0x0123),
                                     __byte_perm(static_cast<uint32_t>(low), 0, 0x0123));
    uint4 s;
    if constexpr (std::is_same_v<Cipher, TTableAes>) {
      const uint4 s0 = counter ^ round_key<kRounds>(keys, 0);
      const uint64_t top = low >> 32;
      if (top != state.cached_top || high != state.cached_high) {
        state.cached_top = top;
        state.cached_high = high;
        const TTableAes &c = state.cipher;
        const uint4 k1 = round_key<kRounds>(keys, 1);
        // Each column without its one lookup into column 3 (see above).
        state.partial = make_uint4(c.t0<0>(s0.x) ^ rotl8(c.t0<1>(s0.y)) ^ c.t2<2>(s0.z) ^ k1.x,
                                   c.t0<0>(s0.y) ^ rotl8(c.t0<1>(s0.z)) ^ rotl8(c.t2<3>(s0.x)) ^ k1.y,
                                   c.t0<0>(s0.z) ^ c.t2<2>(s0.x) ^ rotl8(c.t2<3>(s0.y)) ^ k1.z,
                                   rotl8(c.t0<1>(s0.x)) ^ c.t2<2>(s0.y) ^ rotl8(c.t2<3>(s0.z)) ^ k1.w);
      }
      const TTableAes &c = state.cipher;
      s = make_uint4(state.partial.x ^ rotl8(c.t2<3>(s0.w)), state.partial.y ^ c.t2<2>(s0.w),
                     state.partial.z ^ rotl8(c.t0<1>(s0.w)), state.partial.w ^ c.t0<0>(s0.w));
#pragma unroll
      for (int r = 2; r < kRounds; ++r) s = c.enc_round(s, round_key<kRounds>(keys, r));
      s = c.enc_last_round(s, round_key<kRounds>(keys, kRounds));
    } else {
      s = state.cipher.template encrypt<kRounds>(counter, keys);
    }
    out[0] = s.x;
    out[1] = s.y;
    out[2] = s.z;
    out[3] = s.w;
  }
};

template <class Block>
struct ArxGenerator {
  static constexpr int kBlockBytes = Block::kBlockBytes;
  ArxKey key;
  struct State {};
  __device__ void prepare(State &, uint32_t *) const {}
  __device__ __forceinline__ void keystream(State &, uint64_t block, uint32_t out[16]) const {
    arx_keystream<Block>(key, block, out);
  }
};

// A whole tile of blocks longer than one 16-byte access (Salsa20's and
// ChaCha20's 64 bytes). A thread computes the keystream of whole blocks, but
// a block per thread would leave each of a warp's 16-byte load and store
// instructions touching 32 pieces 64 bytes apart; here each covers 512
// contiguous bytes, and the keystream crosses from the one layout to the
// other through shared memory, a warp at a time. The data is loaded first
// so its latency hides behind the keystream work.
template <class Generator, int kThreads, int kBlocksPerThread>
__device__ __forceinline__ void xor_whole_tile_by_warps(const Generator &generator, typename Generator::State &state,
                                                        const KeystreamJob &job, uint64_t tile_start,
                                                        uint64_t tile_first_byte) {
  constexpr int kBytes = Generator::kBlockBytes;
  constexpr int kVectors = kBytes / 16;
  __shared__ uint4 exchange[kThreads * kVectors];
  const unsigned lane = threadIdx.x % 32;
  const unsigned warp_first = threadIdx.x - lane;  // the warp's first thread
  uint4 *warp_exchange = exchange + warp_first * kVectors;
  // Piece p (16 bytes) of the warp's run of 32 blocks: lane p % 32 loads and
  // stores it; it belongs to block p / kVectors, whose keystream vector
  // p % kVectors sits at warp_exchange[p].
  auto warp_bytes = [&](int k) {
    return tile_first_byte - job.position + (static_cast<uint64_t>(k) * kThreads + warp_first) * kBytes;
  };
  uint4 data[kBlocksPerThread][kVectors];
#pragma unroll
  for (int k = 0; k < kBlocksPerThread; ++k) {
#pragma unroll
    for (int j = 0; j < kVectors; ++j) data[k][j] = load_block(job.in + warp_bytes(k) + 16 * (lane + 32 * j), true);
  }
#pragma unroll
  for (int k = 0; k < kBlocksPerThread; ++k) {
    uint32_t keystream[kBytes / 4];
    generator.keystream(state, job.first_block + tile_start + static_cast<uint64_t>(k) * kThreads + threadIdx.x,
                        keystream);
    __syncwarp();  // the warp's reads of the previous run are done
#pragma unroll
    for (int v = 0; v < kVectors; ++v) {
      warp_exchange[lane * kVectors + v] =
          make_uint4(keystream[4 * v], keystream[4 * v + 1], keystream[4 * v + 2], keystream[4 * v + 3]);
    }
    __syncwarp();
#pragma unroll
    for (int j = 0; j < kVectors; ++j) {
      const unsigned piece = lane + 32 * j;
      store_block(job.out + warp_bytes(k) + 16 * piece, data[k][j] ^ warp_exchange[piece], true);
    }
  }
}

template <class Generator, int kThreads, int kBlocksPerThread>
__global__ void __launch_bounds__(kThreads)
    keystream_xor_kernel(const __grid_constant__ Generator generator, const __grid_constant__ KeystreamJob job) {
  extern __shared__ uint32_t shared[];
  constexpr int kBytes = Generator::kBlockBytes;
  typename Generator::State state;
  generator.prepare(state, shared);

  constexpr uint64_t kTileBlocks = uint64_t{kThreads} * kBlocksPerThread;
  constexpr int kVectors = kBytes / 16;  // 16-byte accesses per keystream block
  const uint64_t end = job.position + job.len;
  for (uint64_t tile_start = blockIdx.x * kTileBlocks; tile_start < job.blocks;
       tile_start += gridDim.x * kTileBlocks) {
    const uint64_t tile_first_byte = (job.first_block + tile_start) * kBytes;
    const bool whole_tile = job.aligned && tile_start + kTileBlocks <= job.blocks &&
                            tile_first_byte >= job.position && tile_first_byte + kTileBlocks * kBytes <= end;
    if constexpr (kVectors > 1) {
      if (whole_tile) {
        xor_whole_tile_by_warps<Generator, kThreads, kBlocksPerThread>(generator, state, job, tile_start,
                                                                       tile_first_byte);
        continue;
      }
    } else if (whole_tile) {
      // The common case: every block of the tile lies inside the range. The
      // data is loaded first so its latency hides behind the keystream work.
      uint4 data[kBlocksPerThread][kVectors];
#pragma unroll
      for (int k = 0; k < kBlocksPerThread; ++k) {
        const uint64_t at = tile_first_byte - job.position + (static_cast<uint64_t>(k) * kThreads + threadIdx.x) * kBytes;
#pragma unroll
        for (int v = 0; v < kVectors; ++v) data[k][v] = load_block(job.in + at + 16 * v, true);
      }
#pragma unroll
      for (int k = 0; k < kBlocksPerThread; ++k) {
        const uint64_t index = tile_start + static_cast<uint64_t>(k) * kThreads + threadIdx.x;
        uint32_t keystream[kBytes / 4];
        generator.keystream(state, job.first_block + index, keystream);
        const uint64_t at = (job.first_block + index) * kBytes - job.position;
#pragma unroll
        for (int v = 0; v < kVectors; ++v) {
          const uint4 ks = make_uint4(keystream[4 * v], keystream[4 * v + 1], keystream[4 * v + 2], keystream[4 * v + 3]);
          store_block(job.out + at + 16 * v, data[k][v] ^ ks, true);
        }
      }
      continue;
    }
    // The first or last tile of the range, or unaligned buffers: block by
    // block, byte by byte where a block is cut.
#pragma unroll 1
    for (int k = 0; k < kBlocksPerThread; ++k) {
      const uint64_t index = tile_start + static_cast<uint64_t>(k) * kThreads + threadIdx.x;
      if (index >= job.blocks) continue;
      uint32_t keystream[kBytes / 4];
      generator.keystream(state, job.first_block + index, keystream);
      const uint64_t block_start = (job.first_block + index) * kBytes;
      const uint64_t lo = max(block_start, job.position);
      const uint64_t hi = min(block_start + kBytes, end);
      for (uint64_t b = lo; b < hi; ++b) {
        job.out[b - job.position] = job.in[b - job.position] ^ byte_of(keystream, static_cast<int>(b - block_start));
      }
    }
  }
}

}  // namespace warpcrypt::cuda
