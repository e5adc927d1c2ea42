// GF(2^128) as GCM defines it (SP 800-38D section 6.3), for GHASH on the
// device and for the host code that prepares its constants. Four ways to
// multiply, by what varies: two varying factors by integer multiplies with
// holes; a constant through its precomputed columns (conditional XORs, no
// memory lookups); a constant through nibble tables in shared memory (the
// tag pass of short messages, and the bulk kernel before sm_80); and, for
// the bulk kernel's product per block, which
// its speed rests on, a constant as a bit matrix on the binary tensor
// cores, a warp at a time. None of them takes a time that depends on the
// data or the key.
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

// ---- Carry-less multiplication with integer multiplies ----------------
//
// For two varying factors (reduce_block's weights, the finish kernel): an
// integer product of operands masked to every fourth bit sums at most 8
// terms into each kept bit, below the next kept bit, so the kept bits of
// such products, XORed, are the carry-less product's (BearSSL's
// ghash_ctmul idea). 32 x 32 -> 64 bits takes 16 multiplies; two levels of
// Karatsuba make 128 x 128 nine of those. Integer multiplies take a fixed
// time, on the GPU and on x86-64 alike. ghash_bench.cu measured this way
// against the nibble tables and the tensor cores for the bulk product.
//
// The operands are in normal form: bit i of word w is the coefficient of
// x^(32 w + i), the bit-reversed words of a Gf128.

__host__ __device__ __forceinline__ uint32_t bit_reverse32(uint32_t x) {
#ifdef __CUDA_ARCH__
  return __brev(x);
#else
  x = (x >> 16) | (x << 16);
  x = ((x >> 8) & 0x00ff00ffu) | ((x & 0x00ff00ffu) << 8);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  return ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
#endif
}

// A factor as clmul32 wants it: its nine Karatsuba limbs (the four normal
// words and their sums), each masked to the four classes of bit position
// mod 4.
struct GfHoleFactor {
  uint32_t limb[9][4];
};

__host__ __device__ __forceinline__ GfHoleFactor gf_hole_factor(const Gf128 &k) {
  uint32_t n[4];
#pragma unroll
  for (int w = 0; w < 4; ++w) n[w] = bit_reverse32(k.w[w]);
  const uint32_t limbs[9] = {n[0], n[1], n[0] ^ n[1], n[2], n[3], n[2] ^ n[3], n[0] ^ n[2], n[1] ^ n[3],
                             n[0] ^ n[1] ^ n[2] ^ n[3]};
  GfHoleFactor f;
#pragma unroll
  for (int i = 0; i < 9; ++i) {
#pragma unroll
    for (int c = 0; c < 4; ++c) f.limb[i][c] = limbs[i] & (0x11111111u << c);
  }
  return f;
}

// x * y without carries, 32 x 32 -> 64 bits, y given by its classes.
__host__ __device__ __forceinline__ uint64_t clmul32(uint32_t x, const uint32_t (&y)[4]) {
  const uint32_t m = 0x11111111u;
  const uint64_t x0 = x & m, x1 = x & (m << 1), x2 = x & (m << 2), x3 = x & (m << 3);
  const uint64_t z0 = (x0 * y[0]) ^ (x1 * y[3]) ^ (x2 * y[2]) ^ (x3 * y[1]);
  const uint64_t z1 = (x0 * y[1]) ^ (x1 * y[0]) ^ (x2 * y[3]) ^ (x3 * y[2]);
  const uint64_t z2 = (x0 * y[2]) ^ (x1 * y[1]) ^ (x2 * y[0]) ^ (x3 * y[3]);
  const uint64_t z3 = (x0 * y[3]) ^ (x1 * y[2]) ^ (x2 * y[1]) ^ (x3 * y[0]);
  const uint64_t k = 0x1111111111111111ull;
  return (z0 & k) | (z1 & (k << 1)) | (z2 & (k << 2)) | (z3 & (k << 3));
}

// (a1 X + a0)(b1 X + b0), X = 2^32, from three products: lo, hi, and the
// middle term (a0 + a1)(b0 + b1) - lo - hi.
__host__ __device__ __forceinline__ void clmul64(uint32_t a0, uint32_t a1, const uint32_t (&b0)[4],
                                                 const uint32_t (&b1)[4], const uint32_t (&b01)[4], uint64_t &lo,
                                                 uint64_t &hi) {
  const uint64_t low = clmul32(a0, b0);
  const uint64_t high = clmul32(a1, b1);
  const uint64_t mid = clmul32(a0 ^ a1, b01) ^ low ^ high;
  lo = low ^ (mid << 32);
  hi = high ^ (mid >> 32);
}

