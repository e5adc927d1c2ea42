// AES device functions: the T-table cipher the production kernels use and the
// byte-wise reference cipher, both on one 16-byte block held as four
// little-endian column words (uint4 x, y, z, w = columns 0..3).
#pragma once

#include <cstdint>

#include "core/aes_key_schedule.h"

namespace warpcrypt::cuda {

// Byte rotations of a column word, one PRMT each: the four T-tables are
// rotations of one, so only T0 needs to live in shared memory.
__device__ __forceinline__ uint32_t rotl8(uint32_t x) { return __byte_perm(x, x, 0x2103); }
__device__ __forceinline__ uint32_t rotl16(uint32_t x) { return __byte_perm(x, x, 0x1032); }
__device__ __forceinline__ uint32_t rotl24(uint32_t x) { return __byte_perm(x, x, 0x0321); }
__device__ __forceinline__ uint32_t byte0(uint32_t x) { return x & 0xff; }
__device__ __forceinline__ uint32_t byte1(uint32_t x) { return (x >> 8) & 0xff; }
__device__ __forceinline__ uint32_t byte2(uint32_t x) { return (x >> 16) & 0xff; }
__device__ __forceinline__ uint32_t byte3(uint32_t x) { return x >> 24; }

__device__ __forceinline__ uint4 operator^(uint4 a, uint4 b) {
  return make_uint4(a.x ^ b.x, a.y ^ b.y, a.z ^ b.z, a.w ^ b.w);
}

template <int kRounds>
__device__ __forceinline__ uint4 round_key(const aes::RoundKeys &keys, int round) {
  return make_uint4(keys.words[4 * round], keys.words[4 * round + 1], keys.words[4 * round + 2],
                    keys.words[4 * round + 3]);
}

// The T-table cipher. Tables are replicated once per shared-memory bank:
// lane l reads table[x][l], which always sits in bank l, so a warp's 32
// lookups never conflict whatever the 32 indices are.
struct TTableAes {
  // 256 entries x 32 banks: 32 KiB. Encryption reads enc0 and takes the last
  // round's S-box from its byte 1; decryption reads dec0 plus the inverse
  // S-box packed four bytes per word (64 words x 32 banks: 8 KiB).
  uint32_t (*table)[32];
  uint32_t (*inv_sbox4)[32];
  uint32_t lane;

  static constexpr size_t shared_bytes(bool decrypt) {
    return 256 * 32 * sizeof(uint32_t) + (decrypt ? 64 * 32 * sizeof(uint32_t) : 0);
  }

  // Fills the replicated tables; consecutive threads write consecutive words,
  // so the fill itself is conflict-free. Ends with a barrier.
  __device__ void load(uint32_t *shared, const uint32_t *table256, const uint8_t *inv_sbox) {
    table = reinterpret_cast<uint32_t(*)[32]>(shared);
    inv_sbox4 = reinterpret_cast<uint32_t(*)[32]>(shared + 256 * 32);
    lane = threadIdx.x & 31;
    for (uint32_t i = threadIdx.x; i < 256 * 32; i += blockDim.x) table[i >> 5][i & 31] = table256[i >> 5];
    if (inv_sbox != nullptr) {
      for (uint32_t i = threadIdx.x; i < 64 * 32; i += blockDim.x) {
        const uint32_t w = i >> 5;
        inv_sbox4[w][i & 31] = uint32_t{inv_sbox[4 * w]} | uint32_t{inv_sbox[4 * w + 1]} << 8 |
                               uint32_t{inv_sbox[4 * w + 2]} << 16 | uint32_t{inv_sbox[4 * w + 3]} << 24;
      }
    }
    __syncthreads();
  }

  __device__ __forceinline__ uint32_t t(uint32_t index) const { return table[index][lane]; }
  __device__ __forceinline__ uint32_t sbox(uint32_t index) const { return byte1(table[index][lane]); }
  __device__ __forceinline__ uint32_t inv_sbox(uint32_t index) const {
    return (inv_sbox4[index >> 2][lane] >> (8 * (index & 3))) & 0xff;
  }

