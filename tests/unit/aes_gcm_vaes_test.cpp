// The VAES/VPCLMULQDQ AES-GCM (src/backends/cpu/aes_gcm_vaes.cpp) called
// directly and compared byte for byte with OpenSSL's EVP AES-GCM: every
// message length 0..600 against every AAD length 0..100, lengths around and
// far past its 256-byte step, unaligned and in-place buffers, all three key
// sizes, and tampered tags, ciphertext and AAD rejected. The library's own
// AES-GCM calls (the NIST CAVP files in aead_known_answer_test.cpp) reach
// this code too on a CPU that has it; this test reaches it whatever the
// dispatch decides, and OpenSSL's path stays covered by the oracle here and
// by nonces other than 12 bytes.
//
// The segmented path (one message over several workers) is checked the
// same way, with explicit worker counts so that the segment boundaries do
// not depend on the machine's cores, and once through the public API.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "aead_support.h"
#include "backends/cpu/aes_gcm_vaes.h"
#include "support/test_rng.h"
#include "support/warpcrypt_calls.h"

namespace wctest {
namespace {

using warpcrypt::cpu::VaesGcmKey;

constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * kKiB;
// EvpAead's kSegmentedMinLen (src/backends/cpu/evp_aead.cpp): the lone
// message length from which the CPU AEAD segments.
constexpr size_t kSegmentedMinLen = 256 * kKiB;

class VaesGcm : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    if (!warpcrypt::cpu::vaes_gcm_supported()) {
      GTEST_SKIP() << "this CPU (or its OS) lacks VAES, VPCLMULQDQ or AVX-512 "
                      "F/VL/BW with zmm state enabled; "
                      "AES-GCM runs on OpenSSL here";
    }
  }
  std::string aead_name() const { return "aes-" + std::to_string(GetParam()) + "-gcm"; }

  // A fresh key for `input`, keyed the way the CPU AEAD keys it.
  static std::unique_ptr<VaesGcmKey> keyed(const AeadInput &input) {
    std::unique_ptr<VaesGcmKey> key = VaesGcmKey::make(input.key);
    EXPECT_NE(key, nullptr);
    return key;
  }

  // Seals through `key` into a buffer starting `offset` bytes into a
  // larger one (so also unaligned), checks ciphertext and tag against
  // OpenSSL, then opens them back the same way.
  void check_against_openssl(const VaesGcmKey &key, const AeadInput &input, size_t offset = 0) {
    const AeadSealed expected = openssl_aead_seal(aead_name(), input);
    Bytes out(input.plaintext.size() + offset + 1, 0xa5);
    Bytes tag(input.tag_len, 0);
    key.seal(input.nonce.data(), input.aad.data(), input.aad.size(), input.plaintext.data(), out.data() + offset,
             input.plaintext.size(), tag.data(), tag.size());
    const Bytes ciphertext(out.begin() + static_cast<std::ptrdiff_t>(offset), out.end() - 1);
    ASSERT_TRUE(same_bytes(expected.ciphertext, ciphertext));
    ASSERT_TRUE(same_bytes(expected.tag, tag));
    ASSERT_EQ(out.back(), 0xa5) << "wrote past the end of the output";

    Bytes opened(ciphertext.size() + offset + 1, 0x5a);
    ASSERT_EQ(key.open(input.nonce.data(), input.aad.data(), input.aad.size(), ciphertext.data(),
                       opened.data() + offset, ciphertext.size(), tag.data(), tag.size()),
              WC_OK);
    ASSERT_TRUE(
        same_bytes(input.plaintext, Bytes(opened.begin() + static_cast<std::ptrdiff_t>(offset), opened.end() - 1)));
    ASSERT_EQ(opened.back(), 0x5a) << "wrote past the end of the output";
  }

