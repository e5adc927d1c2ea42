// What only a machine with two or more CUDA devices can show: device memory
// worked on the device that holds it whatever device the caller has current,
// a sealed file written by two devices at once and opened by one, and a job
// spread over two devices failing cleanly when one of them runs out of
// memory half-way. Jobs on `{0, 1}` that must equal the CPU run in
// gpu_engine_test.cpp, which adds that device list where there are two
// devices. Skipped, saying why, on machines with fewer.
#include <cuda_runtime_api.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "gpu_support.h"
#include "support/bytes.h"
#include "support/cipher_table.h"
#include "support/gpu_modes.h"
#include "support/scratch_files.h"
#include "support/test_rng.h"
#include "support/warpcrypt_calls.h"

namespace wctest {
namespace {

constexpr int kHome = 0;   // the caller's current device throughout
constexpr int kOther = 1;  // where the data lives

// Makes `device` current for a scope.
class OnDevice {
 public:
  explicit OnDevice(int device) {
    EXPECT_EQ(cudaGetDevice(&previous_), cudaSuccess);
    EXPECT_EQ(cudaSetDevice(device), cudaSuccess);
  }
  ~OnDevice() { cudaSetDevice(previous_); }
  OnDevice(const OnDevice &) = delete;
  OnDevice &operator=(const OnDevice &) = delete;

 private:
  int previous_ = 0;
};

// Waits for everything queued on `device`, the default stream included.
void synchronize(int device) {
  const OnDevice on(device);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

int current_device() {
  int device = -1;
  EXPECT_EQ(cudaGetDevice(&device), cudaSuccess);
  return device;
}

// Free memory on `device` once its work is done and its stream-ordered pool
// has handed back what it caches, so that two readings differ only by what
// is still allocated.
size_t free_memory(int device) {
  const OnDevice on(device);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cudaMemPool_t pool = nullptr;
  EXPECT_EQ(cudaDeviceGetDefaultMemPool(&pool, device), cudaSuccess);
  EXPECT_EQ(cudaMemPoolTrimTo(pool, 0), cudaSuccess);
  size_t free = 0, total = 0;
  EXPECT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
  return free;
}

// Takes every free byte of `device` while it lives: the out-of-memory error
// another tenant's load gives.
class MemoryHog {
 public:
  explicit MemoryHog(int device) : device_(device) {
    free_memory(device);
    const OnDevice on(device);
    for (size_t piece = size_t{1} << 30; piece >= (size_t{1} << 16);) {
      void *block = nullptr;
      if (cudaMalloc(&block, piece) == cudaSuccess) {
        blocks_.push_back(block);
      } else {
        cudaGetLastError();
        piece /= 2;
      }
    }
  }
  ~MemoryHog() {
    const OnDevice on(device_);
    for (void *block : blocks_) cudaFree(block);
  }
  MemoryHog(const MemoryHog &) = delete;
  MemoryHog &operator=(const MemoryHog &) = delete;

 private:
  int device_;
  std::vector<void *> blocks_;
};

class MultiGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    WCTEST_REQUIRE_GPUS(2);
    ASSERT_EQ(cudaSetDevice(kHome), cudaSuccess);
  }

