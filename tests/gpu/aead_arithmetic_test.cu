// The AEAD kernels' field arithmetic (src/cuda/gf128_device.cuh and
// poly1305_device.cuh) is __host__ __device__, so it is checked here on the
// host, with or without a GPU, against OpenSSL: GHASH through AES-GCM tags,
// Poly1305 through OpenSSL's Poly1305 MAC and the RFC 8439 example.
#include <openssl/evp.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "aead_support.h"
#include "backends/cuda/gf128_device.cuh"
#include "backends/cuda/poly1305_device.cuh"
#include "backends/cuda/tuning.h"
#include "support/bytes.h"
#include "support/test_rng.h"

namespace wctest {
namespace {

using warpcrypt::cuda::Gf128;
using warpcrypt::cuda::Poly;

uint32_t load_le32(const uint8_t *p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

// Up to 16 bytes as four little-endian words, zero-padded.
uint4 block_of(const uint8_t *bytes, size_t len) {
  uint8_t block[16] = {};
  std::memcpy(block, bytes, std::min<size_t>(len, 16));
  return make_uint4(load_le32(block), load_le32(block + 4), load_le32(block + 8), load_le32(block + 12));
}

Bytes bytes_of(uint4 block) {
  const uint32_t words[4] = {block.x, block.y, block.z, block.w};
  Bytes out(16);
  for (int i = 0; i < 16; ++i) out[i] = static_cast<uint8_t>(words[i / 4] >> (8 * (i % 4)));
  return out;
}

Gf128 random_element(TestRng &rng) {
  const Bytes b = rng.bytes(16);
  return warpcrypt::cuda::gf_from_block(block_of(b.data(), 16));
}

bool same(const Gf128 &a, const Gf128 &b) { return std::memcmp(a.w, b.w, sizeof a.w) == 0; }

// One AES block under `key` (ECB), the way GCM derives H and E(K, J0).
Bytes aes_block(const Bytes &key, const Bytes &block) {
  const std::string name = "AES-" + std::to_string(8 * key.size()) + "-ECB";
  std::unique_ptr<EVP_CIPHER, decltype(&EVP_CIPHER_free)> cipher(EVP_CIPHER_fetch(nullptr, name.c_str(), nullptr),
                                                                 &EVP_CIPHER_free);
  std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)> ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  Bytes out(16);
  int written = 0;
  EXPECT_EQ(EVP_EncryptInit_ex2(ctx.get(), cipher.get(), key.data(), nullptr, nullptr), 1);
  EXPECT_EQ(EVP_EncryptUpdate(ctx.get(), out.data(), &written, block.data(), 16), 1);
  return out;
}

// The ways of multiplying: both factors varying, a constant's columns, a
// constant's nibble tables, and squaring.
TEST(AeadArithmetic, GhashMultiplicationsAgree) {
  TestRng rng = TestRng::for_current_test();
  std::vector<uint32_t> table(warpcrypt::cuda::kGf128TableWords);
  for (int trial = 0; trial < 50; ++trial) {
    const Gf128 k = random_element(rng);
    const warpcrypt::cuda::Gf128Columns columns = warpcrypt::cuda::gf_columns(k);
    for (int i = 0; i < warpcrypt::cuda::kGf128TableWords; ++i) table[i] = warpcrypt::cuda::gf_table_word(columns, i);
    for (int i = 0; i < 4; ++i) {
      const Gf128 a = random_element(rng);
      const Gf128 expected = warpcrypt::cuda::gf_multiply(a, k);
      EXPECT_TRUE(same(expected, warpcrypt::cuda::gf_multiply(a, columns)));
      EXPECT_TRUE(same(expected, warpcrypt::cuda::gf_multiply(a, table.data())));
      // Commutative, as a field's multiplication must be.
      EXPECT_TRUE(same(expected, warpcrypt::cuda::gf_multiply(k, a)));
      EXPECT_TRUE(same(warpcrypt::cuda::gf_multiply(a, a), warpcrypt::cuda::gf_square(a)));
    }
  }
  // x^0 is the identity: the top bit of the first byte.
  const Gf128 one{{0x80000000u, 0, 0, 0}};
  const Gf128 a = random_element(rng);
  EXPECT_TRUE(same(a, warpcrypt::cuda::gf_multiply(a, one)));
}

// The warp chains' ladder divides by H^kThreads.
TEST(AeadArithmetic, GhashInverse) {
  TestRng rng = TestRng::for_current_test();
  const Gf128 one{{0x80000000u, 0, 0, 0}};
  for (int trial = 0; trial < 20; ++trial) {
    const Gf128 k = random_element(rng);
    EXPECT_TRUE(same(one, warpcrypt::cuda::gf_multiply(k, warpcrypt::cuda::gf_inverse(k))));
  }
  EXPECT_TRUE(same(Gf128{}, warpcrypt::cuda::gf_inverse(Gf128{})));
}

// The tensor-core step's fragments, checked on the host by doing what
// mma.m16n8k256 .b1 AND POPC does with them under PTX's fragment layout
// (A: row lane / 4, + 8 in a1 and a3, bits 32 (lane % 4) on, + 128 in a2
// and a3; B: column lane / 4, the same rows; D: row lane / 4, + 8 in d2 and
// d3, columns 2 (lane % 4) and + 1), with the operands gf_mma_absorb builds
// from gf_mma_arrange's words: one step of the GCM kernels' groups must be
// Horner's.
TEST(AeadArithmetic, GhashTensorCoreStepIsHorner) {
  using warpcrypt::cuda::gf_add;
  using warpcrypt::cuda::gf_from_block;
  using warpcrypt::cuda::gf_multiply;
  using warpcrypt::cuda::kGf128MmaCount;
  constexpr int kGroups = warpcrypt::cuda::tuning::kAeadGhashGroupsPerStep;
  TestRng rng = TestRng::for_current_test();
  auto word = [](const uint4 &v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; };
  for (int trial = 0; trial < 4; ++trial) {
    Gf128 f[kGroups], g[kGroups];
    warpcrypt::cuda::Gf128MmaFragments fragments[kGroups];
    uint4 state[16], block[kGroups][32];
    for (int group = 0; group < kGroups; ++group) {
      f[group] = random_element(rng);
      g[group] = random_element(rng);
      fragments[group] = warpcrypt::cuda::gf_mma_fragments(f[group], g[group]);
      for (uint4 &b : block[group]) b = block_of(rng.bytes(16).data(), 16);
    }
    for (uint4 &s : state) s = block_of(rng.bytes(16).data(), 16);
    for (int r = 0; r < 16; ++r) {
      // Chain r's blocks a and b of each group: lanes 4q + r / 8 and + 2.
      const int a_lane = 4 * (r % 8) + r / 8, b_lane = a_lane + 2;
      // Row r of a group's A: its block a (plus the state in group 0), then its block b.
      auto a_bit = [&](int group, int k) -> uint32_t {
        const uint32_t w = k < 128 ? word(block[group][a_lane], k / 32) ^ (group == 0 ? word(state[r], k / 32) : 0)
                                   : word(block[group][b_lane], (k - 128) / 32);
        return (w >> (k % 32)) & 1u;
      };
      auto b_bit = [&](int group, int m, int k, int column) -> uint32_t {
        return (fragments[group].word[m][4 * column + k % 128 / 32][k / 128] >> (k % 32)) & 1u;
      };
      uint32_t next[4] = {};
      for (int m = 0; m < kGf128MmaCount; ++m) {
        for (int column = 0; column < 8; ++column) {
          uint32_t sum = 0;  // the accumulator over every group
          for (int group = 0; group < kGroups; ++group) {
            for (int k = 0; k < 256; ++k) sum += a_bit(group, k) & b_bit(group, m, k, column);
          }
          next[column / 2] |= (sum & 1u) << (2 * m + column % 2);
        }
      }
      Gf128 expected{};
      for (int group = 0; group < kGroups; ++group) {
        Gf128 a = gf_from_block(block[group][a_lane]);
        if (group == 0) a = gf_add(a, gf_from_block(state[r]));
        expected = gf_add(expected, gf_add(gf_multiply(a, f[group]),
                                           gf_multiply(gf_from_block(block[group][b_lane]), g[group])));
      }
      EXPECT_EQ(bytes_of(warpcrypt::cuda::gf_to_block(expected)),
                bytes_of(make_uint4(next[0], next[1], next[2], next[3])))
          << "chain " << r;
    }
  }
}

// GCM's tag over AAD alone is E(K, J0) xor GHASH(AAD || lengths): hashing
// the AAD with the kernels' arithmetic must give OpenSSL's tag.
TEST(AeadArithmetic, GhashMatchesOpenSslGcmTags) {
  TestRng rng = TestRng::for_current_test();
  for (size_t aad_len : {size_t{0}, size_t{1}, size_t{16}, size_t{17}, size_t{100}, size_t{1000}}) {
    const AeadInput input = random_aead_input(rng, "aes-128-gcm", 0, aad_len);
    const Bytes h_bytes = aes_block(input.key, Bytes(16, 0));
    const warpcrypt::cuda::Gf128Columns h = warpcrypt::cuda::gf_columns(warpcrypt::cuda::gf_from_block(block_of(h_bytes.data(), 16)));
    Gf128 state{};
    for (size_t at = 0; at < aad_len; at += 16) {
      const Gf128 block = warpcrypt::cuda::gf_from_block(block_of(input.aad.data() + at, aad_len - at));
      state = warpcrypt::cuda::gf_multiply(warpcrypt::cuda::gf_add(state, block), h);
    }
    const uint64_t aad_bits = uint64_t{aad_len} * 8;
    state = warpcrypt::cuda::gf_multiply(
        warpcrypt::cuda::gf_add(state, Gf128{{static_cast<uint32_t>(aad_bits >> 32), static_cast<uint32_t>(aad_bits), 0, 0}}), h);
    Bytes j0 = input.nonce;
    j0.insert(j0.end(), {0, 0, 0, 1});
    const Bytes mask = aes_block(input.key, j0);
    Bytes tag = bytes_of(warpcrypt::cuda::gf_to_block(state));
    for (int i = 0; i < 16; ++i) tag[i] ^= mask[i];
    EXPECT_TRUE(same_bytes(openssl_aead_seal("aes-128-gcm", input).tag, tag)) << "aad " << aad_len;
  }
}

// Poly1305 proper (RFC 8439 2.5): full blocks get 2^128, a short last one
// a 1 byte after its end instead.
Bytes poly1305_mac(const Bytes &key, const Bytes &message) {
  const Poly r = warpcrypt::cuda::poly_clamped_r(block_of(key.data(), 16));
  Poly h{};
  for (size_t at = 0; at < message.size(); at += 16) {
    const size_t n = std::min<size_t>(16, message.size() - at);
    uint8_t block[17] = {};
    std::memcpy(block, message.data() + at, n);
    block[n] = 1;
    const Poly m = warpcrypt::cuda::poly_from_block(block_of(block, 16), n == 16 ? 1 : 0);
    h = warpcrypt::cuda::poly_multiply(warpcrypt::cuda::poly_add(h, m), r);
  }
  return bytes_of(warpcrypt::cuda::poly_tag(h, block_of(key.data() + 16, 16)));
}

Bytes openssl_poly1305(const Bytes &key, const Bytes &message) {
  std::unique_ptr<EVP_MAC, decltype(&EVP_MAC_free)> mac(EVP_MAC_fetch(nullptr, "POLY1305", nullptr), &EVP_MAC_free);
  std::unique_ptr<EVP_MAC_CTX, decltype(&EVP_MAC_CTX_free)> ctx(EVP_MAC_CTX_new(mac.get()), &EVP_MAC_CTX_free);
  Bytes out(16);
  size_t written = 0;
  EXPECT_EQ(EVP_MAC_init(ctx.get(), key.data(), key.size(), nullptr), 1);
  EXPECT_EQ(EVP_MAC_update(ctx.get(), message.data(), message.size()), 1);
  EXPECT_EQ(EVP_MAC_final(ctx.get(), out.data(), &written, out.size()), 1);
  return out;
}

TEST(AeadArithmetic, Poly1305Rfc8439Example) {
  // RFC 8439 section 2.5.2.
  const Bytes key = from_hex("85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b");
  const std::string text = "Cryptographic Forum Research Group";
  EXPECT_TRUE(same_bytes(from_hex("a8061dc1305136c6c22b8baf0c0127a9"), poly1305_mac(key, Bytes(text.begin(), text.end()))));
}

TEST(AeadArithmetic, Poly1305MatchesOpenSsl) {
  TestRng rng = TestRng::for_current_test();
  for (int trial = 0; trial < 200; ++trial) {
    Bytes key = rng.bytes(32);
    Bytes message = rng.bytes(rng.uniform(0, 300));
    // Every fourth trial pushes the limbs to their largest values: all-ones
    // data and an r with every bit clamping allows.
    if (trial % 4 == 0) {
      std::fill(message.begin(), message.end(), 0xff);
      std::fill(key.begin(), key.end(), 0xff);
    }
    EXPECT_TRUE(same_bytes(openssl_poly1305(key, message), poly1305_mac(key, message)))
        << "length " << message.size() << " key " << to_hex(key);
  }
}

// The bulk kernel's delayed reduction: a keystream block's four
// authenticator blocks join the chain as chain * r^4 + m0 r^3 + m1 r^2 + m2 r
// + m3, the four products summed unreduced and carried once. Run over whole
// messages, with every fourth trial at the limbs' largest values (all-ones
// data, every bit of r that clamping allows), it must give OpenSSL's tag.
TEST(AeadArithmetic, Poly1305DelayedReductionMatchesOpenSsl) {
  namespace wc = warpcrypt::cuda;
  TestRng rng = TestRng::for_current_test();
  for (int trial = 0; trial < 40; ++trial) {
    Bytes key = rng.bytes(32);
    Bytes message = rng.bytes(64 * rng.uniform(1, 64));
    if (trial % 4 == 0) {
      std::fill(message.begin(), message.end(), 0xff);
      std::fill(key.begin(), key.end(), 0xff);
    }
    const Poly r = wc::poly_clamped_r(block_of(key.data(), 16));
    const Poly r2 = wc::poly_multiply(r, r);
    const Poly r3 = wc::poly_multiply(r2, r);
    const Poly r4 = wc::poly_multiply(r3, r);
    const Poly *weights[3] = {&r3, &r2, &r};
    Poly chain{};
    for (size_t at = 0; at < message.size(); at += 64) {
      wc::PolyWide sum = wc::poly_products(chain, r4);
      for (int v = 0; v < 3; ++v) {
        sum = wc::poly_add(sum, wc::poly_products(wc::poly_from_block(block_of(&message[at + 16 * v], 16), 1),
                                                  *weights[v]));
      }
      chain = wc::poly_reduce(wc::poly_add(sum, wc::poly_from_block(block_of(&message[at + 48], 16), 1)));
    }
    // The chain leaves out the last factor r that Horner's (h + m) r applies.
    const Bytes tag = bytes_of(wc::poly_tag(wc::poly_multiply(chain, r), block_of(key.data() + 16, 16)));
    EXPECT_TRUE(same_bytes(openssl_poly1305(key, message), tag)) << "length " << message.size() << " key " << to_hex(key);
  }
}

// Values at and just above p = 2^130 - 5 reduce to small numbers.
TEST(AeadArithmetic, Poly1305TagReducesModP) {
  const uint4 no_s = make_uint4(0, 0, 0, 0);
  const uint32_t m = warpcrypt::cuda::kPolyLimbMask;
  const Poly p{{m - 4, m, m, m, m}};
  EXPECT_TRUE(same_bytes(Bytes(16, 0), bytes_of(warpcrypt::cuda::poly_tag(p, no_s))));
  const Poly p_plus_3{{m - 1, m, m, m, m}};
  Bytes three(16, 0);
  three[0] = 3;
  EXPECT_TRUE(same_bytes(three, bytes_of(warpcrypt::cuda::poly_tag(p_plus_3, no_s))));
  // Unreduced limbs (a sum of products) give the same tag as carried ones.
  TestRng rng = TestRng::for_current_test();
  const Bytes key = rng.bytes(32);
  const Poly r = warpcrypt::cuda::poly_clamped_r(block_of(key.data(), 16));
  const Poly x = warpcrypt::cuda::poly_multiply(r, r);
  Poly sum{};
  for (int i = 0; i < 32; ++i) sum = warpcrypt::cuda::poly_add(sum, x);
  Poly carried_sum{};
  for (int i = 0; i < 32; ++i) carried_sum = warpcrypt::cuda::poly_carry(warpcrypt::cuda::poly_add(carried_sum, x));
  const uint4 s = block_of(key.data() + 16, 16);
  EXPECT_TRUE(same_bytes(bytes_of(warpcrypt::cuda::poly_tag(carried_sum, s)),
                         bytes_of(warpcrypt::cuda::poly_tag(sum, s))));
}

}  // namespace
}  // namespace wctest
