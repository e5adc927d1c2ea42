// The AEADs against OpenSSL's EVP called directly, on every backend that is
// present: random lengths 0..4096 and several MiB, random AAD lengths, every
// GCM nonce length up to WC_AEAD_MAX_NONCE_LEN, every tag length; in place;
// batches of mixed messages; and tampering anywhere detected, with nothing
// released.
#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "aead_support.h"
#include "support/cipher_table.h"
#include "support/gpu_modes.h"
#include "support/warpcrypt_calls.h"

namespace wctest {
namespace {

constexpr size_t kMiB = 1024 * 1024;

class AeadDifferential : public ::testing::TestWithParam<std::tuple<std::string, wc_backend>> {
 protected:
  void SetUp() override {
    if (backend() != WC_BACKEND_CPU) WCTEST_REQUIRE_GPU();
  }
  const std::string &name() const { return std::get<std::string>(GetParam()); }
  wc_backend backend() const { return std::get<wc_backend>(GetParam()); }
  wc_options options() const { return make_options(0, backend()); }

  // GCM: the recommended 12 bytes half the time, otherwise any length.
  size_t random_nonce_len() {
    if (!is_gcm(name()) || rng_.uniform(0, 1) == 0) return 12;
    return rng_.uniform(1, WC_AEAD_MAX_NONCE_LEN);
  }
  AeadInput random_input(size_t plaintext_len) {
    const size_t aad_len = rng_.uniform(0, 3) == 0 ? 0 : rng_.uniform(1, 300);
    return random_aead_input(rng_, name(), plaintext_len, aad_len, random_nonce_len(),
                             rng_.uniform(WC_AEAD_MIN_TAG_LEN, WC_AEAD_MAX_TAG_LEN));
  }

  // Seals with both implementations and compares, then opens OpenSSL's
  // output with the library.
  void expect_matches_openssl(const AeadInput &input) {
    SCOPED_TRACE(name() + " length " + std::to_string(input.plaintext.size()) + " aad " +
                 std::to_string(input.aad.size()) + " nonce " + std::to_string(input.nonce.size()) + " tag " +
                 std::to_string(input.tag_len));
    const AeadSealed expected = openssl_aead_seal(name(), input);
    const AeadSealed sealed = lib_aead_seal(name(), input, options());
    ASSERT_EQ(sealed.status, WC_OK);
    EXPECT_TRUE(same_bytes(expected.ciphertext, sealed.ciphertext));
    EXPECT_TRUE(same_bytes(expected.tag, sealed.tag));
    const AeadOpened opened = lib_aead_open(name(), input, expected.ciphertext, expected.tag, options());
    ASSERT_EQ(opened.status, WC_OK);
    EXPECT_TRUE(same_bytes(input.plaintext, opened.out));
  }

