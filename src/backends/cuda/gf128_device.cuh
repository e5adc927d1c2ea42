// GF(2^128) as GCM defines it (SP 800-38D section 6.3), for GHASH on the
// device and for the host code that prepares its constants. Three ways to
// multiply, by what varies: two varying factors bit by bit; a constant
// through its precomputed columns (conditional XORs, no memory lookups);
// and, for the one product per block the kernels' speed rests on, a
// constant through nibble tables in shared memory. None of them takes a
// time that depends on the data or the key.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

namespace warpcrypt::cuda {

// An element as four 32-bit words: word 0 holds block bytes 0-3 read
// big-endian, so its most significant bit is the coefficient of x^0 and the
// least significant bit of word 3 that of x^127.
struct Gf128 {
  uint32_t w[4];
};

__host__ __device__ __forceinline__ uint32_t byte_swap32(uint32_t x) {
#ifdef __CUDA_ARCH__
  return __byte_perm(x, 0, 0x0123);
#else
  return __builtin_bswap32(x);
#endif
}

__host__ __device__ __forceinline__ Gf128 gf_add(const Gf128 &a, const Gf128 &b) {
  return {{a.w[0] ^ b.w[0], a.w[1] ^ b.w[1], a.w[2] ^ b.w[2], a.w[3] ^ b.w[3]}};
}

// A 16-byte block as loaded from memory (four little-endian words).
__host__ __device__ __forceinline__ Gf128 gf_from_block(uint4 block) {
  return {{byte_swap32(block.x), byte_swap32(block.y), byte_swap32(block.z), byte_swap32(block.w)}};
}
__host__ __device__ __forceinline__ uint4 gf_to_block(const Gf128 &a) {
  return make_uint4(byte_swap32(a.w[0]), byte_swap32(a.w[1]), byte_swap32(a.w[2]), byte_swap32(a.w[3]));
}

// v·x: one step right, and the x^128 that falls out folded back in as
// x^7 + x^2 + x + 1 (the 0xE1 of the specification).
__host__ __device__ __forceinline__ Gf128 gf_times_x(const Gf128 &v) {
  const uint32_t overflow = 0u - (v.w[3] & 1u);
  return {{(v.w[0] >> 1) ^ (overflow & 0xE1000000u), (v.w[1] >> 1) | (v.w[0] << 31), (v.w[2] >> 1) | (v.w[1] << 31),
           (v.w[3] >> 1) | (v.w[2] << 31)}};
}

// a·b for two varying operands: algorithm 1 of the specification, b times
// x once per bit of a, from x^0 (the top bit of word 0) on.
__host__ __device__ inline Gf128 gf_multiply(const Gf128 &a, Gf128 b) {
  Gf128 product{};
#pragma unroll
  for (int word = 0; word < 4; ++word) {
    for (int bit = 31; bit >= 0; --bit) {
      const uint32_t mask = 0u - ((a.w[word] >> bit) & 1u);
#pragma unroll
      for (int k = 0; k < 4; ++k) product.w[k] ^= mask & b.w[k];
      b = gf_times_x(b);
    }
  }
  return product;
}

// A constant factor k given as its 128 columns, column i = k·x^i, so that a
// product is the XOR of the columns a selects. Precomputed once per key;
// kernels take it as a parameter, so the columns come from the constant
// bank, the same for every thread.
struct Gf128Columns {
  Gf128 column[128];
};

__host__ __device__ inline Gf128Columns gf_columns(Gf128 k) {
  Gf128Columns columns{};
  for (int i = 0; i < 128; ++i) {
    columns.column[i] = k;
    k = gf_times_x(k);
  }
  return columns;
}

// All-ones when bit 8 * byte + 7 of `word` is set. On the device one byte
// permutation does it: a selector nibble of 8 + byte replicates that byte's
// top bit over the result byte.
__host__ __device__ __forceinline__ uint32_t byte_top_bit_mask(uint32_t word, uint32_t byte) {
#ifdef __CUDA_ARCH__
  uint32_t mask;
  asm("prmt.b32 %0, %1, 0, %2;" : "=r"(mask) : "r"(word), "r"(0x8888u | byte * 0x1111u));
  return mask;
#else
  return 0u - ((word >> (8 * byte + 7)) & 1u);
#endif
}

// a·k: for each coefficient of a, a mask from shifting its word so the bit
// tops a byte (one shift serves four bits) and one byte permutation; then
// four masked XORs, one per word of the column.
__host__ __device__ __forceinline__ Gf128 gf_multiply(const Gf128 &a, const Gf128Columns &k) {
  Gf128 product{};
#pragma unroll
  for (int word = 0; word < 4; ++word) {
#pragma unroll
    for (int shift = 0; shift < 8; ++shift) {
      const uint32_t shifted = a.w[word] << shift;
#pragma unroll
      for (int byte = 3; byte >= 0; --byte) {
        // Bit 8 byte + 7 - shift of the word, counted from its least
        // significant bit, is coefficient 32 word + 31 - that.
        const Gf128 &column = k.column[32 * word + 24 - 8 * byte + shift];
        const uint32_t mask = byte_top_bit_mask(shifted, byte);
#pragma unroll
        for (int w = 0; w < 4; ++w) product.w[w] ^= mask & column.w[w];
      }
    }
  }
  return product;
}

// A constant factor k as nibble tables: for each of the 32 nibbles of the
// other factor (nibble p covers coefficients 4p .. 4p + 3), the 16 products
// n·k, stored word by word: word w of entry n of nibble p is at
// 64 p + 16 w + n. A product is then 32 lookups per word and their XOR.
//
// The kernels keep the table in shared memory, where a lookup reads a
// different bank for each of the 16 entries, so a warp's 32 lookups never
// conflict whatever the data: the time taken does not depend on it. Per
// block this costs 128 shared-memory reads and about 130 integer operations,
// against about 650 integer operations for the columns above; the AES rounds
// leave the shared-memory pipe the spare room.
inline constexpr int kGf128TableWords = 32 * 4 * 16;

__host__ __device__ inline uint32_t gf_table_word(const Gf128Columns &k, int index) {
  const int nibble = index / 64;
  const int word = index / 16 % 4;
  const int entry = index % 16;
  uint32_t value = 0;
  for (int bit = 0; bit < 4; ++bit) {
    // The entry's top bit stands for coefficient 4 nibble.
    if (entry & (8 >> bit)) value ^= k.column[4 * nibble + bit].w[word];
  }
  return value;
}

__host__ __device__ __forceinline__ Gf128 gf_multiply(const Gf128 &a, const uint32_t *table) {
  Gf128 product{};
#pragma unroll
  for (int nibble = 0; nibble < 32; ++nibble) {
    const uint32_t entry = (a.w[nibble / 8] >> (28 - 4 * (nibble % 8))) & 0xf;
    const uint32_t *words = table + 64 * nibble + entry;
#pragma unroll
    for (int w = 0; w < 4; ++w) product.w[w] ^= words[16 * w];
  }
  return product;
}

}  // namespace warpcrypt::cuda
