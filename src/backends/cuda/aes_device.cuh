// AES device functions: the T-table cipher the production kernels use and the
// byte-wise reference cipher, both on one 16-byte block held as four
// little-endian column words (uint4 x, y, z, w = columns 0..3).
#pragma once

#include <cstdint>

#include "core/aes_key_schedule.h"
#include "backends/cuda/rotate.cuh"

namespace warpcrypt::cuda {

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

// The T-table cipher. The table lives in shared memory replicated once per
// bank: lane l reads its own copy, which always sits in bank l, so a warp's
// 32 lookups never conflict whatever the 32 indices are.
//
// Entry v takes 256 bytes: 32 copies of T0[v] (one per bank), then 32
// copies of T2[v] = rotl16(T0[v]). With that stride the byte offset of lane
// l's copy, v * 256 + 4 * l, is one PRMT of the state word and 4 * l, and T2
// is the same address + 128: a lookup costs one ALU instruction besides the
// load, and T2 lookups need no rotation. T1 and T3 are rotl8 of T0 and T2.
// The last round's S-box is byte 1 of T0. 64 KiB per CTA; decryption adds
// the inverse S-box packed four bytes per word (64 words x 32 banks: 8 KiB).
struct TTableAes {
  static constexpr uint32_t kEntryBytes = 256;
  static constexpr uint32_t kTableBytes = 256 * kEntryBytes;
  static constexpr uint32_t kInvSboxBytes = 64 * 32 * sizeof(uint32_t);

  const uint8_t *table;         // shared memory
  const uint32_t (*inv_sbox4)[32];
  uint32_t lane4;               // 4 * lane, PRMT'd into every lookup offset
  uint32_t lane;

  static constexpr size_t shared_bytes(bool decrypt) { return kTableBytes + (decrypt ? kInvSboxBytes : 0); }

  // Fills the tables; consecutive threads write consecutive words, so the
  // fill itself is conflict-free. Ends with a barrier.
  __device__ void load(uint32_t *shared, const uint32_t *table256, const uint8_t *inv_sbox) {
    table = reinterpret_cast<const uint8_t *>(shared);
    lane = threadIdx.x & 31;
    lane4 = 4 * lane;
    for (uint32_t i = threadIdx.x; i < kTableBytes / 4; i += blockDim.x) {
      const uint32_t t0 = table256[i / 64];
      shared[i] = (i & 32) ? rotl16(t0) : t0;
    }
    uint32_t(*packed)[32] = reinterpret_cast<uint32_t(*)[32]>(shared + kTableBytes / 4);
    inv_sbox4 = packed;
    if (inv_sbox != nullptr) {
      for (uint32_t i = threadIdx.x; i < 64 * 32; i += blockDim.x) {
        const uint32_t w = i >> 5;
        packed[w][i & 31] = uint32_t{inv_sbox[4 * w]} | uint32_t{inv_sbox[4 * w + 1]} << 8 |
                            uint32_t{inv_sbox[4 * w + 2]} << 16 | uint32_t{inv_sbox[4 * w + 3]} << 24;
      }
    }
    __syncthreads();
  }

  // Byte offset of this lane's copy of entry word.byte[k]: byte 0 from
  // lane4, byte 1 from the state word, bytes 2-3 zero.
  template <int k>
  __device__ __forceinline__ uint32_t offset(uint32_t word) const {
    return __byte_perm(word, lane4, 0x5504 | (k << 4));
  }
  template <int k>
  __device__ __forceinline__ uint32_t t0(uint32_t word) const {
    return *reinterpret_cast<const uint32_t *>(table + offset<k>(word));
  }
  template <int k>
  __device__ __forceinline__ uint32_t t2(uint32_t word) const {
    return *reinterpret_cast<const uint32_t *>(table + offset<k>(word) + 128);
  }

  // One round's column from the four columns it reads and its round key:
  // encryption passes the next columns (ShiftRows), decryption the previous
  // ones. The two terms that need rotl8 share one, and the key goes in
  // before it as rotl24(key), which the compiler computes on the uniform
  // datapath: three ALU operations besides the lookups' offsets, not four.
  __device__ __forceinline__ uint32_t column(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t key) const {
    return t0<0>(c0) ^ t2<2>(c2) ^ rotl8(t0<1>(c1) ^ t2<3>(c3) ^ rotl24(key));
  }
  // SubBytes of four bytes: byte 1 of the T0 words, gathered by PRMT.
  __device__ __forceinline__ uint32_t sbox_column(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3) const {
    const uint32_t low = __byte_perm(t0<0>(c0), t0<1>(c1), 0x0051);
    const uint32_t high = __byte_perm(t0<2>(c2), t0<3>(c3), 0x5100);
    return __byte_perm(low, high, 0x7610);
  }
  __device__ __forceinline__ uint32_t inv_sbox(uint32_t index) const {
    return (inv_sbox4[index >> 2][lane] >> (8 * (index & 3))) & 0xff;
  }
  __device__ __forceinline__ uint32_t inv_sbox_column(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3) const {
    return inv_sbox(byte0(c0)) | inv_sbox(byte1(c1)) << 8 | inv_sbox(byte2(c2)) << 16 | inv_sbox(byte3(c3)) << 24;
  }

  __device__ __forceinline__ uint4 enc_round(uint4 s, uint4 k) const {
    return make_uint4(column(s.x, s.y, s.z, s.w, k.x), column(s.y, s.z, s.w, s.x, k.y),
                      column(s.z, s.w, s.x, s.y, k.z), column(s.w, s.x, s.y, s.z, k.w));
  }
  __device__ __forceinline__ uint4 enc_last_round(uint4 s, uint4 k) const {
    return make_uint4(sbox_column(s.x, s.y, s.z, s.w) ^ k.x, sbox_column(s.y, s.z, s.w, s.x) ^ k.y,
                      sbox_column(s.z, s.w, s.x, s.y) ^ k.z, sbox_column(s.w, s.x, s.y, s.z) ^ k.w);
  }

  template <int kRounds>
  __device__ __forceinline__ uint4 encrypt(uint4 s, const aes::RoundKeys &keys) const {
    s = s ^ round_key<kRounds>(keys, 0);
#pragma unroll
    for (int r = 1; r < kRounds; ++r) s = enc_round(s, round_key<kRounds>(keys, r));
    return enc_last_round(s, round_key<kRounds>(keys, kRounds));
  }

  // Decryption with the equivalent inverse cipher's keys (make_decrypt_key)
  // and the decryption tables loaded.
  template <int kRounds>
  __device__ __forceinline__ uint4 decrypt(uint4 s, const aes::RoundKeys &keys) const {
    s = s ^ round_key<kRounds>(keys, 0);
#pragma unroll
    for (int r = 1; r < kRounds; ++r) {
      const uint4 k = round_key<kRounds>(keys, r);
      s = make_uint4(column(s.x, s.w, s.z, s.y, k.x), column(s.y, s.x, s.w, s.z, k.y),
                     column(s.z, s.y, s.x, s.w, k.z), column(s.w, s.z, s.y, s.x, k.w));
    }
    return make_uint4(inv_sbox_column(s.x, s.w, s.z, s.y), inv_sbox_column(s.y, s.x, s.w, s.z),
                      inv_sbox_column(s.z, s.y, s.x, s.w), inv_sbox_column(s.w, s.z, s.y, s.x)) ^
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
