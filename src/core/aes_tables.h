// AES lookup tables, generated at compile time from the field arithmetic of
// FIPS-197 rather than pasted in. Words use the GPU kernels' layout: a state
// column is a little-endian uint32 whose byte 0 is row 0.
#pragma once

#include <array>
#include <cstdint>

namespace warpcrypt::aes {

struct Tables {
  std::array<uint8_t, 256> sbox;
  std::array<uint8_t, 256> inv_sbox;
  // Encryption: enc0[x] = column (2s, s, s, 3s) for s = sbox[x]; the other
  // three tables are byte rotations of it.
  std::array<uint32_t, 256> enc0;
  // Decryption: dec0[x] = column (14t, 9t, 13t, 11t) for t = inv_sbox[x].
  std::array<uint32_t, 256> dec0;
};

const Tables &tables();

// InvMixColumns of one column, for the decryption key schedule.
uint32_t inv_mix_column(uint32_t column);

}  // namespace warpcrypt::aes