  // Seals and opens through the segmented calls on `workers` workers, into
  // a separate buffer or in place, and compares with OpenSSL's `expected`.
  static void check_segmented(const VaesGcmKey &key, const AeadInput &input, const AeadSealed &expected,
                              unsigned workers, bool in_place) {
    const size_t len = input.plaintext.size();
    Bytes buffer = input.plaintext;
    buffer.push_back(0xa5);  // a guard byte past the end
    Bytes separate(len + 1, 0xa5);
    uint8_t *out = in_place ? buffer.data() : separate.data();
    Bytes tag(input.tag_len, 0);
    key.seal_segmented(input.nonce.data(), input.aad.data(), input.aad.size(), buffer.data(), out, len, tag.data(),
                       tag.size(), workers);
    ASSERT_TRUE(same_bytes(expected.ciphertext, Bytes(out, out + len)));
    ASSERT_TRUE(same_bytes(expected.tag, tag));
    ASSERT_EQ(out[len], 0xa5) << "wrote past the end of the output";

    const uint8_t *ciphertext = out;
    Bytes opened_separately(len + 1, 0x5a);
    uint8_t *opened = in_place ? buffer.data() : opened_separately.data();
    ASSERT_EQ(key.open_segmented(input.nonce.data(), input.aad.data(), input.aad.size(), ciphertext, opened, len,
                                 tag.data(), tag.size(), workers),
              WC_OK);
    ASSERT_TRUE(same_bytes(input.plaintext, Bytes(opened, opened + len)));
    ASSERT_EQ(opened[len], in_place ? 0xa5 : 0x5a) << "wrote past the end of the output";
  }
};

// Every (message length, AAD length) pair in 0..600 x 0..100, one key per
// message length (so 101 messages a key), random nonces and tag lengths.
TEST_P(VaesGcm, EveryShortLengthMatchesOpenSsl) {
  TestRng rng = TestRng::for_current_test();
  for (size_t len = 0; len <= 600; ++len) {
    SCOPED_TRACE("message length " + std::to_string(len));
    AeadInput input = random_aead_input(rng, aead_name(), len, 0);
    const std::unique_ptr<VaesGcmKey> key = keyed(input);
    ASSERT_NE(key, nullptr);
    for (size_t aad_len = 0; aad_len <= 100; ++aad_len) {
      SCOPED_TRACE("AAD length " + std::to_string(aad_len));
      input.nonce = rng.bytes(12);
      input.aad = rng.bytes(aad_len);
      input.plaintext = rng.bytes(len);
      input.tag_len = rng.uniform(WC_AEAD_MIN_TAG_LEN, WC_AEAD_MAX_TAG_LEN);
      check_against_openssl(*key, input);
    }
  }
}

// Lengths at and around multiples of the 256-byte step and of the 64-byte
// register, long AAD, and messages of a mebibyte and more.
TEST_P(VaesGcm, BigAndOddLengthsMatchOpenSsl) {
  TestRng rng = TestRng::for_current_test();
  const std::vector<size_t> lengths = {
      255, 256, 257, 511, 512, 767, 1023, 1024 + 15, 4096 + 63, 65537, (1 << 20), (1 << 20) + 13, (3 << 20) + 255};
  const std::vector<size_t> aad_lengths = {0, 1, 255, 256, 257, 1000, 4099};
  for (size_t len : lengths) {
    for (size_t aad_len : aad_lengths) {
      SCOPED_TRACE("message length " + std::to_string(len) + ", AAD length " + std::to_string(aad_len));
      const AeadInput input = random_aead_input(rng, aead_name(), len, aad_len);
      check_against_openssl(*keyed(input), input);
    }
  }
}

// Output buffers at every offset from 1 to 15 bytes past an allocation's
// start, and sealing and opening in place (out == in).
TEST_P(VaesGcm, UnalignedAndInPlaceMatchOpenSsl) {
  TestRng rng = TestRng::for_current_test();
  for (size_t offset = 1; offset < 16; ++offset) {
    const AeadInput input = random_aead_input(rng, aead_name(), rng.uniform(0, 2000), rng.uniform(0, 300));
    check_against_openssl(*keyed(input), input, offset);
  }
  for (size_t len : {size_t{0}, size_t{15}, size_t{64}, size_t{300}, size_t{4097}}) {
    SCOPED_TRACE("in place, length " + std::to_string(len));
    const AeadInput input = random_aead_input(rng, aead_name(), len, 20);
    const AeadSealed expected = openssl_aead_seal(aead_name(), input);
    const std::unique_ptr<VaesGcmKey> key = keyed(input);
    Bytes buffer = input.plaintext;
    Bytes tag(input.tag_len);
    key->seal(input.nonce.data(), input.aad.data(), input.aad.size(), buffer.data(), buffer.data(), buffer.size(),
              tag.data(), tag.size());
    EXPECT_TRUE(same_bytes(expected.ciphertext, buffer));
    EXPECT_TRUE(same_bytes(expected.tag, tag));
    EXPECT_EQ(key->open(input.nonce.data(), input.aad.data(), input.aad.size(), buffer.data(), buffer.data(),
                        buffer.size(), tag.data(), tag.size()),
              WC_OK);
    EXPECT_TRUE(same_bytes(input.plaintext, buffer));
  }
}