// The 255-bit product p3:p2:p1:p0 of two normal-form elements reduced by
// x^128 + x^7 + x^2 + x + 1, as a Gf128: p3:p2 times x^128 = x^7 + x^2 +
// x + 1, and what that pushes past x^127 once more.
__host__ __device__ __forceinline__ Gf128 gf_reduce(uint64_t p0, uint64_t p1, uint64_t p2, uint64_t p3) {
  const uint64_t over = (p3 >> 63) ^ (p3 >> 62) ^ (p3 >> 57);
  const uint64_t r0 = p0 ^ p2 ^ (p2 << 1) ^ (p2 << 2) ^ (p2 << 7) ^ over ^ (over << 1) ^ (over << 2) ^ (over << 7);
  const uint64_t r1 = p1 ^ p3 ^ (p3 << 1 | p2 >> 63) ^ (p3 << 2 | p2 >> 62) ^ (p3 << 7 | p2 >> 57);
  return {{bit_reverse32(static_cast<uint32_t>(r0)), bit_reverse32(static_cast<uint32_t>(r0 >> 32)),
           bit_reverse32(static_cast<uint32_t>(r1)), bit_reverse32(static_cast<uint32_t>(r1 >> 32))}};
}

// a·k.
__host__ __device__ __forceinline__ Gf128 gf_multiply(const Gf128 &a, const GfHoleFactor &k) {
  uint32_t n[4];
#pragma unroll
  for (int w = 0; w < 4; ++w) n[w] = bit_reverse32(a.w[w]);
  uint64_t low0, low1, high0, high1, mid0, mid1;
  clmul64(n[0], n[1], k.limb[0], k.limb[1], k.limb[2], low0, low1);
  clmul64(n[2], n[3], k.limb[3], k.limb[4], k.limb[5], high0, high1);
  clmul64(n[0] ^ n[2], n[1] ^ n[3], k.limb[6], k.limb[7], k.limb[8], mid0, mid1);
  mid0 ^= low0 ^ high0;
  mid1 ^= low1 ^ high1;
  return gf_reduce(low0, low1 ^ mid0, high0 ^ mid1, high1);
}

// a·a: squaring is linear over GF(2), each bit i of the normal form moving
// to bit 2i, then the reduction.
__host__ __device__ __forceinline__ Gf128 gf_square(const Gf128 &a) {
  auto spread = [](uint32_t word) {
    uint64_t x = word;
    x = (x | x << 16) & 0x0000ffff0000ffffull;
    x = (x | x << 8) & 0x00ff00ff00ff00ffull;
    x = (x | x << 4) & 0x0f0f0f0f0f0f0f0full;
    x = (x | x << 2) & 0x3333333333333333ull;
    return (x | x << 1) & 0x5555555555555555ull;
  };
  return gf_reduce(spread(bit_reverse32(a.w[0])), spread(bit_reverse32(a.w[1])), spread(bit_reverse32(a.w[2])),
                   spread(bit_reverse32(a.w[3])));
}