  TestRng rng = TestRng::for_current_test();
};

// Every mode the GPU runs, on buffers in device 1's memory while device 0 is
// current: on the default stream (which becomes device 1's) and on a stream
// of device 1. The result equals the CPU's, nothing outside the buffer
// changes, and device 0 is still current afterwards.
TEST_F(MultiGpu, DeviceCallsRunWhereTheirDataLives) {
  cudaStream_t stream = nullptr;
  {
    const OnDevice on(kOther);
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  }
  for (const GpuMode &mode : gpu_modes()) {
    const CipherSpec &spec = cipher_spec(mode.cipher);
    const wc_cipher *cipher = wc_cipher_unpadded(lookup(mode.cipher));
    const Bytes key = rng.bytes(spec.key_len);
    const Bytes iv = rng.bytes(spec.iv_len);
    const Bytes in = rng.bytes((1 << 20) + 48);
    const LibResult expected = lib_crypt(mode.direction, cipher, key, iv, in, make_options(1, WC_BACKEND_CPU));
    ASSERT_EQ(expected.status, WC_OK);
    const auto call = mode.direction == WC_ENCRYPT ? wc_encrypt_device_async : wc_decrypt_device_async;
    for (cudaStream_t on_stream : {static_cast<cudaStream_t>(nullptr), stream}) {
      SCOPED_TRACE(mode.cipher + (on_stream == nullptr ? ", default stream" : ", stream of device 1"));
      std::unique_ptr<DeviceBuffer> buffer;
      {
        const OnDevice on(kOther);
        buffer = std::make_unique<DeviceBuffer>(in.size());
      }
      buffer->upload(in);
      // The upload's last DMA may still be in flight when cudaMemcpy
      // returns, and a non-blocking stream does not wait for it.
      synchronize(kOther);
      ASSERT_EQ(call(cipher, buffer->at(0), buffer->at(0), in.size(), key.data(), key.size(), iv.data(), iv.size(), 0,
                     reinterpret_cast<wc_cuda_stream>(on_stream)),
                WC_OK);
      EXPECT_EQ(current_device(), kHome);
      synchronize(kOther);
      EXPECT_TRUE(same_bytes(expected.out, buffer->download(in.size())));
      EXPECT_TRUE(buffer->guard_bytes_intact(in.size()));
    }
  }
  const OnDevice on(kOther);
  cudaStreamDestroy(stream);
}

// AEAD sealing and opening on device 1's memory from device 0, and a CBC
// batch: equal to the CPU.
TEST_F(MultiGpu, AeadAndBatchCallsRunWhereTheirDataLives) {
  const Bytes plaintext = rng.bytes((3 << 20) + 7);
  const Bytes aad = rng.bytes(20);
  for (const char *name : {"aes-256-gcm", "chacha20-poly1305"}) {
    SCOPED_TRACE(name);
    const wc_aead *aead = wc_aead_by_name(name);
    const Bytes key = rng.bytes(32);
    const Bytes nonce = rng.bytes(12);
    Bytes expected(plaintext.size());
    Bytes expected_tag(16);
    size_t written = 0;
    const wc_options cpu = make_options(1, WC_BACKEND_CPU);
    ASSERT_EQ(wc_aead_seal(&cpu, aead, expected.data(), expected.size(), &written, expected_tag.data(), 16, key.data(),
                           key.size(), nonce.data(), nonce.size(), aad.data(), aad.size(), plaintext.data(),
                           plaintext.size()),
              WC_OK);
    std::unique_ptr<DeviceBuffer> data, tag, verdict;
    {
      const OnDevice on(kOther);
      data = std::make_unique<DeviceBuffer>(plaintext.size());
      tag = std::make_unique<DeviceBuffer>(16);
      verdict = std::make_unique<DeviceBuffer>(sizeof(int32_t));
    }
    data->upload(plaintext);
    ASSERT_EQ(wc_aead_seal_device_async(aead, data->at(0), tag->at(0), 16, key.data(), key.size(), nonce.data(),
                                        nonce.size(), aad.data(), aad.size(), data->at(0), plaintext.size(), nullptr),
              WC_OK);
    synchronize(kOther);
    EXPECT_TRUE(same_bytes(expected, data->download(plaintext.size())));
    EXPECT_TRUE(same_bytes(expected_tag, tag->download(16)));
    ASSERT_EQ(wc_aead_open_device_async(aead, data->at(0), reinterpret_cast<int32_t *>(verdict->at(0)), key.data(),
                                        key.size(), nonce.data(), nonce.size(), aad.data(), aad.size(), data->at(0),
                                        plaintext.size(), tag->at(0), 16, nullptr),
              WC_OK);
    synchronize(kOther);
    EXPECT_TRUE(same_bytes(Bytes{1, 0, 0, 0}, verdict->download(sizeof(int32_t))));
    EXPECT_TRUE(same_bytes(plaintext, data->download(plaintext.size())));
    EXPECT_EQ(current_device(), kHome);
  }

  const wc_cipher *cbc = lookup("aes-128-cbc");
  const Bytes key = rng.bytes(16);
  const Bytes ivs = rng.bytes(2 * 16);
  const Bytes first = rng.bytes(1000), second = rng.bytes(4096);
  const wc_batch_message messages[2] = {{0, first.size(), 0}, {first.size(), second.size(), 1008}};
  std::unique_ptr<DeviceBuffer> in, out;
  {
    const OnDevice on(kOther);
    in = std::make_unique<DeviceBuffer>(first.size() + second.size());
    out = std::make_unique<DeviceBuffer>(1008 + 4112);
  }
  Bytes both = first;
  both.insert(both.end(), second.begin(), second.end());
  in->upload(both);
  ASSERT_EQ(wc_batch_encrypt_device_async(cbc, out->at(0), in->at(0), messages, 2, key.data(), key.size(), ivs.data(),
                                          nullptr),
            WC_OK);
  synchronize(kOther);
  const wc_options cpu = make_options(1, WC_BACKEND_CPU);
  EXPECT_TRUE(same_bytes(lib_crypt(WC_ENCRYPT, cbc, key, Bytes(ivs.begin(), ivs.begin() + 16), first, cpu).out,
                         out->download(1008)));
  EXPECT_TRUE(same_bytes(lib_crypt(WC_ENCRYPT, cbc, key, Bytes(ivs.begin() + 16, ivs.end()), second, cpu).out,
                         out->download(4112, 1008)));
}

// Device memory of another device than the stream's, or input and output on
// two devices, would need peer access: refused, and the refusal leaves
// nothing behind that fails the next call.
TEST_F(MultiGpu, BuffersAndStreamOnDifferentDevicesAreRefused) {
  const wc_cipher *ctr = lookup("aes-128-ctr");
  const Bytes key(16, 1), iv(16, 2);
  std::unique_ptr<DeviceBuffer> there;
  {
    const OnDevice on(kOther);
    there = std::make_unique<DeviceBuffer>(4096);
  }
  DeviceBuffer here(4096);
  cudaStream_t home_stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&home_stream, cudaStreamNonBlocking), cudaSuccess);
  EXPECT_EQ(wc_encrypt_device_async(ctr, there->at(0), there->at(0), 4096, key.data(), 16, iv.data(), 16, 0,
                                    reinterpret_cast<wc_cuda_stream>(home_stream)),
            WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_encrypt_device_async(ctr, there->at(0), here.at(0), 4096, key.data(), 16, iv.data(), 16, 0, nullptr),
            WC_ERR_INVALID_ARGUMENT);
  const wc_aead *gcm = wc_aead_by_name("aes-128-gcm");
  EXPECT_EQ(wc_aead_seal_device_async(gcm, there->at(0), there->at(0) + 4080, 16, key.data(), 16, iv.data(), 12,
                                      nullptr, 0, there->at(0), 4000, reinterpret_cast<wc_cuda_stream>(home_stream)),
            WC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(there->guard_bytes_intact(0));
  EXPECT_TRUE(here.guard_bytes_intact(0));
  EXPECT_EQ(wc_encrypt_device_async(ctr, here.at(0), here.at(0), 4096, key.data(), 16, iv.data(), 16, 0,
                                    reinterpret_cast<wc_cuda_stream>(home_stream)),
            WC_OK);
  EXPECT_EQ(cudaStreamSynchronize(home_stream), cudaSuccess);
  cudaStreamDestroy(home_stream);
}