// Any single flipped bit in the tag, the ciphertext or the AAD, a tag from
// another nonce, and a short tag that is a wrong prefix all fail with
// WC_ERR_AUTH; a correct prefix of the tag opens (GCM's truncated tags).
TEST_P(VaesGcm, TamperingIsRejected) {
  TestRng rng = TestRng::for_current_test();
  for (size_t len : {size_t{0}, size_t{1}, size_t{17}, size_t{256}, size_t{1000}}) {
    SCOPED_TRACE("message length " + std::to_string(len));
    const AeadInput input = random_aead_input(rng, aead_name(), len, 33);
    const AeadSealed sealed = openssl_aead_seal(aead_name(), input);
    const std::unique_ptr<VaesGcmKey> key = keyed(input);
    Bytes out(len);
    auto open = [&](const Bytes &nonce, const Bytes &aad, const Bytes &ciphertext, const Bytes &tag) {
      return key->open(nonce.data(), aad.data(), aad.size(), ciphertext.data(), out.data(), ciphertext.size(),
                       tag.data(), tag.size());
    };
    ASSERT_EQ(open(input.nonce, input.aad, sealed.ciphertext, sealed.tag), WC_OK);
    for (size_t bit = 0; bit < 8 * sealed.tag.size(); ++bit) {
      EXPECT_EQ(open(input.nonce, input.aad, sealed.ciphertext, with_bit_flipped(sealed.tag, bit)), WC_ERR_AUTH)
          << "tag bit " << bit;
    }
    for (int trial = 0; trial < 32 && len > 0; ++trial) {
      const size_t bit = rng.uniform(0, 8 * len - 1);
      EXPECT_EQ(open(input.nonce, input.aad, with_bit_flipped(sealed.ciphertext, bit), sealed.tag), WC_ERR_AUTH)
          << "ciphertext bit " << bit;
    }
    for (int trial = 0; trial < 32; ++trial) {
      const size_t bit = rng.uniform(0, 8 * input.aad.size() - 1);
      EXPECT_EQ(open(input.nonce, with_bit_flipped(input.aad, bit), sealed.ciphertext, sealed.tag), WC_ERR_AUTH)
          << "AAD bit " << bit;
    }
    EXPECT_EQ(open(with_bit_flipped(input.nonce, 0), input.aad, sealed.ciphertext, sealed.tag), WC_ERR_AUTH);

    const Bytes prefix(sealed.tag.begin(), sealed.tag.begin() + WC_AEAD_MIN_TAG_LEN);
    EXPECT_EQ(open(input.nonce, input.aad, sealed.ciphertext, prefix), WC_OK);
    EXPECT_EQ(open(input.nonce, input.aad, sealed.ciphertext, with_bit_flipped(prefix, 31)), WC_ERR_AUTH);
  }
}

// The segmented path byte for byte against OpenSSL: lengths around the CPU
// AEAD's threshold and the segment boundaries that 1, 2, 3, 7 and 16
// workers give them (each a whole number of 256-byte steps, so lengths
// just past a multiple of 16 and 256 bytes leave a partial block or step
// in the last segment), up to 16 MiB, and short messages where some
// workers get no segment; AAD of 0, 1, 17 and 4099 bytes; in place and not.
TEST_P(VaesGcm, SegmentedMatchesOpenSsl) {
  TestRng rng = TestRng::for_current_test();
  const std::vector<size_t> lengths = {0,
                                       1,
                                       255,
                                       256,
                                       257,
                                       4097,
                                       kSegmentedMinLen - 1,
                                       kSegmentedMinLen,
                                       kSegmentedMinLen + 1,
                                       kSegmentedMinLen + 15,
                                       kSegmentedMinLen + 16,
                                       kSegmentedMinLen + 255,
                                       kSegmentedMinLen + 256,
                                       kMiB,
                                       kMiB + 13,
                                       3 * kMiB + 255,
                                       16 * kMiB};
  const std::vector<size_t> aad_lengths = {0, 1, 17, 4099};
  for (size_t len : lengths) {
    for (size_t aad_len : aad_lengths) {
      AeadInput input = random_aead_input(rng, aead_name(), len, aad_len);
      input.tag_len = rng.uniform(WC_AEAD_MIN_TAG_LEN, WC_AEAD_MAX_TAG_LEN);
      const AeadSealed expected = openssl_aead_seal(aead_name(), input);
      const std::unique_ptr<VaesGcmKey> key = keyed(input);
      for (unsigned workers : {1u, 2u, 3u, 7u, 16u}) {
        for (bool in_place : {false, true}) {
          SCOPED_TRACE("message length " + std::to_string(len) + ", AAD length " + std::to_string(aad_len) + ", " +
                       std::to_string(workers) + " workers" + (in_place ? ", in place" : ""));
          check_segmented(*key, input, expected, workers, in_place);
        }
      }
    }
  }
}

