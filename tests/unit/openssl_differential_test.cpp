// The library against OpenSSL EVP called directly with the whole buffer in
// one call. The library splits long inputs into chunks on a thread pool, so
// agreement at every length, alignment and in place checks the chunking.
// Salsa20 has no OpenSSL counterpart; salsa20_test.cpp covers it.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/bytes.h"
#include "support/cipher_table.h"
#include "support/openssl_oracle.h"
#include "support/test_rng.h"
#include "support/warpcrypt_calls.h"

namespace wctest {
namespace {

constexpr size_t kMiB = 1024 * 1024;

struct DifferentialCase {
  CipherSpec spec;
  bool padding;  // only ECB and CBC have a padded and an unpadded variant
};

std::vector<DifferentialCase> differential_cases() {
  std::vector<DifferentialCase> cases;
  for (const CipherSpec &spec : openssl_cipher_specs()) {
    cases.push_back({spec, true});
    if (spec.padded) cases.push_back({spec, false});
  }
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<DifferentialCase> &param_info) {
  std::string name = identifier_from(param_info.param.spec.name);
  if (param_info.param.spec.padded) name += param_info.param.padding ? "_pad" : "_nopad";
  return name;
}

class OpenSslDifferentialTest : public ::testing::TestWithParam<DifferentialCase> {
 protected:
  void SetUp() override {
    cipher_ = with_padding(lookup(spec().name), GetParam().padding);
    ASSERT_NE(cipher_, nullptr) << spec().name;
    options_ = make_options();
  }

  const CipherSpec &spec() const { return GetParam().spec; }
  bool unpadded_block_mode() const { return spec().padded && !GetParam().padding; }
  // Without padding ECB and CBC take whole blocks only.
  size_t usable_length(size_t length) const {
    return unpadded_block_mode() ? length - length % 16 : length;
  }

  // Encrypts `plaintext` with both implementations and compares, then decrypts
  // OpenSSL's ciphertext with the library and expects the plaintext back.
  void expect_both_directions_match(const Bytes &plaintext) {
    const Bytes key = rng_.bytes(spec().key_len);
    const Bytes iv = rng_.bytes(spec().iv_len);
    SCOPED_TRACE(spec().name + " length " + std::to_string(plaintext.size()) + " key " +
                 to_hex(key) + " iv " + to_hex(iv));
    const auto expected =
        openssl_crypt(spec().name, WC_ENCRYPT, key, iv, plaintext, GetParam().padding);
    ASSERT_TRUE(expected.has_value());
    const LibResult encrypted = lib_crypt(WC_ENCRYPT, cipher_, key, iv, plaintext, options_);
    ASSERT_EQ(encrypted.status, WC_OK);
    EXPECT_TRUE(same_bytes(*expected, encrypted.out));
    const LibResult decrypted = lib_crypt(WC_DECRYPT, cipher_, key, iv, *expected, options_);
    ASSERT_EQ(decrypted.status, WC_OK);
    EXPECT_TRUE(same_bytes(plaintext, decrypted.out));
  }