// A file sealed by both devices at once opens on device 1 alone, and on the
// CPU, to the bytes it was sealed from; one the CPU sealed opens on both
// devices at once. A chunk damaged in the two-device file is named by the
// one-device open.
TEST_F(MultiGpu, SealedAcrossBothDevicesOpensOnTheSecondAlone) {
  ScratchDir dir;
  constexpr size_t kChunk = 64 << 10;
  const Bytes plaintext = rng.bytes(301 * kChunk + 5);
  write_file(dir / "plain", plaintext);
  const int both[2] = {kHome, kOther};
  wc_options on_both = make_options(2, WC_BACKEND_GPU);
  on_both.devices = both;
  on_both.device_count = 2;
  on_both.chunk_bytes = 4 * kChunk;  // windows of four chunks, so both devices get many
  wc_options on_other = on_both;
  on_other.devices = &kOther;
  on_other.device_count = 1;
  const wc_options cpu = make_options(2, WC_BACKEND_CPU);
  const std::string plain = dir / "plain", sealed = dir / "sealed", opened = dir / "opened";
  for (const char *aead : {"aes-256-gcm", "chacha20-poly1305"}) {
    SCOPED_TRACE(aead);
    const wc_seal_params params = key_seal_params(aead, kChunk);
    const Bytes key = rng.bytes(32);
    auto open_with = [&](const wc_options &options, wc_job *job) {
      return wc_open_file(&options, nullptr, job, opened.c_str(), sealed.c_str(), WC_SEAL_KEY, key.data(), key.size());
    };
    wc_job job;
    wc_job_init(&job);
    ASSERT_EQ(wc_seal_file(&on_both, &params, &job, sealed.c_str(), plain.c_str(), key.data(), key.size()), WC_OK);
    EXPECT_EQ(job.gpu_bytes, plaintext.size());
    for (const wc_options *options : {&std::as_const(on_other), &cpu}) {
      wc_job_init(&job);
      ASSERT_EQ(open_with(*options, &job), WC_OK);
      EXPECT_TRUE(same_bytes(plaintext, read_file(opened)));
      EXPECT_EQ(job.gpu_bytes, options == &cpu ? 0u : plaintext.size());
    }

    ASSERT_EQ(wc_seal_file(&cpu, &params, nullptr, sealed.c_str(), plain.c_str(), key.data(), key.size()), WC_OK);
    wc_job_init(&job);
    ASSERT_EQ(open_with(on_both, &job), WC_OK);
    EXPECT_TRUE(same_bytes(plaintext, read_file(opened)));

    Bytes damaged = read_file(sealed);
    damaged[WC_SEAL_HEADER_LEN + 250 * (kChunk + 16) + 7] ^= 1;
    write_file(sealed, damaged);
    std::filesystem::remove(opened);
    wc_job_init(&job);
    EXPECT_EQ(open_with(on_other, &job), WC_ERR_AUTH);
    EXPECT_EQ(job.failed_chunk, 250u);
    EXPECT_FALSE(std::filesystem::exists(opened));
  }
}

