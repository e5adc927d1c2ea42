// Salsa20 and ChaCha20 block functions: the whole 16-word state lives in
// registers, rotations are single funnel shifts.
#pragma once

#include <cstdint>

#include "backends/cuda/rotate.cuh"

namespace warpcrypt::cuda {

__device__ __forceinline__ uint32_t add(uint32_t a, uint32_t b, uint32_t one) { return b * one + a; }

// The key-dependent words of a Salsa20 or ChaCha20 state, fixed per message;
// only the block counter changes from block to block.
struct ArxKey {
  // Always 1. The additions are written as b * one + a with `one` a kernel
  // parameter the compiler cannot see through, so they compile to IMAD,
  // which issues on the FMA pipe, instead of IADD on the integer pipe that
  // the XORs and rotations already saturate.
  uint32_t one;
  uint32_t key[8];    // a 16-byte Salsa20 key is stored twice, as its expansion uses it
  uint32_t constants[4];
  uint32_t nonce[2];  // Salsa20: words 6-7; ChaCha20: words 14-15
  uint64_t counter;   // block counter of stream block 0 (ChaCha20: words 12-13)
};

// Twenty rounds (ten double rounds) over the state, then the input added
// back in: the shape Salsa20 and ChaCha20 share.
template <class Block>
__device__ __forceinline__ void arx_keystream(const ArxKey &k, uint64_t block, uint32_t out[16]) {
  uint32_t in[16];
  Block::initial_state(k, k.counter + block, in);
  uint32_t x[16];
#pragma unroll
  for (int i = 0; i < 16; ++i) x[i] = in[i];
#pragma unroll
  for (int round = 0; round < 10; ++round) Block::double_round(x, k.one);
#pragma unroll
  for (int i = 0; i < 16; ++i) out[i] = add(x[i], in[i], k.one);
}

struct Salsa20Block {
  static constexpr int kBlockBytes = 64;

  // djb's layout: constants on the diagonal, key in words 1-4 and 11-14,
  // nonce in 6-7, the 64-bit counter in 8-9.
  static __device__ __forceinline__ void initial_state(const ArxKey &k, uint64_t counter, uint32_t in[16]) {
    const uint32_t state[16] = {k.constants[0], k.key[0], k.key[1], k.key[2], k.key[3], k.constants[1],
                                k.nonce[0], k.nonce[1], static_cast<uint32_t>(counter),
                                static_cast<uint32_t>(counter >> 32), k.constants[2], k.key[4], k.key[5],
                                k.key[6], k.key[7], k.constants[3]};
#pragma unroll
    for (int i = 0; i < 16; ++i) in[i] = state[i];
  }

  static __device__ __forceinline__ void double_round(uint32_t x[16], uint32_t one) {
    quarter(x[0], x[4], x[8], x[12], one);  // columns
    quarter(x[5], x[9], x[13], x[1], one);
    quarter(x[10], x[14], x[2], x[6], one);
    quarter(x[15], x[3], x[7], x[11], one);
    quarter(x[0], x[1], x[2], x[3], one);  // rows
    quarter(x[5], x[6], x[7], x[4], one);
    quarter(x[10], x[11], x[8], x[9], one);
    quarter(x[15], x[12], x[13], x[14], one);
  }

  static __device__ __forceinline__ void quarter(uint32_t &a, uint32_t &b, uint32_t &c, uint32_t &d,
                                                 uint32_t one) {
    b ^= rotl(add(a, d, one), 7);
    c ^= rotl(add(b, a, one), 9);
    d ^= rotl(add(c, b, one), 13);
    a ^= rotl(add(d, c, one), 18);
  }
};

struct ChaCha20Block {
  static constexpr int kBlockBytes = 64;

  // RFC 8439 layout; words 12 and 13 hold OpenSSL's 64-bit counter (the
  // 32-bit counter carries into the first nonce word), 14-15 the nonce.
  static __device__ __forceinline__ void initial_state(const ArxKey &k, uint64_t counter, uint32_t in[16]) {
    const uint32_t state[16] = {k.constants[0], k.constants[1], k.constants[2], k.constants[3],
                                k.key[0], k.key[1], k.key[2], k.key[3], k.key[4], k.key[5], k.key[6], k.key[7],
                                static_cast<uint32_t>(counter), static_cast<uint32_t>(counter >> 32),
                                k.nonce[0], k.nonce[1]};
#pragma unroll
    for (int i = 0; i < 16; ++i) in[i] = state[i];
  }

  static __device__ __forceinline__ void double_round(uint32_t x[16], uint32_t one) {
    quarter(x[0], x[4], x[8], x[12], one);  // columns
    quarter(x[1], x[5], x[9], x[13], one);
    quarter(x[2], x[6], x[10], x[14], one);
    quarter(x[3], x[7], x[11], x[15], one);
    quarter(x[0], x[5], x[10], x[15], one);  // diagonals
    quarter(x[1], x[6], x[11], x[12], one);
    quarter(x[2], x[7], x[8], x[13], one);
    quarter(x[3], x[4], x[9], x[14], one);
  }

  // The byte-aligned rotations are byte permutations (PRMT), which leaves
  // only half the rotations to the funnel shifter.
  static __device__ __forceinline__ void quarter(uint32_t &a, uint32_t &b, uint32_t &c, uint32_t &d,
                                                 uint32_t one) {
    a = add(a, b, one); d = rotl16(d ^ a);
    c = add(c, d, one); b = rotl(b ^ c, 12);
    a = add(a, b, one); d = rotl8(d ^ a);
    c = add(c, d, one); b = rotl(b ^ c, 7);
  }
};

}  // namespace warpcrypt::cuda
