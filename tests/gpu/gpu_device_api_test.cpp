// The device-pointer API: in place, unaligned pointers, arbitrary stream
// offsets and resuming a chained stream mid-way, each checked against the CPU
// backend and with guard bytes around every buffer; device memory and stream
// order for callers without a CUDA runtime; files read into device memory.
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "gpu_support.h"
#include "support/scratch_files.h"
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
  // The library counts from the kernel driver's list of GPUs where it can,
  // so as not to start the driver; whatever counted, the answer must be the
  // one CUDA gives once started, or lanes would be placed on devices CUDA
  // does not have.
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

// ---- device memory and stream order (wc_device_of and the calls after it)

namespace {

// A stream of `device`, destroyed with the object.
class Stream {
 public:
  explicit Stream(int device) {
    int previous = 0;
    cudaGetDevice(&previous);
    cudaSetDevice(device);
    EXPECT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
    cudaSetDevice(previous);
  }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;
  wc_cuda_stream handle() const { return reinterpret_cast<wc_cuda_stream>(stream_); }

 private:
  cudaStream_t stream_ = nullptr;
};

}  // namespace

TEST(GpuDeviceMemory, DeviceOfNamesTheDeviceAndRefusesHostMemory) {
  WCTEST_REQUIRE_GPU();
  DeviceBuffer buffer(64);
  int device = -1;
  EXPECT_EQ(wc_device_of(buffer.at(0), &device), WC_OK);
  EXPECT_EQ(device, 0);
  Bytes pageable(64);
  EXPECT_EQ(wc_device_of(pageable.data(), &device), WC_ERR_INVALID_ARGUMENT);
  void *pinned = nullptr;
  ASSERT_EQ(cudaMallocHost(&pinned, 64), cudaSuccess);
  EXPECT_EQ(wc_device_of(pinned, &device), WC_ERR_INVALID_ARGUMENT) << "page-locked host memory is no device's";
  cudaFreeHost(pinned);
}

TEST(GpuDeviceMemory, AllocateClearReadAndFreeInStreamOrder) {
  WCTEST_REQUIRE_GPU();
  const Stream stream(0);
  for (const int device : {0, -1}) {
    void *memory = nullptr;
    ASSERT_EQ(wc_device_alloc_async(device, &memory, 4096, stream.handle()), WC_OK);
    ASSERT_NE(memory, nullptr);
    ASSERT_EQ(cudaMemsetAsync(memory, 0xa5, 4096, reinterpret_cast<cudaStream_t>(stream.handle())), cudaSuccess);
    EXPECT_EQ(wc_device_clear_async(device, static_cast<uint8_t *>(memory) + 100, 1000, stream.handle()), WC_OK);
    Bytes host(4096, 0x11);
    EXPECT_EQ(wc_device_read(device, host.data(), memory, host.size(), stream.handle()), WC_OK);
    Bytes expected(4096, 0xa5);
    std::fill(expected.begin() + 100, expected.begin() + 1100, 0);
    EXPECT_EQ(host, expected) << "device " << device;
    EXPECT_EQ(wc_device_free_async(device, memory, stream.handle()), WC_OK);
  }
  EXPECT_EQ(cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(stream.handle())), cudaSuccess);
}

TEST(GpuDeviceMemory, PinnedHostMemoryIsPageLockedHostMemory) {
  WCTEST_REQUIRE_GPU();
  void *memory = nullptr;
  ASSERT_EQ(wc_host_alloc_pinned(&memory, 1 << 20), WC_OK);
  cudaPointerAttributes attributes{};
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, memory), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeHost);
  int device = -1;
  EXPECT_EQ(wc_device_of(memory, &device), WC_ERR_INVALID_ARGUMENT);
  static_cast<uint8_t *>(memory)[(1 << 20) - 1] = 7;  // host-writable, to its end
  wc_host_free_pinned(memory);
}

TEST(GpuDeviceMemory, StreamWaitOrdersTheConsumerAfterTheProducer) {
  WCTEST_REQUIRE_GPU();
  const Stream producer(0);
  const Stream consumer(0);
  DeviceBuffer buffer(1 << 20);
  ASSERT_EQ(cudaMemset(buffer.at(0), 0, 1 << 20), cudaSuccess);
  // The producer is held back on the host for 100 ms before it writes, so a
  // consumer that did not wait for it would read the zeros.
  ASSERT_EQ(cudaLaunchHostFunc(reinterpret_cast<cudaStream_t>(producer.handle()),
                               [](void *) { std::this_thread::sleep_for(std::chrono::milliseconds(100)); }, nullptr),
            cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(buffer.at(0), 0x5a, 1 << 20, reinterpret_cast<cudaStream_t>(producer.handle())),
            cudaSuccess);
  ASSERT_EQ(wc_cuda_stream_wait(0, consumer.handle(), producer.handle()), WC_OK);
  Bytes host(1 << 20);
  ASSERT_EQ(wc_device_read(0, host.data(), buffer.at(0), host.size(), consumer.handle()), WC_OK);
  EXPECT_EQ(host, Bytes(1 << 20, 0x5a));
}