// A flipped bit in the tag, or in the ciphertext of the last segment, a
// middle one or the first, fails the segmented open with WC_ERR_AUTH.
TEST_P(VaesGcm, SegmentedTamperingIsRejected) {
  TestRng rng = TestRng::for_current_test();
  const size_t len = kMiB + 13;
  const AeadInput input = random_aead_input(rng, aead_name(), len, 17);
  const AeadSealed sealed = openssl_aead_seal(aead_name(), input);
  const std::unique_ptr<VaesGcmKey> key = keyed(input);
  Bytes out(len);
  auto open = [&](const Bytes &ciphertext, const Bytes &tag, unsigned workers) {
    return key->open_segmented(input.nonce.data(), input.aad.data(), input.aad.size(), ciphertext.data(), out.data(),
                               len, tag.data(), tag.size(), workers);
  };
  for (unsigned workers : {3u, 7u}) {
    SCOPED_TRACE(std::to_string(workers) + " workers");
    ASSERT_EQ(open(sealed.ciphertext, sealed.tag, workers), WC_OK);
    for (size_t bit : {size_t{0}, size_t{77}, 8 * sealed.tag.size() - 1}) {
      EXPECT_EQ(open(sealed.ciphertext, with_bit_flipped(sealed.tag, bit), workers), WC_ERR_AUTH) << "tag bit " << bit;
    }
    // Bytes 0, len / 2 (a middle segment for 3 and 7 workers) and the last.
    for (size_t byte : {size_t{0}, len / 2, len - 1}) {
      EXPECT_EQ(open(with_bit_flipped(sealed.ciphertext, 8 * byte + 3), sealed.tag, workers), WC_ERR_AUTH)
          << "ciphertext byte " << byte;
    }
  }
}

// Through the public API with an explicit thread count, a message past the
// threshold (which the CPU AEAD segments when the CPU has VAES) matches
// OpenSSL, and a forged one fails with its output zeroed.
TEST_P(VaesGcm, SegmentedThroughTheApi) {
  TestRng rng = TestRng::for_current_test();
  const wc_options options = make_options(4, WC_BACKEND_CPU);
  const AeadInput input = random_aead_input(rng, aead_name(), 2 * kMiB + 100, 40);
  const AeadSealed expected = openssl_aead_seal(aead_name(), input);
  const AeadSealed sealed = lib_aead_seal(aead_name(), input, options);
  ASSERT_EQ(sealed.status, WC_OK);
  EXPECT_TRUE(same_bytes(expected.ciphertext, sealed.ciphertext));
  EXPECT_TRUE(same_bytes(expected.tag, sealed.tag));
  const AeadOpened opened = lib_aead_open(aead_name(), input, sealed.ciphertext, sealed.tag, options);
  ASSERT_EQ(opened.status, WC_OK);
  EXPECT_TRUE(same_bytes(input.plaintext, opened.out));
  const AeadOpened forged =
      lib_aead_open(aead_name(), input, with_bit_flipped(sealed.ciphertext, 8 * kMiB), sealed.tag, options);
  EXPECT_EQ(forged.status, WC_ERR_AUTH);
  EXPECT_TRUE(same_bytes(Bytes(forged.out.size(), 0), forged.out)) << "a forgery's plaintext was left in the output";
}

// Only AES key sizes key; the CPU AEAD falls back to OpenSSL on nullptr.
TEST(VaesGcmKeying, RejectsOtherKeyLengths) {
  if (!warpcrypt::cpu::vaes_gcm_supported()) GTEST_SKIP() << "this CPU lacks VAES/VPCLMULQDQ/AVX-512";
  for (size_t len : {size_t{0}, size_t{15}, size_t{17}, size_t{31}, size_t{33}}) {
    const Bytes key(len, 0x11);
    EXPECT_EQ(VaesGcmKey::make(key), nullptr) << len << "-byte key";
  }
}

INSTANTIATE_TEST_SUITE_P(KeySizes, VaesGcm, ::testing::Values(128, 192, 256),
                         [](const ::testing::TestParamInfo<int> &param_info) {
                           return "aes_" + std::to_string(param_info.param);
                         });

}  // namespace
}  // namespace wctest