  // One middle round on the columns; encryption reads the next columns
  // (ShiftRows), decryption the previous ones (InvShiftRows).
  __device__ __forceinline__ uint32_t enc_column(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3) const {
    return t(byte0(c0)) ^ rotl8(t(byte1(c1))) ^ rotl16(t(byte2(c2))) ^ rotl24(t(byte3(c3)));
  }
  __device__ __forceinline__ uint32_t enc_last(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3) const {
    return sbox(byte0(c0)) | sbox(byte1(c1)) << 8 | sbox(byte2(c2)) << 16 | sbox(byte3(c3)) << 24;
  }
  __device__ __forceinline__ uint32_t dec_last(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3) const {
    return inv_sbox(byte0(c0)) | inv_sbox(byte1(c1)) << 8 | inv_sbox(byte2(c2)) << 16 |
           inv_sbox(byte3(c3)) << 24;
  }

  template <int kRounds>
  __device__ __forceinline__ uint4 encrypt(uint4 s, const aes::RoundKeys &keys) const {
    s = s ^ round_key<kRounds>(keys, 0);
#pragma unroll
    for (int r = 1; r < kRounds; ++r) s = enc_round(s, round_key<kRounds>(keys, r));
    return make_uint4(enc_last(s.x, s.y, s.z, s.w), enc_last(s.y, s.z, s.w, s.x),
                      enc_last(s.z, s.w, s.x, s.y), enc_last(s.w, s.x, s.y, s.z)) ^
           round_key<kRounds>(keys, kRounds);
  }

  __device__ __forceinline__ uint4 enc_round(uint4 s, uint4 k) const {
    return make_uint4(enc_column(s.x, s.y, s.z, s.w) ^ k.x, enc_column(s.y, s.z, s.w, s.x) ^ k.y,
                      enc_column(s.z, s.w, s.x, s.y) ^ k.z, enc_column(s.w, s.x, s.y, s.z) ^ k.w);
  }

  // Decryption with the equivalent inverse cipher's keys (make_decrypt_key).
  template <int kRounds>
  __device__ __forceinline__ uint4 decrypt(uint4 s, const aes::RoundKeys &keys) const {
    s = s ^ round_key<kRounds>(keys, 0);
#pragma unroll
    for (int r = 1; r < kRounds; ++r) {
      const uint4 k = round_key<kRounds>(keys, r);
      s = make_uint4(enc_column(s.x, s.w, s.z, s.y) ^ k.x, enc_column(s.y, s.x, s.w, s.z) ^ k.y,
                     enc_column(s.z, s.y, s.x, s.w) ^ k.z, enc_column(s.w, s.z, s.y, s.x) ^ k.w);
    }
    return make_uint4(dec_last(s.x, s.w, s.z, s.y), dec_last(s.y, s.x, s.w, s.z),
                      dec_last(s.z, s.y, s.x, s.w), dec_last(s.w, s.z, s.y, s.x)) ^
           round_key<kRounds>(keys, kRounds);
  }
};

// The reference cipher: FIPS-197 written out byte by byte (SubBytes,
// ShiftRows, MixColumns by xtime), S-boxes in shared memory. Slow on
// purpose: the bottom rung of the optimisation ladder.
struct ReferenceAes {
  const uint8_t *sbox_table;
  const uint8_t *inv_sbox_table;

  static constexpr size_t shared_bytes(bool) { return 512; }

  __device__ void load(uint32_t *shared, const uint8_t *sbox, const uint8_t *inv_sbox) {
    auto *bytes = reinterpret_cast<uint8_t *>(shared);
    for (uint32_t i = threadIdx.x; i < 256; i += blockDim.x) {
      bytes[i] = sbox[i];
      bytes[256 + i] = inv_sbox[i];
    }
    sbox_table = bytes;
    inv_sbox_table = bytes + 256;
    __syncthreads();
  }

