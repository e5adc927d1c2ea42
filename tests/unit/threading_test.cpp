// Splitting CPU work over lanes must not change a single byte: 2, 4 and 7
// threads (7 so chunks fall unevenly) give exactly what one thread gives.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/bytes.h"
#include "support/cipher_table.h"
#include "support/test_rng.h"
#include "support/warpcrypt_calls.h"

namespace wctest {
namespace {

class ThreadedEqualsSingleThreadedTest : public ::testing::TestWithParam<CipherSpec> {};

TEST_P(ThreadedEqualsSingleThreadedTest, BothDirections) {
  const CipherSpec &spec = GetParam();
  const wc_cipher *cipher = lookup(spec.name);
  ASSERT_NE(cipher, nullptr);
  TestRng rng = TestRng::for_current_test();
  const Bytes key = rng.bytes(spec.key_len);
  const Bytes iv = rng.bytes(spec.iv_len);
  // 5 MiB + 3: a ragged tail for the stream modes; padding makes ECB/CBC whole.
  const Bytes plaintext = rng.bytes(5 * 1024 * 1024 + 3);

  const wc_options one_thread = make_options(1, WC_BACKEND_CPU);
  const LibResult reference_ciphertext =
      lib_crypt(WC_ENCRYPT, cipher, key, iv, plaintext, one_thread);
  ASSERT_EQ(reference_ciphertext.status, WC_OK);
  const LibResult reference_plaintext =
      lib_crypt(WC_DECRYPT, cipher, key, iv, reference_ciphertext.out, one_thread);
  ASSERT_EQ(reference_plaintext.status, WC_OK);
  EXPECT_TRUE(same_bytes(plaintext, reference_plaintext.out));

  for (unsigned threads : {2u, 4u, 7u}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    const wc_options options = make_options(threads, WC_BACKEND_CPU);
    const LibResult ciphertext = lib_crypt(WC_ENCRYPT, cipher, key, iv, plaintext, options);
    ASSERT_EQ(ciphertext.status, WC_OK);
    EXPECT_TRUE(same_bytes(reference_ciphertext.out, ciphertext.out));
    const LibResult decrypted =
        lib_crypt(WC_DECRYPT, cipher, key, iv, reference_ciphertext.out, options);
    ASSERT_EQ(decrypted.status, WC_OK);
    EXPECT_TRUE(same_bytes(plaintext, decrypted.out));
  }
}

INSTANTIATE_TEST_SUITE_P(AllCiphers, ThreadedEqualsSingleThreadedTest,
                         ::testing::ValuesIn(all_cipher_specs()),
                         [](const ::testing::TestParamInfo<CipherSpec> &param_info) {
                           return identifier_from(param_info.param.name);
                         });

}  // namespace
}  // namespace wctest