  const wc_cipher *cipher_ = nullptr;
  wc_options options_{};
  TestRng rng_ = TestRng::for_current_test();
};

// Block-boundary lengths, then a random sample of 0..4096.
TEST_P(OpenSslDifferentialTest, SampledLengthsUpTo4096) {
  std::vector<size_t> lengths = {0,  1,  2,   15,  16,  17,  31,   32,   33,   47,  48,
                                 63, 64, 65,  127, 128, 129, 255,  256,  257,  511, 512,
                                 513, 1000, 1023, 1024, 1025, 4095, 4096};
  for (int i = 0; i < 48; ++i) lengths.push_back(rng_.uniform(0, 4096));
  for (size_t length : lengths) {
    expect_both_directions_match(rng_.bytes(usable_length(length)));
    if (HasFatalFailure()) return;
  }
}

// Lengths long enough for the thread pool to split, one of them ragged.
TEST_P(OpenSslDifferentialTest, MultiMebibyteLengths) {
  for (size_t length : {3 * kMiB + 5, 8 * kMiB}) {
    expect_both_directions_match(rng_.bytes(usable_length(length)));
    if (HasFatalFailure()) return;
  }
}

// In and out start at every misalignment 1..15 (each against a different
// misalignment of the other), on a short and on a chunked length.
TEST_P(OpenSslDifferentialTest, UnalignedBuffers) {
  for (size_t length : {usable_length(1000 + 7), usable_length(kMiB + 9)}) {
    for (size_t in_shift = 1; in_shift < 16; ++in_shift) {
      const size_t out_shift = 16 - in_shift;
      const Bytes key = rng_.bytes(spec().key_len);
      const Bytes iv = rng_.bytes(spec().iv_len);
      const Bytes plaintext = rng_.bytes(length);
      SCOPED_TRACE("length " + std::to_string(length) + " in +" + std::to_string(in_shift) +
                   " out +" + std::to_string(out_shift));
      const auto expected =
          openssl_crypt(spec().name, WC_ENCRYPT, key, iv, plaintext, GetParam().padding);
      ASSERT_TRUE(expected.has_value());

      // Encrypt from a misaligned copy of the plaintext into a misaligned output.
      Bytes in_storage(length + 16);
      std::memcpy(in_storage.data() + in_shift, plaintext.data(), length);
      const size_t cap = wc_encrypt_bound(cipher_, length);
      Bytes out_storage(cap + 16);
      size_t out_len = 0;
      ASSERT_EQ(wc_encrypt(&options_, cipher_, out_storage.data() + out_shift, cap, &out_len,
                           key.data(), key.size(), data_or_dummy(iv), iv.size(),
                           in_storage.data() + in_shift, length),
                WC_OK);
      EXPECT_TRUE(same_bytes(expected->data(), expected->size(),
                             out_storage.data() + out_shift, out_len));

      // And back, with the misalignments swapped.
      Bytes cipher_storage(out_shift, 0);
      cipher_storage.insert(cipher_storage.end(), expected->begin(), expected->end());
      Bytes plain_storage(expected->size() + 16);
      ASSERT_EQ(wc_decrypt(&options_, cipher_, plain_storage.data() + in_shift,
                           expected->size(), &out_len, key.data(), key.size(),
                           data_or_dummy(iv), iv.size(), cipher_storage.data() + out_shift,
                           expected->size()),
                WC_OK);
      EXPECT_TRUE(same_bytes(plaintext.data(), plaintext.size(),
                             plain_storage.data() + in_shift, out_len));
    }
  }
}

// out == in: encrypt a buffer over itself, then decrypt it over itself.
TEST_P(OpenSslDifferentialTest, InPlace) {
  for (size_t length : {usable_length(0), usable_length(777), usable_length(3 * kMiB + 5)}) {
    const Bytes key = rng_.bytes(spec().key_len);
    const Bytes iv = rng_.bytes(spec().iv_len);
    const Bytes plaintext = rng_.bytes(length);
    SCOPED_TRACE("length " + std::to_string(length));
    const auto expected =
        openssl_crypt(spec().name, WC_ENCRYPT, key, iv, plaintext, GetParam().padding);
    ASSERT_TRUE(expected.has_value());

    const size_t cap = wc_encrypt_bound(cipher_, length);
    Bytes buffer(cap + 1);  // +1: a valid address even when cap is 0
    std::copy(plaintext.begin(), plaintext.end(), buffer.begin());
    size_t out_len = 0;
    ASSERT_EQ(wc_encrypt(&options_, cipher_, buffer.data(), cap, &out_len, key.data(),
                         key.size(), data_or_dummy(iv), iv.size(), buffer.data(), length),
              WC_OK);
    EXPECT_TRUE(same_bytes(expected->data(), expected->size(), buffer.data(), out_len));

    const size_t ciphertext_len = out_len;
    ASSERT_EQ(wc_decrypt(&options_, cipher_, buffer.data(), ciphertext_len, &out_len,
                         key.data(), key.size(), data_or_dummy(iv), iv.size(), buffer.data(),
                         ciphertext_len),
              WC_OK);
    EXPECT_TRUE(same_bytes(plaintext.data(), plaintext.size(), buffer.data(), out_len));
  }
}

INSTANTIATE_TEST_SUITE_P(AllOpenSslCiphers, OpenSslDifferentialTest,
                         ::testing::ValuesIn(differential_cases()), case_name);

// Every length 0..4096 for one cipher of each family the library chunks
// differently: a counter mode, a padded chained mode and ChaCha20.
class EveryShortLengthTest : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryShortLengthTest, MatchesOpenSslInBothDirections) {
  const CipherSpec &spec = cipher_spec(GetParam());
  const wc_cipher *cipher = lookup(spec.name);
  ASSERT_NE(cipher, nullptr);
  TestRng rng = TestRng::for_current_test();
  const wc_options options = make_options();
  const Bytes key = rng.bytes(spec.key_len);
  const Bytes iv = rng.bytes(spec.iv_len);
  const Bytes message = rng.bytes(4096);
  for (size_t length = 0; length <= message.size(); ++length) {
    SCOPED_TRACE("length " + std::to_string(length));
    const Bytes plaintext(message.begin(), message.begin() + static_cast<ptrdiff_t>(length));
    const auto expected = openssl_crypt(spec.name, WC_ENCRYPT, key, iv, plaintext, true);
    ASSERT_TRUE(expected.has_value());
    const LibResult encrypted = lib_crypt(WC_ENCRYPT, cipher, key, iv, plaintext, options);
    ASSERT_EQ(encrypted.status, WC_OK);
    ASSERT_TRUE(same_bytes(*expected, encrypted.out));
    const LibResult decrypted = lib_crypt(WC_DECRYPT, cipher, key, iv, *expected, options);
    ASSERT_EQ(decrypted.status, WC_OK);
    ASSERT_TRUE(same_bytes(plaintext, decrypted.out));
  }
}

INSTANTIATE_TEST_SUITE_P(FastCiphers, EveryShortLengthTest,
                         ::testing::Values("aes-128-ctr", "aes-256-cbc", "chacha20"),
                         [](const ::testing::TestParamInfo<std::string> &param_info) {
                           return identifier_from(param_info.param);
                         });

}  // namespace
}  // namespace wctest
