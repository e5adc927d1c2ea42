// Splitting CPU work over lanes must not change a single byte: 2, 4 and 7
// threads (7 so chunks fall unevenly) give exactly what one thread gives.
// The pool's copy, which stages pageable AEAD pieces for the GPU's lanes,
// moves exactly the bytes asked for, whatever the worker count.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/thread_pool.h"
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

TEST(ThreadedEqualsSingleThreaded, PoolCopyMovesExactlyTheBytesAsked) {
  TestRng rng = TestRng::for_current_test();
  constexpr size_t kPiece = warpcrypt::ThreadPool::kCopyPiece;
  for (const size_t len : {size_t{0}, size_t{1}, kPiece - 1, kPiece, 5 * kPiece + 12345}) {
    for (const unsigned workers : {1u, 3u, 16u}) {
      const Bytes source = rng.bytes(len);
      Bytes target(len + 64, 0xa5);
      warpcrypt::ThreadPool::instance().copy(target.data() + 32, source.data(), len, workers);
      EXPECT_TRUE(std::equal(source.begin(), source.end(), target.begin() + 32)) << len << " bytes, " << workers;
      for (size_t i = 0; i < 32; ++i) {
        ASSERT_EQ(target[i], 0xa5) << "before the copy, " << len << " bytes, " << workers;
        ASSERT_EQ(target[32 + len + i], 0xa5) << "after the copy, " << len << " bytes, " << workers;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllCiphers, ThreadedEqualsSingleThreadedTest,
                         ::testing::ValuesIn(all_cipher_specs()),
                         [](const ::testing::TestParamInfo<CipherSpec> &param_info) {
                           return identifier_from(param_info.param.name);
                         });

}  // namespace
}  // namespace wctest
