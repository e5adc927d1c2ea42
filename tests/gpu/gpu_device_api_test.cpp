// The device-pointer API: in place, unaligned pointers, arbitrary stream
// offsets and resuming a chained stream mid-way, each checked against the CPU
// backend and with guard bytes around every buffer.
#include <cuda_runtime_api.h>

#include <algorithm>

#include <gtest/gtest.h>

#include "gpu_support.h"
#include "support/test_rng.h"
#include "support/warpcrypt_calls.h"

namespace wctest {
namespace {

bool is_block_mode(const wc_cipher *cipher) {
  return wc_cipher_block_len(cipher) == 16 || std::string(wc_cipher_name(cipher)).find("-cfb") != std::string::npos;
}

// The CPU's answer for `len` bytes at stream byte `offset` of the message
// whose ciphertext is `input` there: a random-access decryption for the
// keystream modes (the same XOR as encryption), and a plain call otherwise.
Bytes cpu_expected(const GpuMode &mode, const Bytes &key, const Bytes &iv, const Bytes &input, uint64_t offset) {
  // The device calls never pad.
  const wc_cipher *cipher = wc_cipher_unpadded(lookup(mode.cipher));
  const wc_options cpu = make_options(0, WC_BACKEND_CPU);
  if (is_block_mode(cipher)) {
    const LibResult result = lib_crypt(mode.direction, cipher, key, iv, input, cpu);
    EXPECT_EQ(result.status, WC_OK);
    return result.out;
  }
  const LibResult result = lib_decrypt_range(cpu, cipher, key, iv, input, offset + input.size(), offset, input.size());
  EXPECT_EQ(result.status, WC_OK);
  return result.out;
}

wc_status device_call(const GpuMode &mode, uint8_t *out, const uint8_t *in, size_t len, const Bytes &key,
                      const Bytes &iv, uint64_t offset) {
  auto *call = mode.direction == WC_ENCRYPT ? wc_encrypt_device_async : wc_decrypt_device_async;
  const wc_status status = call(lookup(mode.cipher), out, in, len, data_or_dummy(key), key.size(),
                                data_or_dummy(iv), iv.size(), offset, nullptr);
  synchronize_device();
  return status;
}

class GpuDeviceApi : public ::testing::TestWithParam<GpuMode> {
 protected:
  void SetUp() override { WCTEST_REQUIRE_GPU(); }

