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

// A 128-bit counter block as two big-endian halves.
struct Counter128 {
  uint64_t high;
  uint64_t low;
};

// The first two rounds shared by each group of 256 counters, those that
// differ only in byte 15, among a warp's tile (see AesCtrGenerator). Each
// field is an array of its own, so that a warp's stores of its groups and
// loads of them (at most two groups, neighbours, per load) never conflict.
struct TileGroups {
  static constexpr int kCapacity = 8;
  uint4 second_round[kCapacity];    // round 2's columns without the terms of round 1's column 0, round key 2 added
  uint32_t first_round[kCapacity];  // round 1's column 0 without its lookup of byte 15, round key 1 added
};

// AES-CTR keystream: E(IV + block) with the IV a 128-bit big-endian counter.
// Only the last column (bytes 12-15) of a counter changes between
// neighbouring blocks, and each first-round output column reads exactly one
// byte of it. So the other three lookups of every column are computed once
// per run of counters sharing their top 96 bits and cached: the first round
// costs 4 table lookups instead of 16.
//
// Kernels that walk a warp's blocks tile by tile go further (begin_tile,
// encrypt_counter_in_tile). Counters that differ only in byte 15 differ after
// round 1 only in column 0, by that byte's one lookup, and after round 2 by
// the four lookups of round 1's column 0, one in each column. The rest of
// both rounds is computed once per group of 256 counters for the warp's
// whole tile, and each block pays 5 lookups for its first two rounds
// instead of 20. (Bernstein and Schwabe cache the same rounds on CPUs, "New
// AES software speed records", 2008.) Which group a block falls in depends
// on the counter alone, which is public; the lookups stay in the
// conflict-free replicated table.
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
    const TileGroups *groups = nullptr;    // the warp's tile, in shared memory
    uint32_t groups_base = 0;              // low word of the tile's first counter, byte 15 cleared
  };

  __device__ void prepare(State &state, uint32_t *shared) const {
    load_cipher(state.cipher, shared, tables, false);
  }

  __device__ __forceinline__ Counter128 counter(uint64_t block) const {
    const uint64_t low = iv_low + block;
    return {iv_high + (low < iv_low ? 1 : 0), low};
  }

  __device__ __forceinline__ void keystream(State &state, uint64_t block, uint32_t out[4]) const {
    const Counter128 c = counter(block);
    encrypt_counter(state, c.high, c.low, out);
  }

  // E(high || low) for any 128-bit counter value: GCM, whose counter wraps
  // at 32 bits, forms its own counters and comes in here.
  __device__ __forceinline__ void encrypt_counter(State &state, uint64_t high, uint64_t low, uint32_t out[4]) const {
    uint4 s;
    if constexpr (std::is_same_v<Cipher, TTableAes>) {
      const uint4 s0 = first_round_input(high, low);
      const uint4 &partial = first_round_partial(state, high, low, s0);
      const TTableAes &c = state.cipher;
      s = make_uint4(partial.x ^ rotl8(c.t2<3>(s0.w)), partial.y ^ c.t2<2>(s0.w),
                     partial.z ^ rotl8(c.t0<1>(s0.w)), partial.w ^ c.t0<0>(s0.w));
      s = last_rounds<2>(c, s);
    } else {
      s = state.cipher.template encrypt<kRounds>(counter_words(high, low), keys);
    }
    store_words(s, out);
  }

  // Groups a warp's tile can touch: its blocks are first + k kThreads + lane
  // for k < kBlocksPerThread, spanning (kBlocksPerThread - 1) kThreads + 32
  // counters from anywhere in a group.
  template <int kThreads, int kBlocksPerThread>
  static constexpr int kTileGroups = ((kBlocksPerThread - 1) * kThreads + 31 + 255) / 256 + 1;

  // Every lane of a warp, before its tile: `counter_of(block)` gives a
  // block's Counter128 (the IV's for CTR, J0's for GCM). The byte-wise
  // cipher has nothing to cache.
  template <int kThreads, int kBlocksPerThread, class CounterOf>
  __device__ __forceinline__ void begin_tile(State &state, uint64_t first, CounterOf counter_of) const {
    if constexpr (std::is_same_v<Cipher, TTableAes>) {
      constexpr int kGroups = kTileGroups<kThreads, kBlocksPerThread>;
      static_assert(kThreads % 32 == 0 && kGroups <= TileGroups::kCapacity, "a tile too long for its groups");
      __shared__ TileGroups tile_groups[kThreads / 32];
      TileGroups &groups = tile_groups[threadIdx.x / 32];
      const unsigned lane = threadIdx.x % 32;
      __syncwarp();  // the warp is done with its previous tile's groups
      if (lane < kGroups) {
        // Adding 256 to a counter moves it to the next group, whatever its byte 15.
        const Counter128 c = counter_of(first + 256 * lane);
        write_group(state, c.high, c.low, groups, lane);
      }
      __syncwarp();
      state.groups = &groups;
      state.groups_base = static_cast<uint32_t>(counter_of(first).low) & ~0xffu;
    }
  }

  // E(counter) for a counter of the warp's tile, given its low word.
  // Differences of low words modulo 2^32 give the group: a tile spans far
  // fewer counters, and GCM's counter wraps at 32 bits.
  __device__ __forceinline__ void encrypt_counter_in_tile(const State &state, uint64_t low, uint32_t out[4]) const {
    static_assert(std::is_same_v<Cipher, TTableAes>, "only the T-table cipher caches groups");
    const uint32_t group = (static_cast<uint32_t>(low) - state.groups_base) >> 8;
    const TTableAes &c = state.cipher;
    // Round 1's column 0 looks up byte 3 of s0.w: counter byte 15, the low
    // word's byte 0, XOR round key 0's byte 15.
    const uint32_t x =
        state.groups->first_round[group] ^ rotl8(c.t2<0>(static_cast<uint32_t>(low) ^ (keys.words[3] >> 24)));
    const uint4 q = state.groups->second_round[group];
    uint4 s = make_uint4(q.x ^ c.t0<0>(x), q.y ^ rotl8(c.t2<3>(x)), q.z ^ c.t2<2>(x), q.w ^ rotl8(c.t0<1>(x)));
    store_words(last_rounds<3>(c, s), out);
  }

  // The CTR kernel's tile: groups for the T-table cipher, else as keystream.
  __device__ __forceinline__ void keystream_in_tile(State &state, uint64_t block, uint32_t out[4]) const {
    if constexpr (std::is_same_v<Cipher, TTableAes>) {
      encrypt_counter_in_tile(state, counter(block).low, out);
    } else {
      keystream(state, block, out);
    }
  }

 private:
  // Column words are little-endian, the counter big-endian: byte-swap.
  static __device__ __forceinline__ uint4 counter_words(uint64_t high, uint64_t low) {
    return make_uint4(__byte_perm(static_cast<uint32_t>(high >> 32), 0, 0x0123),
                      __byte_perm(static_cast<uint32_t>(high), 0, 0x0123),
                      __byte_perm(static_cast<uint32_t>(low >> 32), 0, 0x0123),
                      __byte_perm(static_cast<uint32_t>(low), 0, 0x0123));
  }
  static __device__ __forceinline__ void store_words(const uint4 &s, uint32_t out[4]) {
    out[0] = s.x;
    out[1] = s.y;
    out[2] = s.z;
    out[3] = s.w;
  }
  __device__ __forceinline__ uint4 first_round_input(uint64_t high, uint64_t low) const {
    return counter_words(high, low) ^ round_key<kRounds>(keys, 0);
  }

  // Round 1's columns without their lookups into column 3, with round key
  // 1, cached for the counter's top 96 bits.
  __device__ __forceinline__ const uint4 &first_round_partial(State &state, uint64_t high, uint64_t low,
                                                             const uint4 &s0) const {
    const uint64_t top = low >> 32;
    if (top != state.cached_top || high != state.cached_high) {
      state.cached_top = top;
      state.cached_high = high;
      const TTableAes &c = state.cipher;
      const uint4 k1 = round_key<kRounds>(keys, 1);
      state.partial = make_uint4(c.t0<0>(s0.x) ^ rotl8(c.t0<1>(s0.y)) ^ c.t2<2>(s0.z) ^ k1.x,
                                 c.t0<0>(s0.y) ^ rotl8(c.t0<1>(s0.z)) ^ rotl8(c.t2<3>(s0.x)) ^ k1.y,
                                 c.t0<0>(s0.z) ^ c.t2<2>(s0.x) ^ rotl8(c.t2<3>(s0.y)) ^ k1.z,
                                 rotl8(c.t0<1>(s0.x)) ^ c.t2<2>(s0.y) ^ rotl8(c.t2<3>(s0.z)) ^ k1.w);
    }
    return state.partial;
  }

  // Entry `at` of `groups`: the group of counter high || low (its byte 15 ignored).
  __device__ __forceinline__ void write_group(State &state, uint64_t high, uint64_t low, TileGroups &groups,
                                              unsigned at) const {
    const uint4 s0 = first_round_input(high, low);
    const uint4 &partial = first_round_partial(state, high, low, s0);
    const TTableAes &c = state.cipher;
    // Round 1's columns 1-3, whole: none of them reads byte 15.
    const uint32_t y = partial.y ^ c.t2<2>(s0.w);
    const uint32_t z = partial.z ^ rotl8(c.t0<1>(s0.w));
    const uint32_t w = partial.w ^ c.t0<0>(s0.w);
    // Round 2's columns (TTableAes::enc_round) without their term of column 0.
    const uint4 k2 = round_key<kRounds>(keys, 2);
    groups.second_round[at] = make_uint4(rotl8(c.t0<1>(y)) ^ c.t2<2>(z) ^ rotl8(c.t2<3>(w)) ^ k2.x,
                                         c.t0<0>(y) ^ rotl8(c.t0<1>(z)) ^ c.t2<2>(w) ^ k2.y,
                                         c.t0<0>(z) ^ rotl8(c.t0<1>(w)) ^ rotl8(c.t2<3>(y)) ^ k2.z,
                                         c.t0<0>(w) ^ c.t2<2>(y) ^ rotl8(c.t2<3>(z)) ^ k2.w);
    groups.first_round[at] = partial.x;
  }

  // Rounds kFirst to the last, from the state after round kFirst - 1.
  template <int kFirst>
  __device__ __forceinline__ uint4 last_rounds(const TTableAes &c, uint4 s) const {
#pragma unroll
    for (int r = kFirst; r < kRounds; ++r) s = c.enc_round(s, round_key<kRounds>(keys, r));
    return c.enc_last_round(s, round_key<kRounds>(keys, kRounds));
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
      generator.template begin_tile<kThreads, kBlocksPerThread>(
          state, job.first_block + tile_start + threadIdx.x / 32 * 32,
          [&](uint64_t block) { return generator.counter(block); });
#pragma unroll
      for (int k = 0; k < kBlocksPerThread; ++k) {
        const uint64_t index = tile_start + static_cast<uint64_t>(k) * kThreads + threadIdx.x;
        uint32_t keystream[kBytes / 4];
        generator.keystream_in_tile(state, job.first_block + index, keystream);
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