  static __device__ uint8_t xtime(uint8_t x) { return static_cast<uint8_t>((x << 1) ^ ((x & 0x80) ? 0x1b : 0)); }
  static __device__ uint8_t mul(uint8_t a, uint8_t b) {
    uint8_t p = 0;
    for (int i = 0; i < 8; ++i, b >>= 1, a = xtime(a)) {
      if (b & 1) p ^= a;
    }
    return p;
  }
  static __device__ void add_round_key(uint8_t s[16], const aes::RoundKeys &keys, int round) {
    for (int i = 0; i < 16; ++i) s[i] ^= static_cast<uint8_t>(keys.words[4 * round + i / 4] >> (8 * (i % 4)));
  }

  template <int kRounds>
  __device__ uint4 encrypt(uint4 block, const aes::RoundKeys &keys) const {
    uint8_t s[16];
    memcpy(s, &block, 16);
    add_round_key(s, keys, 0);
    for (int r = 1; r <= kRounds; ++r) {
      uint8_t t[16];
      for (int i = 0; i < 16; ++i) {  // SubBytes and ShiftRows: byte (row, col) from col + row
        const int row = i % 4, col = i / 4;
        t[i] = sbox_table[s[4 * ((col + row) % 4) + row]];
      }
      if (r != kRounds) {
        for (int c = 0; c < 4; ++c) {  // MixColumns
          const uint8_t a0 = t[4 * c], a1 = t[4 * c + 1], a2 = t[4 * c + 2], a3 = t[4 * c + 3];
          t[4 * c] = mul(a0, 2) ^ mul(a1, 3) ^ a2 ^ a3;
          t[4 * c + 1] = a0 ^ mul(a1, 2) ^ mul(a2, 3) ^ a3;
          t[4 * c + 2] = a0 ^ a1 ^ mul(a2, 2) ^ mul(a3, 3);
          t[4 * c + 3] = mul(a0, 3) ^ a1 ^ a2 ^ mul(a3, 2);
        }
      }
      memcpy(s, t, 16);
      add_round_key(s, keys, r);
    }
    memcpy(&block, s, 16);
    return block;
  }

  // The straightforward inverse cipher, so it takes the encryption schedule.
  template <int kRounds>
  __device__ uint4 decrypt(uint4 block, const aes::RoundKeys &keys) const {
    uint8_t s[16];
    memcpy(s, &block, 16);
    add_round_key(s, keys, kRounds);
    for (int r = kRounds - 1; r >= 0; --r) {
      uint8_t t[16];
      for (int i = 0; i < 16; ++i) {  // InvShiftRows and InvSubBytes
        const int row = i % 4, col = i / 4;
        t[4 * ((col + row) % 4) + row] = inv_sbox_table[s[i]];
      }
      memcpy(s, t, 16);
      add_round_key(s, keys, r);
      if (r != 0) {
        for (int c = 0; c < 4; ++c) {  // InvMixColumns
          const uint8_t a0 = s[4 * c], a1 = s[4 * c + 1], a2 = s[4 * c + 2], a3 = s[4 * c + 3];
          s[4 * c] = mul(a0, 14) ^ mul(a1, 11) ^ mul(a2, 13) ^ mul(a3, 9);
          s[4 * c + 1] = mul(a0, 9) ^ mul(a1, 14) ^ mul(a2, 11) ^ mul(a3, 13);
          s[4 * c + 2] = mul(a0, 13) ^ mul(a1, 9) ^ mul(a2, 14) ^ mul(a3, 11);
          s[4 * c + 3] = mul(a0, 11) ^ mul(a1, 13) ^ mul(a2, 9) ^ mul(a3, 14);
        }
      }
    }
    memcpy(&block, s, 16);
    return block;
  }
};

}  // namespace warpcrypt::cuda
