// 16-byte block loads and stores. The aligned form is one 128-bit access; the
// other handles device pointers at any byte address. The choice is made per
// launch, so the branch is uniform across the grid.
#pragma once

#include <cstdint>

namespace warpcrypt::cuda {

__device__ __forceinline__ uint4 load_block(const uint8_t *p, bool aligned) {
  if (aligned) return *reinterpret_cast<const uint4 *>(p);
  uint32_t w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    w[i] = uint32_t{p[4 * i]} | uint32_t{p[4 * i + 1]} << 8 | uint32_t{p[4 * i + 2]} << 16 |
           uint32_t{p[4 * i + 3]} << 24;
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

__device__ __forceinline__ void store_block(uint8_t *p, uint4 v, bool aligned) {
  if (aligned) {
    *reinterpret_cast<uint4 *>(p) = v;
    return;
  }
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 16; ++i) p[i] = static_cast<uint8_t>(w[i / 4] >> (8 * (i % 4)));
}

__device__ __forceinline__ uint8_t byte_of(const uint32_t *words, int i) {
  return static_cast<uint8_t>(words[i / 4] >> (8 * (i % 4)));
}

}  // namespace warpcrypt::cuda
