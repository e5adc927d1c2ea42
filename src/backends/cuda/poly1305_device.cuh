// Arithmetic modulo p = 2^130 - 5 for Poly1305 (RFC 8439 section 2.5), on
// the device and in the host code that prepares a message. Five 26-bit
// limbs, as in the 32-bit poly1305-donna: limb products fit 64 bits with
// room for the sums, and every product is a handful of wide multiply-adds.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

namespace warpcrypt::cuda {

// value = sum limb[i] * 2^(26 i). "Carried" means every limb below 2^26
// except limb 1, which may exceed it by a few bits (the last carry of a
// product lands there); sums of two carried values stay usable as the left
// factor of a product.
struct Poly {
  uint32_t limb[5];
};

inline constexpr uint32_t kPolyLimbMask = (1u << 26) - 1;

__host__ __device__ __forceinline__ Poly poly_add(const Poly &a, const Poly &b) {
  return {{a.limb[0] + b.limb[0], a.limb[1] + b.limb[1], a.limb[2] + b.limb[2], a.limb[3] + b.limb[3],
           a.limb[4] + b.limb[4]}};
}

// Propagates carries so every limb is 26 bits again (limb 1 a little more);
// what leaves limb 4 is worth 5 at limb 0, as 2^130 = 5 (mod p). Limbs may
// hold up to 2^31 on entry, the sum of 32 carried values.
__host__ __device__ __forceinline__ Poly poly_carry(Poly a) {
  uint32_t c = a.limb[0] >> 26;
  a.limb[0] &= kPolyLimbMask;
  for (int i = 1; i < 5; ++i) {
    a.limb[i] += c;
    c = a.limb[i] >> 26;
    a.limb[i] &= kPolyLimbMask;
  }
  a.limb[0] += c * 5;
  a.limb[1] += a.limb[0] >> 26;
  a.limb[0] &= kPolyLimbMask;
  return a;
}

// A 16-byte block (four little-endian words, as loaded from memory) plus
// high_bit * 2^128: Poly1305 appends a 1 byte to every full block.
__host__ __device__ __forceinline__ Poly poly_from_block(uint4 block, uint32_t high_bit) {
  return {{block.x & kPolyLimbMask, ((block.x >> 26) | (block.y << 6)) & kPolyLimbMask,
           ((block.y >> 20) | (block.z << 12)) & kPolyLimbMask, ((block.z >> 14) | (block.w << 18)) & kPolyLimbMask,
           (block.w >> 8) | (high_bit << 24)}};
}

// A product before its reduction: limb i of the sum is d[i], still worth
// 2^(26 i), in 64 bits. Products of a carried factor and a sum of two carried
// values stay below 2^58, so four of them and a block can be summed here and
// reduced once (Poly1305's delayed reduction): the carries of a reduction
// cost as much as the multiplications.
struct PolyWide {
  uint64_t d[5];
};

// a·b, unreduced. `b` must be carried; `a` may be the sum of two carried
// values.
__host__ __device__ __forceinline__ PolyWide poly_products(const Poly &a, const Poly &b) {
  const uint64_t a0 = a.limb[0], a1 = a.limb[1], a2 = a.limb[2], a3 = a.limb[3], a4 = a.limb[4];
  const uint32_t b0 = b.limb[0], b1 = b.limb[1], b2 = b.limb[2], b3 = b.limb[3], b4 = b.limb[4];
  // Limb i of b at limb j of a lands at 2^(26 (i + j)); from i + j = 5 on
  // that is 2^130 * 2^(26 (i + j - 5)) = 5 * 2^(26 (i + j - 5)). Five times
  // a carried limb still fits 32 bits; kept there, every product is one
  // 32 x 32 -> 64-bit multiply (as 64-bit values the compiler cannot see
  // that their high words are zero and multiplies those too).
  const uint32_t s1 = b1 * 5, s2 = b2 * 5, s3 = b3 * 5, s4 = b4 * 5;
  return {{a0 * b0 + a1 * s4 + a2 * s3 + a3 * s2 + a4 * s1, a0 * b1 + a1 * b0 + a2 * s4 + a3 * s3 + a4 * s2,
           a0 * b2 + a1 * b1 + a2 * b0 + a3 * s4 + a4 * s3, a0 * b3 + a1 * b2 + a2 * b1 + a3 * b0 + a4 * s4,
           a0 * b4 + a1 * b3 + a2 * b2 + a3 * b1 + a4 * b0}};
}

__host__ __device__ __forceinline__ PolyWide poly_add(const PolyWide &x, const PolyWide &y) {
  return {{x.d[0] + y.d[0], x.d[1] + y.d[1], x.d[2] + y.d[2], x.d[3] + y.d[3], x.d[4] + y.d[4]}};
}

__host__ __device__ __forceinline__ PolyWide poly_add(const PolyWide &x, const Poly &y) {
  return {{x.d[0] + y.limb[0], x.d[1] + y.limb[1], x.d[2] + y.limb[2], x.d[3] + y.limb[3], x.d[4] + y.limb[4]}};
}

// Back to carried limbs; every d[i] below 2^60.
__host__ __device__ __forceinline__ Poly poly_reduce(PolyWide w) {
  uint64_t d0 = w.d[0], d1 = w.d[1], d2 = w.d[2], d3 = w.d[3], d4 = w.d[4];
  Poly r;
  d1 += d0 >> 26;
  r.limb[0] = static_cast<uint32_t>(d0) & kPolyLimbMask;
  d2 += d1 >> 26;
  r.limb[1] = static_cast<uint32_t>(d1) & kPolyLimbMask;
  d3 += d2 >> 26;
  r.limb[2] = static_cast<uint32_t>(d2) & kPolyLimbMask;
  d4 += d3 >> 26;
  r.limb[3] = static_cast<uint32_t>(d3) & kPolyLimbMask;
  const uint64_t top = d4 >> 26;
  r.limb[4] = static_cast<uint32_t>(d4) & kPolyLimbMask;
  const uint64_t low = r.limb[0] + top * 5;
  r.limb[0] = static_cast<uint32_t>(low) & kPolyLimbMask;
  r.limb[1] += static_cast<uint32_t>(low >> 26);
  return r;
}

// a·b mod p, carried. `b` must be carried; `a` may be the sum of two carried
// values.
__host__ __device__ __forceinline__ Poly poly_multiply(const Poly &a, const Poly &b) {
  return poly_reduce(poly_products(a, b));
}

// The 16 key bytes r with the bits RFC 8439 clears ("clamping").
__host__ __device__ __forceinline__ Poly poly_clamped_r(uint4 bytes) {
  return poly_from_block(make_uint4(bytes.x & 0x0fffffffu, bytes.y & 0x0ffffffcu, bytes.z & 0x0ffffffcu,
                                    bytes.w & 0x0ffffffcu),
                         0);
}

// (h mod p + s) mod 2^128 as four little-endian words: the tag.
__host__ __device__ inline uint4 poly_tag(const Poly &h, uint4 s) {
  const Poly c = poly_carry(h);
  // The exact integer, 131 bits at most: words 0-3, then bits 128 and up.
  uint32_t w[5];
  uint64_t acc = c.limb[0] + (uint64_t{c.limb[1]} << 26);
  w[0] = static_cast<uint32_t>(acc);
  acc = (acc >> 32) + (uint64_t{c.limb[2]} << 20);
  w[1] = static_cast<uint32_t>(acc);
  acc = (acc >> 32) + (uint64_t{c.limb[3]} << 14);
  w[2] = static_cast<uint32_t>(acc);
  acc = (acc >> 32) + (uint64_t{c.limb[4]} << 8);
  w[3] = static_cast<uint32_t>(acc);
  w[4] = static_cast<uint32_t>(acc >> 32);
  // Fold what lies at and above 2^130 back in as 5 per unit...
  acc = 5ull * (w[4] >> 2);
  w[4] &= 3;
  for (int i = 0; i < 5; ++i) {
    acc += w[i];
    w[i] = static_cast<uint32_t>(acc);
    acc >>= 32;
  }
  // ...then subtract p once if the value is still p or more, which is when
  // adding 5 reaches 2^130. Selected by mask, not by branch.
  uint32_t g[5];
  acc = 5;
  for (int i = 0; i < 5; ++i) {
    acc += w[i];
    g[i] = static_cast<uint32_t>(acc);
    acc >>= 32;
  }
  const uint32_t use_g = 0u - (g[4] >> 2);
  for (int i = 0; i < 4; ++i) w[i] = (g[i] & use_g) | (w[i] & ~use_g);
  acc = uint64_t{w[0]} + s.x;
  const uint32_t t0 = static_cast<uint32_t>(acc);
  acc = (acc >> 32) + w[1] + s.y;
  const uint32_t t1 = static_cast<uint32_t>(acc);
  acc = (acc >> 32) + w[2] + s.z;
  const uint32_t t2 = static_cast<uint32_t>(acc);
  acc = (acc >> 32) + w[3] + s.w;
  return make_uint4(t0, t1, t2, static_cast<uint32_t>(acc));
}

}  // namespace warpcrypt::cuda