  TestRng rng_ = TestRng::for_current_test();
};

TEST_P(AeadDifferential, SampledLengthsUpTo4096) {
  std::vector<size_t> lengths = {0,   1,   15,  16,  17,  31,  32,  33,  63,   64,   65,   127,
                                 128, 129, 255, 256, 257, 511, 512, 1000, 1023, 1024, 4095, 4096};
  for (int i = 0; i < 40; ++i) lengths.push_back(rng_.uniform(0, 4096));
  for (size_t length : lengths) {
    expect_matches_openssl(random_input(length));
    if (HasFatalFailure()) return;
  }
}

// Long enough for the GPU to spread a message over many thread blocks, one
// length ragged and one a power of two.
TEST_P(AeadDifferential, MultiMebibyteLengths) {
  for (size_t length : {3 * kMiB + 5, 8 * kMiB}) {
    expect_matches_openssl(random_input(length));
    if (HasFatalFailure()) return;
  }
}

TEST_P(AeadDifferential, EveryGcmNonceLength) {
  if (!is_gcm(name())) GTEST_SKIP() << "ChaCha20-Poly1305 takes 12-byte nonces only";
  for (size_t nonce_len = 1; nonce_len <= WC_AEAD_MAX_NONCE_LEN; ++nonce_len) {
    expect_matches_openssl(random_aead_input(rng_, name(), rng_.uniform(0, 200), rng_.uniform(0, 40), nonce_len));
    if (HasFatalFailure()) return;
  }
}

// out == in: the ciphertext replaces the plaintext and back.
TEST_P(AeadDifferential, InPlace) {
  const wc_aead *aead = wc_aead_by_name(name().c_str());
  const wc_options on_backend = options();
  for (size_t length : {size_t{0}, size_t{100}, size_t{70000}, 2 * kMiB + 3}) {
    const AeadInput input = random_input(length);
    const AeadSealed expected = openssl_aead_seal(name(), input);
    Bytes buffer = input.plaintext;
    buffer.push_back(0);
    Bytes tag(input.tag_len);
    size_t written = 0;
    ASSERT_EQ(wc_aead_seal(&on_backend, aead, buffer.data(), length, &written, tag.data(), tag.size(),
                           input.key.data(), input.key.size(), input.nonce.data(), input.nonce.size(),
                           data_or_dummy(input.aad), input.aad.size(), buffer.data(), length),
              WC_OK);
    EXPECT_TRUE(same_bytes(expected.ciphertext.data(), length, buffer.data(), written));
    EXPECT_TRUE(same_bytes(expected.tag, tag));
    ASSERT_EQ(wc_aead_open(&on_backend, aead, buffer.data(), length, &written, input.key.data(), input.key.size(),
                           input.nonce.data(), input.nonce.size(), data_or_dummy(input.aad), input.aad.size(),
                           buffer.data(), length, tag.data(), tag.size()),
              WC_OK);
    EXPECT_TRUE(same_bytes(input.plaintext.data(), length, buffer.data(), written));
  }
}

// Any change to ciphertext, tag, AAD, nonce or key is refused, and the
// output holds zeros only.
TEST_P(AeadDifferential, TamperingIsDetected) {
  for (size_t length : {size_t{0}, size_t{1}, size_t{64}, size_t{1000}, kMiB + 17}) {
    AeadInput input = random_aead_input(rng_, name(), length, 20);
    const AeadSealed sealed = lib_aead_seal(name(), input, options());
    ASSERT_EQ(sealed.status, WC_OK);
    auto expect_rejected = [&](const AeadInput &changed, const Bytes &ciphertext, const Bytes &tag,
                               const std::string &what) {
      const AeadOpened opened = lib_aead_open(name(), changed, ciphertext, tag, options());
      EXPECT_EQ(opened.status, WC_ERR_AUTH) << what << ", length " << length;
      EXPECT_TRUE(all_zero(opened.out.data(), opened.out.size())) << what;
    };
    for (int trial = 0; trial < 3 && length != 0; ++trial) {
      const size_t bit = rng_.uniform(0, 8 * length - 1);
      expect_rejected(input, with_bit_flipped(sealed.ciphertext, bit), sealed.tag, "ciphertext bit " + std::to_string(bit));
    }
    expect_rejected(input, sealed.ciphertext, with_bit_flipped(sealed.tag, rng_.uniform(0, 127)), "tag");
    AeadInput changed = input;
    changed.aad = with_bit_flipped(input.aad, rng_.uniform(0, 8 * input.aad.size() - 1));
    expect_rejected(changed, sealed.ciphertext, sealed.tag, "aad");
    changed = input;
    changed.aad.push_back(0);
    expect_rejected(changed, sealed.ciphertext, sealed.tag, "longer aad");
    changed = input;
    changed.nonce = with_bit_flipped(input.nonce, rng_.uniform(0, 95));
    expect_rejected(changed, sealed.ciphertext, sealed.tag, "nonce");
    changed = input;
    changed.key = with_bit_flipped(input.key, rng_.uniform(0, 8 * input.key.size() - 1));
    expect_rejected(changed, sealed.ciphertext, sealed.tag, "key");
    if (length != 0) {
      const Bytes shorter(sealed.ciphertext.begin(), sealed.ciphertext.end() - 1);
      expect_rejected(input, shorter, sealed.tag, "truncated ciphertext");
    }
  }
}

// A batch of mixed messages seals as each would alone; opening reports each
// message's status, zeroes the failed ones and releases the others.
TEST_P(AeadDifferential, BatchesOfMixedMessages) {
  const wc_aead *aead = wc_aead_by_name(name().c_str());
  const wc_options on_backend = options();
  const Bytes key = rng_.bytes(wc_aead_key_len(aead));
  const size_t tag_len = 16;
  std::vector<AeadInput> inputs;
  for (int i = 0; i < 40; ++i) {
    const size_t length = i % 10 == 9 ? rng_.uniform(100000, 600000) : rng_.uniform(0, 3000);
    AeadInput input = random_aead_input(rng_, name(), length, rng_.uniform(0, 2) * rng_.uniform(0, 64),
                                        random_nonce_len(), tag_len);
    input.key = key;
    inputs.push_back(std::move(input));
  }
  std::vector<Bytes> buffers(inputs.size());
  std::vector<Bytes> tags(inputs.size(), Bytes(tag_len));
  std::vector<wc_aead_message> messages(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    buffers[i] = inputs[i].plaintext;
    buffers[i].push_back(0);
    messages[i] = {buffers[i].data(), buffers[i].data(), inputs[i].plaintext.size(), inputs[i].nonce.data(),
                   inputs[i].nonce.size(), data_or_dummy(inputs[i].aad), inputs[i].aad.size(), tags[i].data()};
  }
  ASSERT_EQ(wc_aead_seal_batch(&on_backend, aead, messages.data(), messages.size(), tag_len, key.data(), key.size()),
            WC_OK);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const AeadSealed expected = openssl_aead_seal(name(), inputs[i]);
    EXPECT_TRUE(same_bytes(expected.ciphertext.data(), expected.ciphertext.size(), buffers[i].data(),
                           inputs[i].plaintext.size()))
        << "message " << i;
    EXPECT_TRUE(same_bytes(expected.tag, tags[i])) << "message " << i;
  }
  const std::vector<size_t> tampered = {3, 9, 27};
  for (size_t i : tampered) tags[i][0] ^= 1;
  std::vector<wc_status> results(inputs.size(), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_aead_open_batch(&on_backend, aead, results.data(), messages.data(), messages.size(), tag_len,
                               key.data(), key.size()),
            WC_ERR_AUTH);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const bool was_tampered = std::find(tampered.begin(), tampered.end(), i) != tampered.end();
    EXPECT_EQ(results[i], was_tampered ? WC_ERR_AUTH : WC_OK) << "message " << i;
    if (was_tampered) {
      EXPECT_TRUE(all_zero(buffers[i].data(), inputs[i].plaintext.size())) << "message " << i;
    } else {
      EXPECT_TRUE(same_bytes(inputs[i].plaintext.data(), inputs[i].plaintext.size(), buffers[i].data(),
                             inputs[i].plaintext.size()))
          << "message " << i;
    }
  }
}

std::vector<std::tuple<std::string, wc_backend>> all_cases() {
  std::vector<std::tuple<std::string, wc_backend>> cases;
  for (wc_backend backend : {WC_BACKEND_CPU, WC_BACKEND_GPU}) {
    for (const std::string &name : aead_names()) cases.emplace_back(name, backend);
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Aeads, AeadDifferential, ::testing::ValuesIn(all_cases()), [](const auto &param_info) {
  return identifier_from(std::get<std::string>(param_info.param)) +
         (std::get<wc_backend>(param_info.param) == WC_BACKEND_CPU ? "_cpu" : "_gpu");
});

}  // namespace
}  // namespace wctest
