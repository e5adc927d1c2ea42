// 32-bit rotations: byte-aligned ones are byte permutations (one PRMT),
// others funnel shifts (one SHF), so callers can spread them over both.
#pragma once

#include <cstdint>

namespace warpcrypt::cuda {

__device__ __forceinline__ uint32_t rotl(uint32_t x, int n) { return __funnelshift_l(x, x, n); }
__device__ __forceinline__ uint32_t rotl8(uint32_t x) { return __byte_perm(x, x, 0x2103); }
__device__ __forceinline__ uint32_t rotl16(uint32_t x) { return __byte_perm(x, x, 0x1032); }
__device__ __forceinline__ uint32_t rotl24(uint32_t x) { return __byte_perm(x, x, 0x0321); }

}  // namespace warpcrypt::cuda
