// The GPU against the CPU backend on random data: every length 0..4096 and
// random lengths up to 64 MiB through the host-pointer path, for every mode
// the GPU runs and every key size. The CPU backend is itself checked against
// OpenSSL and libsodium by the unit tests.
#include <gtest/gtest.h>

#include "gpu_support.h"
#include "support/test_rng.h"
#include "support/warpcrypt_calls.h"

namespace wctest {
namespace {

class GpuDifferential : public ::testing::TestWithParam<GpuMode> {
 protected:
  void SetUp() override { WCTEST_REQUIRE_GPU(); }

  // Encrypts random plaintext on the CPU (padding on for ECB and CBC), then
  // checks the GPU's encryption or decryption against it.
  void check_length(TestRng &rng, const Bytes &key, const Bytes &iv, size_t len, wc_backend backend) {
    const GpuMode &mode = GetParam();
    const wc_cipher *cipher = lookup(mode.cipher);
    const Bytes plaintext = rng.bytes(len);
    const LibResult reference = lib_crypt(WC_ENCRYPT, cipher, key, iv, plaintext, make_options(0, WC_BACKEND_CPU));
    ASSERT_EQ(reference.status, WC_OK);
    const wc_options on_gpu = make_options(0, backend);
    if (mode.direction == WC_ENCRYPT) {
      const LibResult got = lib_crypt(WC_ENCRYPT, cipher, key, iv, plaintext, on_gpu);
      ASSERT_EQ(got.status, WC_OK) << "length " << len;
      ASSERT_TRUE(same_bytes(reference.out, got.out)) << "length " << len;
    } else {
      const LibResult got = lib_crypt(WC_DECRYPT, cipher, key, iv, reference.out, on_gpu);
      ASSERT_EQ(got.status, WC_OK) << "length " << len;
      ASSERT_TRUE(same_bytes(plaintext, got.out)) << "length " << len;
    }
  }
};

TEST_P(GpuDifferential, EveryLengthUpTo4096) {
  TestRng rng = TestRng::for_current_test();
  const wc_cipher *cipher = lookup(GetParam().cipher);
  const Bytes key = rng.bytes(wc_cipher_key_len(cipher));
  const Bytes iv = rng.bytes(wc_cipher_iv_len(cipher));
  for (size_t len = 0; len <= 4096; ++len) check_length(rng, key, iv, len, WC_BACKEND_GPU);
}

TEST_P(GpuDifferential, RandomLengthsUpTo64MiB) {
  TestRng rng = TestRng::for_current_test();
  const wc_cipher *cipher = lookup(GetParam().cipher);
  for (int trial = 0; trial < 3; ++trial) {
    const Bytes key = rng.bytes(wc_cipher_key_len(cipher));
    const Bytes iv = rng.bytes(wc_cipher_iv_len(cipher));
    check_length(rng, key, iv, rng.uniform(4097, size_t{64} << 20), WC_BACKEND_GPU);
  }
}

// The reference kernels (WARPCRYPT_GPU_KERNELS=reference) compute the same
// function, just slowly.
TEST_P(GpuDifferential, ReferenceKernelAgrees) {
  TestRng rng = TestRng::for_current_test();
  const wc_cipher *cipher = lookup(GetParam().cipher);
  const Bytes key = rng.bytes(wc_cipher_key_len(cipher));
  const Bytes iv = rng.bytes(wc_cipher_iv_len(cipher));
  setenv("WARPCRYPT_GPU_KERNELS", "reference", 1);
  for (size_t len : {size_t{0}, size_t{1}, size_t{17}, size_t{4096}, size_t{1} << 20, (size_t{3} << 20) + 5}) {
    check_length(rng, key, iv, len, WC_BACKEND_GPU);
  }
  unsetenv("WARPCRYPT_GPU_KERNELS");
}

INSTANTIATE_TEST_SUITE_P(Modes, GpuDifferential, ::testing::ValuesIn(gpu_modes()), gpu_mode_name);

}  // namespace
}  // namespace wctest
