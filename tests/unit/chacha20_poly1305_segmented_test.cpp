// The segmented ChaCha20-Poly1305
// (src/backends/cpu/chacha20_poly1305_segmented.cpp) called directly, with
// explicit worker counts so the segment boundaries do not depend on the
// machine's cores: RFC 8439's vectors (§2.5.2 for its Poly1305, §2.8.2 and A.5
// for the AEAD), its Poly1305 against OpenSSL's EVP_MAC "POLY1305" for random
// and extreme keys and messages, the AEAD byte for byte against OpenSSL's EVP
// ChaCha20-Poly1305 around every boundary, tampering rejected, and once through
// the public API.
#include "backends/cpu/chacha20_poly1305_segmented.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <memory>
#include <string>
#include <vector>

#include "aead_support.h"
#include "support/test_rng.h"
#include "support/warpcrypt_calls.h"
#include "vector_file.h"

namespace wctest {
namespace {

using warpcrypt::cpu::ChaCha20Poly1305Key;

constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * kKiB;
// EvpAead's kSegmentedMinLen (src/backends/cpu/evp_aead.cpp): the lone
// message length from which the CPU AEAD segments.
constexpr size_t kSegmentedMinLen = 256 * kKiB;
const std::string kAead = "chacha20-poly1305";

Bytes our_poly1305(const Bytes &key, const Bytes &message) {
  Bytes tag(16);
  warpcrypt::cpu::poly1305(key.data(), message.data(), message.size(), tag.data());
  return tag;
}

Bytes openssl_poly1305(const Bytes &key, const Bytes &message) {
  std::unique_ptr<EVP_MAC, decltype(&EVP_MAC_free)> mac(EVP_MAC_fetch(nullptr, "POLY1305", nullptr), &EVP_MAC_free);
  std::unique_ptr<EVP_MAC_CTX, decltype(&EVP_MAC_CTX_free)> ctx(EVP_MAC_CTX_new(mac.get()), &EVP_MAC_CTX_free);
  Bytes out(16);
  size_t written = 0;
  EXPECT_EQ(EVP_MAC_init(ctx.get(), key.data(), key.size(), nullptr), 1);
  EXPECT_EQ(EVP_MAC_update(ctx.get(), message.data(), message.size()), 1);
  EXPECT_EQ(EVP_MAC_final(ctx.get(), out.data(), &written, out.size()), 1);
  EXPECT_EQ(written, 16u);
  return out;
}

std::unique_ptr<ChaCha20Poly1305Key> keyed(const AeadInput &input) {
  std::unique_ptr<ChaCha20Poly1305Key> key = ChaCha20Poly1305Key::make(input.key);
  EXPECT_NE(key, nullptr);
  return key;
}

// Seals and opens through the segmented calls on `workers` workers, into a
// separate buffer or in place, and compares with OpenSSL's `expected`.
void check_segmented(const ChaCha20Poly1305Key &key, const AeadInput &input, const AeadSealed &expected,
                     unsigned workers, bool in_place) {
  const size_t len = input.plaintext.size();
  Bytes buffer = input.plaintext;
  buffer.push_back(0xa5);  // a guard byte past the end
  Bytes separate(len + 1, 0xa5);
  uint8_t *out = in_place ? buffer.data() : separate.data();
  Bytes tag(input.tag_len, 0);
  ASSERT_EQ(key.seal_segmented(input.nonce.data(), input.aad.data(), input.aad.size(), buffer.data(), out, len,
                               tag.data(), tag.size(), workers),
            WC_OK);
  ASSERT_TRUE(same_bytes(expected.ciphertext, Bytes(out, out + len)));
  ASSERT_TRUE(same_bytes(expected.tag, tag));
  ASSERT_EQ(out[len], 0xa5) << "wrote past the end of the output";

  Bytes opened_separately(len + 1, 0x5a);
  uint8_t *opened = in_place ? buffer.data() : opened_separately.data();
  ASSERT_EQ(key.open_segmented(input.nonce.data(), input.aad.data(), input.aad.size(), out, opened, len, tag.data(),
                               tag.size(), workers),
            WC_OK);
  ASSERT_TRUE(same_bytes(input.plaintext, Bytes(opened, opened + len)));
  ASSERT_EQ(opened[len], in_place ? 0xa5 : 0x5a) << "wrote past the end of the output";
}

TEST(ChaChaPoly1305, Rfc8439Section252) {
  const Bytes key = from_hex("85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b");
  const std::string text = "Cryptographic Forum Research Group";
  EXPECT_TRUE(
      same_bytes(from_hex("a8061dc1305136c6c22b8baf0c0127a9"), our_poly1305(key, Bytes(text.begin(), text.end()))));
}

// Random keys and lengths, and extremes: all-0xff messages (the largest
// block values), r with every bit clamping allows set, s all ones (the
// final addition wraps mod 2^128), an all-zero key, and lengths around
// the 16-byte block.
TEST(ChaChaPoly1305, MatchesOpenSslMac) {
  TestRng rng = TestRng::for_current_test();
  const Bytes clamp_max_r = from_hex("ffffff0ffcffff0ffcffff0ffcffff0f");  // r after clamping, every
                                                                           // bit left set
  for (int trial = 0; trial < 2000; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    Bytes key = rng.bytes(32);
    Bytes message = rng.bytes(trial < 100 ? static_cast<size_t>(trial) : rng.uniform(0, 2000));
    switch (trial % 5) {
      case 0:
        std::fill(message.begin(), message.end(), 0xff);
        std::copy(clamp_max_r.begin(), clamp_max_r.end(), key.begin());
        break;
      case 1:
        std::fill(key.begin(), key.end(), 0xff);
        break;
      case 2:
        std::fill(message.begin(), message.end(), 0xff);
        std::fill(key.begin(), key.end(), 0xff);
        break;
      case 3:
        if (trial % 10 == 3) std::fill(key.begin(), key.end(), 0);
        break;
      default:
        break;
    }
    ASSERT_TRUE(same_bytes(openssl_poly1305(key, message), our_poly1305(key, message)));
  }
}

// RFC 8439's AEAD vectors through the segmented path on 1, 2 and 3 workers.
TEST(ChaChaPolySegmented, Rfc8439Vectors) {
  size_t count = 0;
  for (const VectorRecord &record : read_vector_file(WARPCRYPT_RFC8439_VECTORS)) {
    SCOPED_TRACE("aead_rfc8439_vectors.txt line " + std::to_string(record.line));
    const AeadInput input{record.hex("KEY"), record.hex("NONCE"), record.hex("AAD"), record.hex("PLAINTEXT")};
    const AeadSealed expected{WC_OK, record.hex("CIPHERTEXT"), record.hex("TAG")};
    for (unsigned workers : {1u, 2u, 3u}) check_segmented(*keyed(input), input, expected, workers, false);
    ++count;
  }
  EXPECT_EQ(count, 2u);
}

// Every length 0..600 (every 64-byte segment boundary up to 600, with AAD
// lengths that cover AAD padding), on 1, 2, 3, 7 and 16 workers.
TEST(ChaChaPolySegmented, EveryShortLengthMatchesOpenSsl) {
  TestRng rng = TestRng::for_current_test();
  const std::vector<size_t> aad_lengths = {0, 1, 15, 16, 17};
  for (size_t len = 0; len <= 600; ++len) {
    AeadInput input = random_aead_input(rng, kAead, len, aad_lengths[len % aad_lengths.size()]);
    input.tag_len = rng.uniform(WC_AEAD_MIN_TAG_LEN, WC_AEAD_MAX_TAG_LEN);
    const AeadSealed expected = openssl_aead_seal(kAead, input);
    const std::unique_ptr<ChaCha20Poly1305Key> key = keyed(input);
    for (unsigned workers : {1u, 2u, 3u, 7u, 16u}) {
      SCOPED_TRACE("message length " + std::to_string(len) + ", " + std::to_string(workers) + " workers");
      check_segmented(*key, input, expected, workers, len % 2 == 0);
    }
  }
}

// Lengths around the ChaCha block and the CPU AEAD's threshold, up to
// 16 MiB, in place and not. Below 1 MiB each length takes AAD of 0, 1, 15,
// 16, 17 and 4099 bytes; from 1 MiB on, one of them each, in turn: how the
// AAD pads is settled in the first segment, whatever the length, and the
// lengths around the threshold try every AAD against the segments already
// (the six at 16 MiB were most of the test's time under ASan: 53 s).
TEST(ChaChaPolySegmented, BoundaryLengthsMatchOpenSsl) {
  TestRng rng = TestRng::for_current_test();
  const std::vector<size_t> lengths = {63,
                                       64,
                                       65,
                                       kSegmentedMinLen - 1,
                                       kSegmentedMinLen,
                                       kSegmentedMinLen + 1,
                                       kSegmentedMinLen + 15,
                                       kSegmentedMinLen + 16,
                                       kSegmentedMinLen + 63,
                                       kSegmentedMinLen + 64,
                                       kMiB,
                                       kMiB + 13,
                                       3 * kMiB + 255,
                                       16 * kMiB};
  const std::vector<size_t> aad_lengths = {0, 1, 15, 16, 17, 4099};
  size_t turn = 0;
  for (size_t len : lengths) {
    for (size_t aad_len : aad_lengths) {
      if (len >= kMiB && aad_len != aad_lengths[turn % aad_lengths.size()]) continue;
      AeadInput input = random_aead_input(rng, kAead, len, aad_len);
      input.tag_len = rng.uniform(WC_AEAD_MIN_TAG_LEN, WC_AEAD_MAX_TAG_LEN);
      const AeadSealed expected = openssl_aead_seal(kAead, input);
      const std::unique_ptr<ChaCha20Poly1305Key> key = keyed(input);
      for (unsigned workers : {1u, 2u, 3u, 7u, 16u}) {
        for (bool in_place : {false, true}) {
          SCOPED_TRACE("message length " + std::to_string(len) + ", AAD length " + std::to_string(aad_len) + ", " +
                       std::to_string(workers) + " workers" + (in_place ? ", in place" : ""));
          check_segmented(*key, input, expected, workers, in_place);
        }
      }
    }
    if (len >= kMiB) ++turn;
  }
}

// A flipped bit in the tag, the AAD, or the ciphertext of the first, a
// middle or the last segment fails with WC_ERR_AUTH.
TEST(ChaChaPolySegmented, TamperingIsRejected) {
  TestRng rng = TestRng::for_current_test();
  const size_t len = kMiB + 13;
  const AeadInput input = random_aead_input(rng, kAead, len, 17);
  const AeadSealed sealed = openssl_aead_seal(kAead, input);
  const std::unique_ptr<ChaCha20Poly1305Key> key = keyed(input);
  Bytes out(len);
  auto open = [&](const Bytes &aad, const Bytes &ciphertext, const Bytes &tag, unsigned workers) {
    return key->open_segmented(input.nonce.data(), aad.data(), aad.size(), ciphertext.data(), out.data(), len,
                               tag.data(), tag.size(), workers);
  };
  for (unsigned workers : {1u, 3u, 7u}) {
    SCOPED_TRACE(std::to_string(workers) + " workers");
    ASSERT_EQ(open(input.aad, sealed.ciphertext, sealed.tag, workers), WC_OK);
    for (size_t bit : {size_t{0}, size_t{77}, 8 * sealed.tag.size() - 1}) {
      EXPECT_EQ(open(input.aad, sealed.ciphertext, with_bit_flipped(sealed.tag, bit), workers), WC_ERR_AUTH)
          << "tag bit " << bit;
    }
    for (size_t bit : {size_t{0}, size_t{70}, 8 * input.aad.size() - 1}) {
      EXPECT_EQ(open(with_bit_flipped(input.aad, bit), sealed.ciphertext, sealed.tag, workers), WC_ERR_AUTH)
          << "AAD bit " << bit;
    }
    // Bytes 0, len / 2 (a middle segment for 3 and 7 workers) and the last.
    for (size_t byte : {size_t{0}, len / 2, len - 1}) {
      EXPECT_EQ(open(input.aad, with_bit_flipped(sealed.ciphertext, 8 * byte + 3), sealed.tag, workers), WC_ERR_AUTH)
          << "ciphertext byte " << byte;
    }
  }
}

// Through the public API with an explicit thread count a message past the
// threshold (which the CPU AEAD segments on 4 workers) matches OpenSSL, for
// the full tag and shortened ones as wc_aead allows, and a forged one fails
// with its output zeroed.
class ChaChaPolySegmentedApi : public ::testing::TestWithParam<size_t> {};

TEST_P(ChaChaPolySegmentedApi, MatchesOpenSslAndZeroesForgeries) {
  TestRng rng = TestRng::for_current_test();
  const wc_options options = make_options(4, WC_BACKEND_CPU);
  const AeadInput input = random_aead_input(rng, kAead, 2 * kMiB + 100, 40, 0, GetParam());
  const AeadSealed expected = openssl_aead_seal(kAead, input);
  const AeadSealed sealed = lib_aead_seal(kAead, input, options);
  ASSERT_EQ(sealed.status, WC_OK);
  EXPECT_TRUE(same_bytes(expected.ciphertext, sealed.ciphertext));
  EXPECT_TRUE(same_bytes(expected.tag, sealed.tag));
  const AeadOpened opened = lib_aead_open(kAead, input, sealed.ciphertext, sealed.tag, options);
  ASSERT_EQ(opened.status, WC_OK);
  EXPECT_TRUE(same_bytes(input.plaintext, opened.out));
  for (size_t bit : {size_t{5}, 8 * kMiB, 8 * (2 * kMiB + 99)}) {
    const AeadOpened forged =
        lib_aead_open(kAead, input, with_bit_flipped(sealed.ciphertext, bit), sealed.tag, options);
    EXPECT_EQ(forged.status, WC_ERR_AUTH);
    EXPECT_TRUE(same_bytes(Bytes(forged.out.size(), 0), forged.out)) << "a forgery's plaintext was left in the output";
  }
}

INSTANTIATE_TEST_SUITE_P(TagLengths, ChaChaPolySegmentedApi, ::testing::Values(size_t{16}, size_t{12}, size_t{4}));

TEST(ChaChaPolySegmented, RejectsOtherKeyLengths) {
  for (size_t len : {size_t{0}, size_t{16}, size_t{31}, size_t{33}}) {
    EXPECT_EQ(ChaCha20Poly1305Key::make(Bytes(len, 0x11)), nullptr) << len << "-byte key";
  }
}

}  // namespace
}  // namespace wctest