TEST(GpuDeviceMemory, RefusesAStreamOfAnotherDeviceAndDevicesThatAreNot) {
  WCTEST_REQUIRE_GPU();
  int count = 0;
  ASSERT_EQ(wc_device_count(&count), WC_OK);
  void *memory = nullptr;
  EXPECT_EQ(wc_device_alloc_async(count, &memory, 64, nullptr), WC_ERR_NO_DEVICE);
  EXPECT_EQ(wc_device_alloc_async(-2, &memory, 64, nullptr), WC_ERR_NO_DEVICE);
  if (count < 2) GTEST_SKIP() << "one CUDA device: a stream of another device needs two";
  const Stream other(1);
  EXPECT_EQ(wc_device_alloc_async(0, &memory, 64, other.handle()), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(memory, nullptr);
  EXPECT_EQ(wc_cuda_stream_wait(0, nullptr, other.handle()), WC_ERR_INVALID_ARGUMENT);
  // -1 takes the stream's own device.
  ASSERT_EQ(wc_device_alloc_async(-1, &memory, 64, other.handle()), WC_OK);
  int device = -1;
  EXPECT_EQ(wc_device_of(memory, &device), WC_OK);
  EXPECT_EQ(device, 1);
  EXPECT_EQ(wc_device_free_async(-1, memory, other.handle()), WC_OK);
  int current = -1;
  EXPECT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, 0) << "the caller's current device is put back";
}

}  // namespace
}  // namespace wctest

// Files read straight into device memory: ranges of a file, long and short
// against the slots, into memory on device 0 and, where there are two
// devices, on device 1 in the same call; read back, each range is the file's
// bytes and the memory around it is untouched. A file that ends early is
// WC_ERR_FORMAT.
TEST(GpuDeviceMemory, ReadFilesToDeviceLandsEveryRange) {
  WCTEST_REQUIRE_GPU();
  wctest::ScratchDir dir;
  wctest::TestRng rng = wctest::TestRng::for_current_test();
  constexpr size_t kMiB = size_t{1} << 20;
  const wctest::Bytes file = rng.bytes(37 * kMiB + 11);
  const std::string path = dir / "file";
  wctest::write_file(path, file);
  const int fd = open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  const int devices = std::min(2, wctest::device_count());
  struct Placed {
    uint64_t offset;
    uint64_t len;
    int device;
    uint8_t *memory = nullptr;
  };
  std::vector<Placed> placed = {{0, 1, 0}, {3, kMiB - 1, devices - 1}, {4096, 4 * kMiB + 5, 0},
                                {17, 20 * kMiB + 3, devices - 1}, {5 * kMiB, 32 * kMiB + 11, 0}};
  constexpr size_t kGuard = 64;
  constexpr uint8_t kFill = 0x3c;
  std::vector<wc_file_range> ranges;
  for (Placed &p : placed) {
    ASSERT_EQ(cudaSetDevice(p.device), cudaSuccess);
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void **>(&p.memory), p.len + 2 * kGuard), cudaSuccess);
    ASSERT_EQ(cudaMemset(p.memory, kFill, p.len + 2 * kGuard), cudaSuccess);
    ranges.push_back({fd, p.offset, p.len, p.memory + kGuard});
  }
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(wc_read_files_to_device(ranges.data(), ranges.size()), WC_OK);
  for (const Placed &p : placed) {
    wctest::Bytes back(p.len + 2 * kGuard);
    ASSERT_EQ(cudaMemcpy(back.data(), p.memory, back.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_TRUE(std::equal(file.begin() + static_cast<std::ptrdiff_t>(p.offset),
                           file.begin() + static_cast<std::ptrdiff_t>(p.offset + p.len), back.begin() + kGuard))
        << "the range from " << p.offset << " on device " << p.device;
    EXPECT_TRUE(std::all_of(back.begin(), back.begin() + kGuard, [](uint8_t b) { return b == kFill; }) &&
                std::all_of(back.end() - kGuard, back.end(), [](uint8_t b) { return b == kFill; }))
        << "the range from " << p.offset << " wrote outside its memory";
  }
  const wc_file_range past_the_end{fd, file.size() - 10, 20, placed[0].memory};
  EXPECT_EQ(wc_read_files_to_device(&past_the_end, 1), WC_ERR_FORMAT);
  // A length far past the memory's end leaves device memory.
  const wc_file_range past_the_memory{fd, 0, uint64_t{1} << 50, placed[0].memory};
  EXPECT_EQ(wc_read_files_to_device(&past_the_memory, 1), WC_ERR_INVALID_ARGUMENT);
  for (const Placed &p : placed) {
    ASSERT_EQ(cudaSetDevice(p.device), cudaSuccess);
    cudaFree(p.memory);
  }
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  close(fd);
}
