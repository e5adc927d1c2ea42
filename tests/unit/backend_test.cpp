// Backend selection: asking for the GPU without a usable device is an error,
// never a silent fallback; the automatic policy runs on the CPU then, and a
// context reports the backend that actually runs it. The list of backends.
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/bytes.h"
#include "support/warpcrypt_calls.h"

namespace wctest {
namespace {

int device_count() {
  int count = -1;
  EXPECT_EQ(wc_device_count(&count), WC_OK);
  EXPECT_GE(count, 0);
  return count;
}

TEST(BackendTest, DeviceCountIsNeverAnError) {
  const int count = device_count();
  if (!wc_built_with_cuda()) {
    EXPECT_EQ(count, 0) << "a build without CUDA has no devices";
  }
}

TEST(BackendTest, GpuRequestedWithoutDeviceIsNoDevice) {
  if (device_count() > 0) GTEST_SKIP() << "this machine has a CUDA device";
  const wc_cipher *cipher = lookup("aes-128-ctr");
  ASSERT_NE(cipher, nullptr);
  const Bytes key(16, 0x01);
  const Bytes iv(16, 0x02);
  const Bytes message(4096, 0x42);

  const wc_options gpu = make_options(0, WC_BACKEND_GPU);
  Bytes out(message.size(), 0xa5);
  size_t out_len = 0;
  EXPECT_EQ(wc_encrypt(&gpu, cipher, out.data(), out.size(), &out_len, key.data(), key.size(),
                       iv.data(), iv.size(), message.data(), message.size()),
            WC_ERR_NO_DEVICE);
  EXPECT_TRUE(all_zero(out.data(), out.size()));
  out.assign(message.size(), 0xa5);
  EXPECT_EQ(wc_decrypt(&gpu, cipher, out.data(), out.size(), &out_len, key.data(),
                       key.size(), iv.data(), iv.size(), message.data(), message.size()),
            WC_ERR_NO_DEVICE);
  EXPECT_TRUE(all_zero(out.data(), out.size()));

  wc_ctx *ctx = nullptr;
  EXPECT_EQ(wc_ctx_new(&ctx, &gpu, cipher, WC_ENCRYPT, key.data(), key.size(), iv.data(),
                       iv.size()),
            WC_ERR_NO_DEVICE);
  wc_ctx_free(ctx);
}

// The device-pointer calls have no CPU fallback at all. Host buffers stand in
// for device ones: without a device the call must refuse before touching them.
TEST(BackendTest, DevicePointerCallsWithoutDeviceAreNoDevice) {
  if (device_count() > 0) GTEST_SKIP() << "this machine has a CUDA device";
  const wc_cipher *cipher = lookup("aes-128-ctr");
  ASSERT_NE(cipher, nullptr);
  const Bytes key(16, 0x01);
  const Bytes iv(16, 0x02);
  Bytes buffer(256, 0x42);
  EXPECT_EQ(wc_encrypt_device_async(cipher, buffer.data(), buffer.data(),
                                    buffer.size(), key.data(), key.size(), iv.data(), iv.size(),
                                    0, nullptr),
            WC_ERR_NO_DEVICE);
  EXPECT_EQ(wc_decrypt_device_async(cipher, buffer.data(), buffer.data(),
                                    buffer.size(), key.data(), key.size(), iv.data(), iv.size(),
                                    0, nullptr),
            WC_ERR_NO_DEVICE);
}

// The device-memory and stream-order calls too: each refuses without a
// device, before touching host memory handed to it, and a missing pointer
// is the caller's error on every build.
TEST(BackendTest, DeviceMemoryCallsWithoutDeviceAreNoDevice) {
  if (device_count() > 0) GTEST_SKIP() << "this machine has a CUDA device";
  Bytes buffer(64, 0x42);
  int device = 7;
  EXPECT_EQ(wc_device_of(buffer.data(), &device), WC_ERR_NO_DEVICE);
  EXPECT_EQ(device, 7);
  EXPECT_EQ(wc_cuda_stream_wait(0, nullptr, nullptr), WC_ERR_NO_DEVICE);
  EXPECT_EQ(wc_cuda_stream_wait(-1, nullptr, nullptr), WC_ERR_NO_DEVICE);
  void *memory = buffer.data();
  EXPECT_EQ(wc_device_alloc_async(0, &memory, 64, nullptr), WC_ERR_NO_DEVICE);
  EXPECT_EQ(memory, nullptr) << "a failed allocation leaves no pointer to free";
  EXPECT_EQ(wc_device_free_async(0, nullptr, nullptr), WC_OK) << "freeing NULL does nothing, as free(NULL)";
  EXPECT_EQ(wc_device_free_async(0, buffer.data(), nullptr), WC_ERR_NO_DEVICE);
  EXPECT_EQ(wc_device_clear_async(0, buffer.data(), buffer.size(), nullptr), WC_ERR_NO_DEVICE);
  Bytes host(64, 0x17);
  EXPECT_EQ(wc_device_read(0, host.data(), buffer.data(), 64, nullptr), WC_ERR_NO_DEVICE);
  EXPECT_EQ(buffer, Bytes(64, 0x42));
  EXPECT_EQ(host, Bytes(64, 0x17));
  memory = buffer.data();
  EXPECT_EQ(wc_host_alloc_pinned(&memory, 64), WC_ERR_NO_DEVICE);
  EXPECT_EQ(memory, nullptr);
  wc_host_free_pinned(nullptr);
}

TEST(BackendTest, DeviceMemoryCallsRefuseMissingPointers) {
  int device = 0;
  EXPECT_EQ(wc_device_of(nullptr, &device), WC_ERR_INVALID_ARGUMENT);
  Bytes buffer(16);
  EXPECT_EQ(wc_device_of(buffer.data(), nullptr), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_device_alloc_async(0, nullptr, 64, nullptr), WC_ERR_INVALID_ARGUMENT);
  void *memory = nullptr;
  EXPECT_EQ(wc_device_alloc_async(0, &memory, 0, nullptr), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_device_clear_async(0, nullptr, 16, nullptr), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_device_read(0, nullptr, buffer.data(), 16, nullptr), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_device_read(0, buffer.data(), nullptr, 16, nullptr), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_host_alloc_pinned(nullptr, 16), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_host_alloc_pinned(&memory, 0), WC_ERR_INVALID_ARGUMENT);
}

TEST(BackendTest, ContextsReportTheBackendThatRuns) {
  const wc_cipher *cipher = lookup("chacha20");
  ASSERT_NE(cipher, nullptr);
  const Bytes key(32, 0x01);
  const Bytes iv(16, 0x02);

  const wc_options cpu = make_options(0, WC_BACKEND_CPU);
  wc_ctx *ctx = nullptr;
  ASSERT_EQ(wc_ctx_new(&ctx, &cpu, cipher, WC_ENCRYPT, key.data(), key.size(), iv.data(),
                       iv.size()),
            WC_OK);
  EXPECT_EQ(wc_ctx_backend(ctx), WC_BACKEND_CPU);
  wc_ctx_free(ctx);

  if (device_count() > 0) return;  // with a device, AUTO may pick either
  const wc_options automatic = make_options(0, WC_BACKEND_AUTO);
  ctx = nullptr;
  ASSERT_EQ(wc_ctx_new(&ctx, &automatic, cipher, WC_ENCRYPT, key.data(), key.size(),
                       iv.data(), iv.size()),
            WC_OK);
  EXPECT_EQ(wc_ctx_backend(ctx), WC_BACKEND_CPU) << "no device: auto must run on the CPU";
  wc_ctx_free(ctx);
}

// wc_backend_at lists every backend of the enum once, in its order, each with
// a name of its own; past the end come WC_BACKEND_AUTO and "unknown".
TEST(BackendTest, BackendsAreListedWithTheirNames) {
  std::vector<wc_backend> listed;
  std::set<std::string> names;
  for (size_t i = 0; i < wc_backend_count(); ++i) {
    const wc_backend backend = wc_backend_at(i);
    listed.push_back(backend);
    ASSERT_NE(wc_backend_name(backend), nullptr) << i;
    EXPECT_STRNE(wc_backend_name(backend), "unknown") << i;
    EXPECT_TRUE(names.insert(wc_backend_name(backend)).second) << wc_backend_name(backend) << " named twice";
  }
  EXPECT_EQ(listed, (std::vector<wc_backend>{WC_BACKEND_AUTO, WC_BACKEND_CPU, WC_BACKEND_GPU, WC_BACKEND_HYBRID}));
  EXPECT_EQ(wc_backend_at(wc_backend_count()), WC_BACKEND_AUTO);
  EXPECT_STREQ(wc_backend_name(static_cast<wc_backend>(wc_backend_count())), "unknown");
}

TEST(BackendTest, FreeingNullContextIsANoOp) { wc_ctx_free(nullptr); }

}  // namespace
}  // namespace wctest