// A job on devices {0, 1} whose second device runs out of memory half-way
// (after its lanes were built): a device error, no output file and no
// temporary one, and device 0 gets back every byte the job took. Once the
// memory is free again, the same job succeeds. For a plain cipher whose GPU
// work allocates per chunk (CBC decryption's chaining blocks) and for a
// sealed file (the AEAD launches' scratch).
TEST_F(MultiGpu, JobFailsCleanlyWhenOneDeviceRunsOutOfMemory) {
  ScratchDir dir;
  const Bytes plaintext = rng.bytes(48 << 20);
  const Bytes key = rng.bytes(32), iv = rng.bytes(16);
  const wc_cipher *cbc = lookup("aes-256-cbc");
  const wc_options cpu = make_options(2, WC_BACKEND_CPU);
  write_file(dir / "cbc", lib_crypt(WC_ENCRYPT, cbc, key, iv, plaintext, cpu).out);
  write_file(dir / "plain", plaintext);
  const int devices[2] = {kHome, kOther};
  wc_options options = make_options(2, WC_BACKEND_GPU);
  options.devices = devices;
  options.device_count = 2;
  options.streams = 2;
  options.chunk_bytes = 1 << 20;
  const wc_seal_params params = key_seal_params("aes-256-gcm", 64 << 10);
  const std::string out = dir / "out";

  struct Job {
    const char *name;
    std::function<wc_status(wc_job *)> run;
    std::filesystem::path expected;
  };
  const std::vector<Job> jobs = {
      {"cbc decryption",
       [&](wc_job *job) {
         return wc_decrypt_file(&options, cbc, job, out.c_str(), (dir / "cbc").c_str(), key.data(), key.size(),
                                iv.data(), iv.size());
       },
       dir / "plain"},
      {"sealing",
       [&](wc_job *job) {
         return wc_seal_file(&options, &params, job, out.c_str(), (dir / "plain").c_str(), key.data(), key.size());
       },
       {}},
  };
  for (const Job &job : jobs) {
    SCOPED_TRACE(job.name);
    // Whole twice first, so that both devices hold as many pooled lane
    // buffers as the job's lanes lease at once, and its kernels are loaded,
    // before the baseline is read.
    wc_job report;
    for (int warm_up = 0; warm_up < 2; ++warm_up) {
      wc_job_init(&report);
      ASSERT_EQ(job.run(&report), WC_OK);
      EXPECT_GT(report.gpu_bytes, 0u);
      if (!job.expected.empty()) {
        EXPECT_TRUE(same_bytes(read_file(job.expected), read_file(out)));
      }
      std::filesystem::remove(out);
    }
    const size_t home_before = free_memory(kHome);
    {
      const MemoryHog hog(kOther);
      wc_job_init(&report);
      EXPECT_EQ(job.run(&report), WC_ERR_DEVICE);
      EXPECT_FALSE(std::filesystem::exists(out));
      EXPECT_EQ(dir.entries().size(), 2u) << "a temporary file was left behind";
      EXPECT_EQ(free_memory(kHome), home_before) << "device 0 kept memory the failed job took";
    }
    wc_job_init(&report);
    ASSERT_EQ(job.run(&report), WC_OK);
    if (!job.expected.empty()) {
      EXPECT_TRUE(same_bytes(read_file(job.expected), read_file(out)));
    }
    std::filesystem::remove(out);
    EXPECT_EQ(free_memory(kHome), home_before);
  }
}

}  // namespace
}  // namespace wctest