// a·b for two varying operands.
__host__ __device__ __forceinline__ Gf128 gf_multiply(const Gf128 &a, const Gf128 &b) {
  return gf_multiply(a, gf_hole_factor(b));
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

// k^-1 = k^(2^128 - 2) = (k^(2^127 - 1))^2, and 0 for 0, by Itoh and
// Tsujii's addition chain: b_n = k^(2^n - 1) from b_2n = b_n^(2^n) b_n and
// b_(n+1) = b_n^2 k, through n = 1, 2, 3, 6, 7, 14, 15, 30, 31, 62, 63, 126,
// 127: 12 products and 127 squarings.
__host__ inline Gf128 gf_inverse(const Gf128 &k) {
  Gf128 b = k;
  int n = 1;
  for (int target : {2, 3, 6, 7, 14, 15, 30, 31, 62, 63, 126, 127}) {
    if (target == 2 * n) {
      Gf128 raised = b;
      for (int i = 0; i < n; ++i) raised = gf_square(raised);
      b = gf_multiply(raised, b);
    } else {
      b = gf_multiply(gf_square(b), k);
    }
    n = target;
  }
  return gf_square(b);
}

// ---- A constant factor on the binary tensor cores -------------------------
//
// Multiplying by a constant is linear over GF(2): a 128 x 128 bit matrix,
// and a row of bits times a column of bits, summed mod 2, is the parity of
// POPC(AND) -- what mma.m16n8k256 with .b1 operands computes, 16 x 8 such
// sums at once, on a pipe the T-table AES leaves idle (ghash_bench.cu
// measured this against the nibble tables and against integer multiplies).
//
// A warp keeps 16 chains of Horner's rule. A group is the warp's 32 blocks,
// one per lane, as the kernels hold them: lane 4q + i holds block 4q + i,
// chain q takes blocks 4q (its a) and 4q + 2 (its b) of every group, chain
// q + 8 blocks 4q + 1 and 4q + 3. A step takes kGroups groups:
//
//   state' = (state + a_0) F_0 + b_0 G_0 + a_1 F_1 + b_1 G_1 + ...
//
// Each group g is one product of the 16 x 256 bit rows [a_g | b_g] (the
// state added to a_0) with the 256 x 128 bit matrix [M(F_g) ; M(G_g)],
// taken 8 result bits per mma over 16 mmas, the groups' sums accumulating
// in the mma's integer accumulators: only their parity matters, so one pass
// of packing serves all the groups, and packing is what the integer pipe
// pays for the whole step.
//
// The quad of lanes 4q .. 4q + 3 holds exactly its two chains' blocks; a
// transpose within the quad (gf_mma_arrange) puts word i of each in lane
// 4q + i, where the fragment layout wants it. Lane 4q + i keeps word i of
// both chains' states (`low` for chain q, `high` for chain q + 8), and the
// result columns are ordered so that the two sums a lane receives from each
// mma are the next two bits of those words: no lane waits on another
// between steps.
//
// Words are in the raw basis throughout, bit b of word w of a block as
// loaded (four little-endian words) being basis bit 32 w + b: the data
// enters without byte swaps, and gf_from_block converts a chain's value.
inline constexpr int kGf128MmaCount = 16;  // mmas per group, 8 result bits each

// B fragments of one group's [M(F) ; M(G)]: lane (q, i) of mma m holds, for
// result column q, rows 32 i .. 32 i + 31 of M(F) in word 0 and of M(G) in
// word 1 (bit j for row 32 i + j). Column n of mma m is result bit
// 32 (n / 2) + 2 m + n % 2.
struct Gf128MmaFragments {
  uint32_t word[kGf128MmaCount][32][2];
};

// The raw-basis images of the 128 basis vectors under multiplication by k.
// Raw bit b of word w is, after gf_from_block's byte swap, the coefficient
// of x^(32 w + 7 + 8 (b / 8) - b % 8), whose image is that column of k.
__host__ inline void gf_raw_images(const Gf128 &k, uint4 (&images)[128]) {
  const Gf128Columns columns = gf_columns(k);
  for (int bit = 0; bit < 128; ++bit) {
    const int b = bit % 32;
    images[bit] = gf_to_block(columns.column[bit / 32 * 32 + 7 + 8 * (b / 8) - b % 8]);
  }
}

// A 32 x 32 bit matrix transposed in place: bit j of word i trades places
// with bit i of word j (the halves, then quarters, ... swapped as blocks).
__host__ inline void transpose_bits32(uint32_t (&rows)[32]) {
  uint32_t mask = 0x0000ffffu;
  for (int width = 16; width != 0; width >>= 1, mask ^= mask << width) {
    for (int k = 0; k < 32; k = (k + width + 1) & ~width) {
      const uint32_t t = ((rows[k] >> width) ^ rows[k + width]) & mask;
      rows[k] ^= t << width;
      rows[k + width] ^= t;
    }
  }
}

__host__ inline Gf128MmaFragments gf_mma_fragments(const Gf128 &f, const Gf128 &g) {
  uint4 images[2][128];
  gf_raw_images(f, images[0]);
  gf_raw_images(g, images[1]);
  Gf128MmaFragments fragments;
  for (int half = 0; half < 2; ++half) {
    for (int quarter = 0; quarter < 4; ++quarter) {  // rows 32 quarter .. + 31: lanes with lane % 4 == quarter
      for (int word = 0; word < 4; ++word) {  // result bits 32 word .. 32 word + 31
        uint32_t bits[32];
        for (int j = 0; j < 32; ++j) {
          const uint4 &image = images[half][32 * quarter + j];
          bits[j] = word == 0 ? image.x : word == 1 ? image.y : word == 2 ? image.z : image.w;
        }
        transpose_bits32(bits);  // bits[b]: bit j is result bit 32 word + b of row 32 quarter + j
        // Result bit 32 (n / 2) + 2 m + n % 2 is column n of mma m.
        for (int b = 0; b < 32; ++b) fragments.word[b / 2][4 * (2 * word + b % 2) + quarter][half] = bits[b];
      }
    }
  }
  return fragments;
}

// A warp's 16 chains: this lane's word of chain lane / 4 and of chain
// lane / 4 + 8.
struct Gf128WarpChains {
  uint32_t low = 0;
  uint32_t high = 0;
};

// One step of the 4 x 4 transpose within a quad of lanes: with the lane
// kLaneBit apart, trades the two words whose index bit kWordBit differs
// from this lane's bit kLaneBit.
template <int kLaneBit, int kWordBit>
__device__ __forceinline__ void quad_transpose_step(uint32_t (&v)[4]) {
  constexpr int kOther = 3 ^ kWordBit;
  const bool upper = (threadIdx.x & kLaneBit) != 0;
  const uint32_t got0 = __shfl_xor_sync(0xffffffffu, upper ? v[0] : v[kWordBit], kLaneBit);
  const uint32_t got1 = __shfl_xor_sync(0xffffffffu, upper ? v[kOther] : v[3], kLaneBit);
  if (upper) {
    v[0] = got0;
    v[kOther] = got1;
  } else {
    v[kWordBit] = got0;
    v[3] = got1;
  }
}

// Every lane of the warp, converged: this lane's block of a group (zeros
// add nothing), arranged for gf_mma_absorb: word j of the result is word
// (lane % 4) of the quad's block j.
__device__ __forceinline__ void gf_mma_arrange(uint4 block, uint32_t (&arranged)[4]) {
  arranged[0] = block.x;
  arranged[1] = block.y;
  arranged[2] = block.z;
  arranged[3] = block.w;
  quad_transpose_step<2, 2>(arranged);
  quad_transpose_step<1, 1>(arranged);
}

// Every lane of the warp, converged: one step over kGroups arranged groups,
// group g multiplied through fragments[g] (in shared memory).
template <int kGroups>
__device__ __forceinline__ void gf_mma_absorb(Gf128WarpChains &chains, const uint32_t (&arranged)[kGroups][4],
                                              const Gf128MmaFragments *fragments) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const int lane = threadIdx.x % 32;
  uint32_t low = 0, high = 0;
#pragma unroll
  for (int m = 0; m < kGf128MmaCount; ++m) {
    uint32_t d0 = 0, d1 = 0, d2 = 0, d3 = 0;
#pragma unroll
    for (int g = 0; g < kGroups; ++g) {
      const uint32_t a0 = g == 0 ? chains.low ^ arranged[0][0] : arranged[g][0];
      const uint32_t a1 = g == 0 ? chains.high ^ arranged[0][1] : arranged[g][1];
      const uint2 b = *reinterpret_cast<const uint2 *>(fragments[g].word[m][lane]);
      asm("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
          "{%0,%1,%2,%3};"
          : "+r"(d0), "+r"(d1), "+r"(d2), "+r"(d3)
          : "r"(a0), "r"(a1), "r"(arranged[g][2]), "r"(arranged[g][3]), "r"(b.x), "r"(b.y));
    }
    low |= (d0 & 1u) << (2 * m) | (d1 & 1u) << (2 * m + 1);
    high |= (d2 & 1u) << (2 * m) | (d3 & 1u) << (2 * m + 1);
  }
  chains.low = low;
  chains.high = high;
#else
  // The tensor-core GHASH needs sm_80 or later; the kernels take it only
  // where the device has it (DeviceContext::binary_tensor_cores).
  __trap();
#endif
}

// Every lane of the warp, converged: chain q's value in lane 4q, chain
// q + 8's in lane 4q + 1 (the lanes that held their first blocks), zero in
// the others.
__device__ __forceinline__ Gf128 gf_mma_chain_value(const Gf128WarpChains &chains) {
  const int lane = threadIdx.x % 32;
  uint32_t words[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const uint32_t low = __shfl_sync(0xffffffffu, chains.low, lane / 4 * 4 + i);
    const uint32_t high = __shfl_sync(0xffffffffu, chains.high, lane / 4 * 4 + i);
    words[i] = lane % 4 == 0 ? low : lane % 4 == 1 ? high : 0;
  }
  return gf_from_block(make_uint4(words[0], words[1], words[2], words[3]));
}

}  // namespace warpcrypt::cuda