  size_t random_length(TestRng &rng, size_t most) {
    const size_t len = rng.uniform(1, most);
    return is_block_mode(lookup(GetParam().cipher)) && wc_cipher_block_len(lookup(GetParam().cipher)) == 16
               ? (len + 15) / 16 * 16
               : len;
  }
};

TEST_P(GpuDeviceApi, InPlace) {
  TestRng rng = TestRng::for_current_test();
  const GpuMode &mode = GetParam();
  const wc_cipher *cipher = lookup(mode.cipher);
  for (int trial = 0; trial < 8; ++trial) {
    const Bytes key = rng.bytes(wc_cipher_key_len(cipher));
    const Bytes iv = rng.bytes(wc_cipher_iv_len(cipher));
    const size_t len = random_length(rng, size_t{4} << 20);
    const Bytes input = rng.bytes(len);
    DeviceBuffer buffer(len);
    buffer.upload(input);
    ASSERT_EQ(device_call(mode, buffer.at(0), buffer.at(0), len, key, iv, 0), WC_OK);
    EXPECT_TRUE(same_bytes(cpu_expected(mode, key, iv, input, 0), buffer.download(len))) << "length " << len;
    EXPECT_TRUE(buffer.guard_bytes_intact(len));
  }
}

TEST_P(GpuDeviceApi, UnalignedPointers) {
  TestRng rng = TestRng::for_current_test();
  const GpuMode &mode = GetParam();
  const wc_cipher *cipher = lookup(mode.cipher);
  for (size_t misalign = 1; misalign < 16; ++misalign) {
    const Bytes key = rng.bytes(wc_cipher_key_len(cipher));
    const Bytes iv = rng.bytes(wc_cipher_iv_len(cipher));
    const size_t len = random_length(rng, 300000);
    const size_t in_at = misalign, out_at = rng.uniform(0, 15);
    const Bytes input = rng.bytes(len);
    DeviceBuffer in(len + 16), out(len + 16);
    in.upload(input, in_at);
    ASSERT_EQ(device_call(mode, out.at(out_at), in.at(in_at), len, key, iv, 0), WC_OK);
    EXPECT_TRUE(same_bytes(cpu_expected(mode, key, iv, input, 0), out.download(len, out_at)))
        << "in at +" << in_at << ", out at +" << out_at << ", length " << len;
    // In place at an odd address, too.
    ASSERT_EQ(device_call(mode, in.at(in_at), in.at(in_at), len, key, iv, 0), WC_OK);
    EXPECT_TRUE(same_bytes(cpu_expected(mode, key, iv, input, 0), in.download(len, in_at)));
  }
}

// Keystream modes start at any byte of the stream; chained block modes resume
// at a block boundary with the previous ciphertext block as their IV.
TEST_P(GpuDeviceApi, StreamOffsets) {
  TestRng rng = TestRng::for_current_test();
  const GpuMode &mode = GetParam();
  const wc_cipher *cipher = lookup(mode.cipher);
  const Bytes key = rng.bytes(wc_cipher_key_len(cipher));
  const Bytes iv = rng.bytes(wc_cipher_iv_len(cipher));
  if (!is_block_mode(cipher)) {
    for (int trial = 0; trial < 16; ++trial) {
      const uint64_t offset = trial < 8 ? rng.uniform(0, 1 << 20) : rng.next() >> 20;
      const size_t len = rng.uniform(1, 200000);
      const Bytes input = rng.bytes(len);
      DeviceBuffer buffer(len);
      buffer.upload(input);
      ASSERT_EQ(device_call(mode, buffer.at(0), buffer.at(0), len, key, iv, offset), WC_OK);
      EXPECT_TRUE(same_bytes(cpu_expected(mode, key, iv, input, offset), buffer.download(len)))
          << "offset " << offset << ", length " << len;
    }
    return;
  }
  if (std::string(mode.cipher).find("ecb") != std::string::npos) GTEST_SKIP() << "ECB has no stream position";
  // A whole CBC/CFB stream, decrypted on the CPU, then pieces on the GPU.
  const size_t blocks = 4096;
  const Bytes ciphertext = rng.bytes(16 * blocks);
  const Bytes plaintext = cpu_expected(mode, key, iv, ciphertext, 0);
  DeviceBuffer buffer(ciphertext.size());
  buffer.upload(ciphertext);
  for (int trial = 0; trial < 16; ++trial) {
    const size_t first = rng.uniform(1, blocks - 1);
    const size_t count = rng.uniform(1, blocks - first);
    const Bytes previous(ciphertext.begin() + 16 * (first - 1), ciphertext.begin() + 16 * first);
    DeviceBuffer out(16 * count);
    ASSERT_EQ(device_call(mode, out.at(0), buffer.at(16 * first), 16 * count, key, previous, 16 * first), WC_OK);
    const Bytes expected(plaintext.begin() + 16 * first, plaintext.begin() + 16 * (first + count));
    EXPECT_TRUE(same_bytes(expected, out.download(16 * count))) << "blocks " << first << "+" << count;
  }
}

TEST_P(GpuDeviceApi, ReferenceKernelInPlace) {
  TestRng rng = TestRng::for_current_test();
  const GpuMode &mode = GetParam();
  const wc_cipher *cipher = lookup(mode.cipher);
  const Bytes key = rng.bytes(wc_cipher_key_len(cipher));
  const Bytes iv = rng.bytes(wc_cipher_iv_len(cipher));
  const size_t len = random_length(rng, 1 << 20);
  const Bytes input = rng.bytes(len);
  DeviceBuffer buffer(len);
  buffer.upload(input);
  setenv("WARPCRYPT_GPU_KERNELS", "reference", 1);
  const wc_status status = device_call(mode, buffer.at(0), buffer.at(0), len, key, iv, 0);
  unsetenv("WARPCRYPT_GPU_KERNELS");
  ASSERT_EQ(status, WC_OK);
  EXPECT_TRUE(same_bytes(cpu_expected(mode, key, iv, input, 0), buffer.download(len)));
  EXPECT_TRUE(buffer.guard_bytes_intact(len));
}

// Host-pointer calls on page-locked memory skip the staging copies: the
// pieces go straight between the caller's buffers and the GPU, in place too.
TEST_P(GpuDeviceApi, PageLockedHostMemory) {
  TestRng rng = TestRng::for_current_test();
  const GpuMode &mode = GetParam();
  const wc_cipher *cipher = wc_cipher_unpadded(lookup(mode.cipher));
  const Bytes key = rng.bytes(wc_cipher_key_len(cipher));
  const Bytes iv = rng.bytes(wc_cipher_iv_len(cipher));
  const size_t len = random_length(rng, size_t{80} << 20);  // several staging pieces
  const Bytes input = rng.bytes(len);
  const Bytes expected = cpu_expected(mode, key, iv, input, 0);
  uint8_t *in = nullptr, *out = nullptr;
  ASSERT_EQ(cudaMallocHost(reinterpret_cast<void **>(&in), len), cudaSuccess);
  ASSERT_EQ(cudaMallocHost(reinterpret_cast<void **>(&out), len), cudaSuccess);
  std::copy(input.begin(), input.end(), in);
  const wc_options gpu = make_options(0, WC_BACKEND_GPU);
  auto *call = mode.direction == WC_ENCRYPT ? wc_encrypt : wc_decrypt;
  size_t written = 0;
  EXPECT_EQ(call(&gpu, cipher, out, len, &written, key.data(), key.size(), data_or_dummy(iv), iv.size(), in, len),
            WC_OK);
  EXPECT_TRUE(same_bytes(expected.data(), expected.size(), out, written));
  EXPECT_EQ(call(&gpu, cipher, in, len, &written, key.data(), key.size(), data_or_dummy(iv), iv.size(), in, len),
            WC_OK);
  EXPECT_TRUE(same_bytes(expected.data(), expected.size(), in, written)) << "in place";
  cudaFreeHost(in);
  cudaFreeHost(out);
}

INSTANTIATE_TEST_SUITE_P(Modes, GpuDeviceApi, ::testing::ValuesIn(gpu_modes()), gpu_mode_name);

TEST(GpuDeviceCount, IsTheCudaRuntimesCount) {
  // The library counts through NVML where it can, so as not to start the
  // driver; whatever counted, the answer must be the one CUDA gives once
  // started, or lanes would be placed on devices CUDA does not have.
  WCTEST_REQUIRE_GPU();
  int counted = 0;
  ASSERT_EQ(wc_device_count(&counted), WC_OK);
  int cuda = 0;
  ASSERT_EQ(cudaGetDeviceCount(&cuda), cudaSuccess);
  EXPECT_EQ(counted, cuda);
}

TEST(GpuDeviceApiErrors, RejectsWhatTheGpuCannotDo) {
  WCTEST_REQUIRE_GPU();
  const Bytes key(16, 1), iv(16, 2);
  DeviceBuffer buffer(64);
  // CBC encryption is sequential: only batches run it.
  EXPECT_EQ(wc_encrypt_device_async(lookup("aes-128-cbc"), buffer.at(0), buffer.at(0), 64, key.data(), 16,
                                    iv.data(), 16, 0, nullptr),
            WC_ERR_BACKEND_UNAVAILABLE);
  // ECB and CBC take whole blocks on the device (no padding there).
  EXPECT_EQ(wc_encrypt_device_async(lookup("aes-128-ecb"), buffer.at(0), buffer.at(0), 33, key.data(), 16,
                                    nullptr, 0, 0, nullptr),
            WC_ERR_NOT_BLOCK_ALIGNED);
  EXPECT_EQ(wc_decrypt_device_async(lookup("aes-128-cbc"), buffer.at(0), buffer.at(0), 32, key.data(), 16,
                                    iv.data(), 16, 8, nullptr),
            WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_encrypt_device_async(lookup("aes-128-ctr"), buffer.at(0), buffer.at(0), 64, key.data(), 15,
                                    iv.data(), 16, 0, nullptr),
            WC_ERR_KEY_LEN);
}

}  // namespace
}  // namespace wctest
