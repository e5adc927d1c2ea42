// The streaming engine on the GPU: buffer and descriptor jobs through GPU
// lanes alone and mixed with CPU lanes (hybrid), with one and several
// streams, one device, the same device listed three times (each entry gets
// its own lanes) and, where the machine has them, two devices, from pageable
// and page-locked memory. Everything must equal the CPU one-shot result.
// The mode tests take hybrid's GPU lanes from the start
// (WARPCRYPT_HYBRID_GPU=always); the HybridTrial tests let them join late,
// on trial, as they do by default.
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
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

constexpr size_t kChunk = 64 * 1024;

struct Shape {
  wc_backend backend;
  unsigned streams;
  std::vector<int> devices;
  std::string name;
};

std::vector<Shape> shapes() {
  std::vector<Shape> all = {{WC_BACKEND_GPU, 1, {0}, "gpu_1stream"},
                            {WC_BACKEND_GPU, 4, {0}, "gpu_4streams"},
                            {WC_BACKEND_GPU, 2, {0, 0, 0}, "gpu_3devices"},
                            {WC_BACKEND_HYBRID, 3, {0}, "hybrid"},
                            {WC_BACKEND_HYBRID, 2, {0, 0}, "hybrid_2devices"}};
  // Where there are two devices, the job spreads over both, as
  // `--devices 0,1` asks, in either order.
  if (device_count() >= 2) {
    all.push_back({WC_BACKEND_GPU, 2, {0, 1}, "gpu_devices_0_1"});
    all.push_back({WC_BACKEND_HYBRID, 2, {1, 0}, "hybrid_devices_1_0"});
  }
  return all;
}

wc_options shape_options(const Shape &shape) {
  wc_options options = make_options(2, shape.backend);
  options.chunk_bytes = kChunk;
  options.streams = shape.streams;
  options.devices = shape.devices.data();
  options.device_count = shape.devices.size();
  return options;
}

// Host memory of either kind for one job's input and output.
class HostBuffer {
 public:
  HostBuffer(size_t len, bool page_locked) : page_locked_(page_locked) {
    if (page_locked_) {
      EXPECT_EQ(cudaMallocHost(reinterpret_cast<void **>(&data_), std::max<size_t>(len, 1)), cudaSuccess);
    } else {
      data_ = new uint8_t[std::max<size_t>(len, 1)];
    }
  }
  ~HostBuffer() {
    if (page_locked_) {
      cudaFreeHost(data_);
    } else {
      delete[] data_;
    }
  }
  HostBuffer(const HostBuffer &) = delete;
  HostBuffer &operator=(const HostBuffer &) = delete;
  uint8_t *data() { return data_; }

 private:
  uint8_t *data_ = nullptr;
  bool page_locked_;
};

class GpuEngineTest : public ::testing::TestWithParam<GpuMode> {
 protected:
  void SetUp() override {
    WCTEST_REQUIRE_GPU();
    // Every hybrid job here runs its GPU lanes, however short it is.
    setenv("WARPCRYPT_HYBRID_GPU", "always", 1);
    key = rng.bytes(spec.key_len);
    iv = rng.bytes(spec.iv_len);
  }
  void TearDown() override { unsetenv("WARPCRYPT_HYBRID_GPU"); }

  const GpuMode &mode = GetParam();
  const CipherSpec &spec = cipher_spec(mode.cipher);
  const wc_cipher *cipher = lookup(mode.cipher);
  // ECB and CBC without padding: the buffer tests' sizes are whole blocks.
  const wc_cipher *unpadded = wc_cipher_unpadded(cipher);
  TestRng rng = TestRng::for_current_test();
  Bytes key;
  Bytes iv;
};

TEST_P(GpuEngineTest, BufferJobsEqualTheCpuAtChunkBoundaries) {
  // ECB and CBC decryption without padding: whole blocks, every size below is.
  const std::vector<size_t> sizes = {0, 16, kChunk - 16, kChunk, kChunk + 16, 9 * kChunk + 48, (8 << 20) + 32};
  for (const Shape &shape : shapes()) {
    for (bool page_locked : {false, true}) {
      const wc_options options = shape_options(shape);
      for (size_t size : sizes) {
        SCOPED_TRACE(shape.name + (page_locked ? ", page-locked" : ", pageable") + ", size " + std::to_string(size));
        const Bytes in = rng.bytes(size);
        const LibResult expected = lib_crypt(mode.direction, unpadded, key, iv, in, make_options(1, WC_BACKEND_CPU));
        ASSERT_EQ(expected.status, WC_OK);
        HostBuffer in_buffer(size, page_locked);
        HostBuffer out_buffer(size, page_locked);
        std::copy(in.begin(), in.end(), in_buffer.data());
        wc_job job;
        wc_job_init(&job);
        size_t out_len = 0;
        const auto call = mode.direction == WC_ENCRYPT ? wc_encrypt_buffer : wc_decrypt_buffer;
        ASSERT_EQ(call(&options, unpadded, &job, out_buffer.data(), size, &out_len, key.data(), key.size(), iv.data(),
                       iv.size(), in_buffer.data(), size),
                  WC_OK);
        ASSERT_TRUE(same_bytes(expected.out, Bytes(out_buffer.data(), out_buffer.data() + out_len)));
        EXPECT_EQ(job.cpu_bytes + job.gpu_bytes, size);
        if (shape.backend == WC_BACKEND_GPU) {
          EXPECT_EQ(job.gpu_bytes, size) << "every byte went through a GPU lane";
        }
      }
    }
  }
}

TEST_P(GpuEngineTest, InPlaceBufferJobsEqualTheCpu) {
  const Bytes in = rng.bytes(13 * kChunk + 32);
  const LibResult expected = lib_crypt(mode.direction, unpadded, key, iv, in, make_options(1, WC_BACKEND_CPU));
  for (const Shape &shape : shapes()) {
    SCOPED_TRACE(shape.name);
    const wc_options options = shape_options(shape);
    Bytes data = in;
    size_t out_len = 0;
    const auto call = mode.direction == WC_ENCRYPT ? wc_encrypt_buffer : wc_decrypt_buffer;
    ASSERT_EQ(call(&options, unpadded, nullptr, data.data(), data.size(), &out_len, key.data(), key.size(), iv.data(),
                   iv.size(), data.data(), data.size()),
              WC_OK);
    EXPECT_TRUE(same_bytes(expected.out, data));
  }
}

// Regular files and pipes, padding on where the mode pads, through GPU lanes
// reading straight into their pinned staging buffers.
TEST_P(GpuEngineTest, DescriptorJobsEqualTheCpu) {
  Bytes in = rng.bytes(21 * kChunk + 7);
  if (mode.direction == WC_DECRYPT && spec.padded) {
    in = lib_crypt(WC_ENCRYPT, cipher, key, iv, in, make_options(1, WC_BACKEND_CPU)).out;
  }
  const LibResult expected = lib_crypt(mode.direction, cipher, key, iv, in, make_options(1, WC_BACKEND_CPU));
  ASSERT_EQ(expected.status, WC_OK);
  char in_path[] = "/tmp/wc-gpu-engine-in-XXXXXX";
  char out_path[] = "/tmp/wc-gpu-engine-out-XXXXXX";
  const int in_fd = mkstemp(in_path);
  const int out_fd = mkstemp(out_path);
  ASSERT_EQ(write(in_fd, in.data(), in.size()), static_cast<ssize_t>(in.size()));
  const auto call = mode.direction == WC_ENCRYPT ? wc_encrypt_fd : wc_decrypt_fd;
  for (const Shape &shape : shapes()) {
    SCOPED_TRACE(shape.name);
    const wc_options options = shape_options(shape);
    ASSERT_EQ(lseek(in_fd, 0, SEEK_SET), 0);
    ASSERT_EQ(lseek(out_fd, 0, SEEK_SET), 0);
    ASSERT_EQ(ftruncate(out_fd, 0), 0);
    wc_job job;
    wc_job_init(&job);
    ASSERT_EQ(call(&options, cipher, &job, out_fd, in_fd, key.data(), key.size(), iv.data(), iv.size()), WC_OK);
    Bytes out(expected.out.size());
    ASSERT_EQ(pread(out_fd, out.data(), out.size(), 0), static_cast<ssize_t>(out.size()));
    EXPECT_TRUE(same_bytes(expected.out, out));
    EXPECT_GT(job.gpu_bytes, 0u);
  }
  close(in_fd);
  close(out_fd);
  unlink(in_path);
  unlink(out_path);
}

INSTANTIATE_TEST_SUITE_P(Modes, GpuEngineTest, ::testing::ValuesIn(gpu_modes()), gpu_mode_name);

// Hybrid as it runs by default: one CPU lane, so that the GPU lanes, once
// started (the device is warm from the tests before), make the job faster
// on trial and stay. They claim eight 1 MiB units at once; the sizes end
// off those boundaries, and the output must equal the CPU's wherever it
// is written: page-locked and pageable buffers, a file, a pipe.
class HybridTrial : public ::testing::Test {
 protected:
  void SetUp() override {
    WCTEST_REQUIRE_GPU();
    ASSERT_EQ(std::getenv("WARPCRYPT_HYBRID_GPU"), nullptr);
    expected = lib_crypt(WC_ENCRYPT, cipher, key, iv, in, make_options(1, WC_BACKEND_CPU)).out;
    // Starts the device, so that the GPU lanes' start costs next to nothing.
    Bytes warm(kChunk);
    size_t out_len = 0;
    const wc_options gpu = make_options(1, WC_BACKEND_GPU);
    ASSERT_EQ(wc_encrypt_buffer(&gpu, cipher, nullptr, warm.data(), warm.size(), &out_len, key.data(), key.size(),
                                iv.data(), iv.size(), warm.data(), warm.size()),
              WC_OK);
  }

  const wc_options options = make_options(1, WC_BACKEND_HYBRID);
  const wc_cipher *cipher = lookup("aes-128-ctr");
  TestRng rng = TestRng::for_current_test();
  const Bytes key = rng.bytes(16);
  const Bytes iv = rng.bytes(16);
  const Bytes in = rng.bytes((384 << 20) + 4096 + 48);
  Bytes expected;
};

TEST_F(HybridTrial, BuffersGoThroughGpuLanesThatStay) {
  for (bool page_locked : {true, false}) {
    SCOPED_TRACE(page_locked ? "page-locked" : "pageable");
    HostBuffer in_buffer(in.size(), page_locked);
    HostBuffer out_buffer(in.size(), page_locked);
    std::copy(in.begin(), in.end(), in_buffer.data());
    wc_job job;
    wc_job_init(&job);
    size_t out_len = 0;
    ASSERT_EQ(wc_encrypt_buffer(&options, cipher, &job, out_buffer.data(), in.size(), &out_len, key.data(), key.size(),
                                iv.data(), iv.size(), in_buffer.data(), in.size()),
              WC_OK);
    ASSERT_TRUE(same_bytes(expected, Bytes(out_buffer.data(), out_buffer.data() + out_len)));
    EXPECT_GT(job.gpu_bytes, 0u) << "the GPU lanes joined and stayed";
    EXPECT_EQ(job.cpu_bytes + job.gpu_bytes, in.size());
  }
}

TEST_F(HybridTrial, FilesAndPipesGoThroughGpuLanesThatStay) {
  ScratchDir scratch;
  write_file(scratch / "in", in);
  const int in_fd = open((scratch / "in").c_str(), O_RDONLY);
  const int out_fd = open((scratch / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(in_fd, 0);
  ASSERT_GE(out_fd, 0);
  wc_job job;
  wc_job_init(&job);
  ASSERT_EQ(wc_encrypt_fd(&options, cipher, &job, out_fd, in_fd, key.data(), key.size(), iv.data(), iv.size()), WC_OK);
  close(in_fd);
  close(out_fd);
  ASSERT_TRUE(same_bytes(expected, read_file(scratch / "out")));
  EXPECT_GT(job.gpu_bytes, 0u) << "the GPU lanes joined and stayed";

  // A regular file into a pipe: the output in unit order, written by
  // lanes that claim one unit and lanes that claim eight.
  wc_status status = WC_ERR_IO;  // until the job says
  const int file_fd = open((scratch / "in").c_str(), O_RDONLY);
  const Bytes piped = through_pipes({}, [&](int pipe_out, int) {
    return wc_encrypt_fd(&options, cipher, nullptr, pipe_out, file_fd, key.data(), key.size(), iv.data(), iv.size());
  }, &status);
  close(file_fd);
  ASSERT_EQ(status, WC_OK);
  EXPECT_TRUE(same_bytes(expected, piped));
}

// A sealed file on hybrid as it runs by default: its GPU lanes join late,
// on trial, as a plain cipher's do (engine/late_gpu_lanes.h), and claim
// eight windows at once where the CPU lane claims one. One CPU lane and a
// warm device, so that the GPU lanes make the job faster and stay; and
// ChaCha20-Poly1305, whose CPU lane computes most of its time (the late
// lanes start only where the others are busy computing, not copying). What
// hybrid seals opens on the CPU and the other way round: whole, as a range
// that starts and ends inside windows, and into a pipe, where the pieces of
// one window and of eight must come out in order.
TEST(HybridTrialSealed, SealedFilesGoThroughGpuLanesThatStay) {
  WCTEST_REQUIRE_GPU();
  ASSERT_EQ(std::getenv("WARPCRYPT_HYBRID_GPU"), nullptr);
  TestRng rng = TestRng::for_current_test();
  const Bytes plain = rng.bytes((384 << 20) + 12345);
  const Bytes key = rng.bytes(32);
  ScratchDir scratch;
  write_file(scratch / "plain", plain);
  const wc_seal_params params = key_seal_params("chacha20-poly1305");
  const int first_device[1] = {0};
  wc_options hybrid = make_options(1, WC_BACKEND_HYBRID);
  hybrid.devices = first_device;
  hybrid.device_count = 1;
  wc_options gpu = hybrid;
  gpu.backend = WC_BACKEND_GPU;
  const wc_options cpu = make_options(1, WC_BACKEND_CPU);
  auto seal_with = [&](const wc_options &options, const char *to, wc_job *job) {
    return wc_seal_file(&options, &params, job, (scratch / to).c_str(), (scratch / "plain").c_str(), key.data(),
                        key.size());
  };
  auto open_with = [&](const wc_options &options, const wc_open_params *range, const char *from, wc_job *job) {
    return wc_open_file(&options, range, job, (scratch / "opened").c_str(), (scratch / from).c_str(), WC_SEAL_KEY,
                        key.data(), key.size());
  };
  // Starts the device, so that the GPU lanes' start costs next to nothing.
  ASSERT_EQ(seal_with(gpu, "warm", nullptr), WC_OK);

  wc_job job;
  wc_job_init(&job);
  ASSERT_EQ(seal_with(hybrid, "by-hybrid", &job), WC_OK) << job.detail;
  EXPECT_GT(job.gpu_bytes, 0u) << "the GPU lanes joined the seal and stayed";
  EXPECT_EQ(job.cpu_bytes + job.gpu_bytes, plain.size());
  ASSERT_EQ(open_with(cpu, nullptr, "by-hybrid", nullptr), WC_OK);
  ASSERT_TRUE(same_bytes(plain, read_file(scratch / "opened")));

  ASSERT_EQ(seal_with(cpu, "by-cpu", nullptr), WC_OK);
  wc_job_init(&job);
  ASSERT_EQ(open_with(hybrid, nullptr, "by-cpu", &job), WC_OK) << job.detail;
  EXPECT_GT(job.gpu_bytes, 0u) << "the GPU lanes joined the open and stayed";
  ASSERT_TRUE(same_bytes(plain, read_file(scratch / "opened")));

  wc_open_params range;
  wc_open_params_init(&range);
  range.offset = (3 << 20) + 7;
  range.length = (200 << 20) + 5;
  ASSERT_EQ(open_with(hybrid, &range, "by-cpu", nullptr), WC_OK);
  ASSERT_TRUE(same_bytes(Bytes(plain.begin() + range.offset, plain.begin() + range.offset + range.length),
                         read_file(scratch / "opened")));

  wc_status status = WC_ERR_IO;  // until the job says
  const int sealed_fd = open((scratch / "by-cpu").c_str(), O_RDONLY);
  ASSERT_GE(sealed_fd, 0);
  const Bytes piped = through_pipes({}, [&](int pipe_out, int) {
    return wc_open_fd(&hybrid, nullptr, nullptr, pipe_out, sealed_fd, WC_SEAL_KEY, key.data(), key.size());
  }, &status);
  close(sealed_fd);
  ASSERT_EQ(status, WC_OK);
  EXPECT_TRUE(same_bytes(plain, piped));
}

// Lanes set their device and put the caller's back: a caller working on one
// device must find it current after a job.
TEST(GpuEngine, KeepsTheCallersCurrentDevice) {
  WCTEST_REQUIRE_GPU();
  int devices = 0;
  ASSERT_EQ(cudaGetDeviceCount(&devices), cudaSuccess);
  const int mine = devices - 1;
  ASSERT_EQ(cudaSetDevice(mine), cudaSuccess);
  const wc_cipher *cipher = lookup("aes-128-ctr");
  const Bytes key(16, 1);
  const Bytes iv(16, 2);
  Bytes data(4 * kChunk, 3);
  const int first[1] = {0};
  wc_options options = make_options(1, WC_BACKEND_GPU);
  options.devices = first;
  options.device_count = 1;
  size_t out_len = 0;
  ASSERT_EQ(wc_encrypt_buffer(&options, cipher, nullptr, data.data(), data.size(), &out_len, key.data(), 16,
                              iv.data(), 16, data.data(), data.size()),
            WC_OK);
  int current = -1;
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, mine);
}

// A device the machine lacks is no device (engine::check_devices), not a
// bad argument: the caller is told to run on the CPU.
TEST(GpuEngine, DeviceOutOfRangeIsAnError) {
  WCTEST_REQUIRE_GPU();
  const int missing[1] = {1000};
  wc_options options = make_options(1, WC_BACKEND_GPU);
  options.devices = missing;
  options.device_count = 1;
  const Bytes key(16, 1);
  const Bytes iv(16, 2);
  Bytes data(100, 3);
  size_t out_len = 0;
  EXPECT_EQ(wc_encrypt_buffer(&options, lookup("aes-128-ctr"), nullptr, data.data(), data.size(), &out_len,
                              key.data(), 16, iv.data(), 16, data.data(), data.size()),
            WC_ERR_NO_DEVICE);
}

// Sealed files on GPU workers, alone and beside CPU workers: a file sealed
// there opens on the CPU and the other way round, a range included, and a
// damaged chunk is named whichever worker opened it. Hybrid's GPU workers
// take part from the start here (WARPCRYPT_HYBRID_GPU=always), however short
// the file: HybridTrialSealed covers them joining late.
TEST(GpuEngine, SealedFilesInteroperateWithTheCpu) {
  WCTEST_REQUIRE_GPU();
  setenv("WARPCRYPT_HYBRID_GPU", "always", 1);
  struct Unset {
    ~Unset() { unsetenv("WARPCRYPT_HYBRID_GPU"); }
  } unset;
  TestRng rng = TestRng::for_current_test();
  const Bytes plaintext = rng.bytes(37 * kChunk + 11);
  char plain_path[] = "/tmp/wc-gpu-sealed-plain-XXXXXX";
  close(mkstemp(plain_path));
  const std::string sealed_path = std::string(plain_path) + ".sealed";
  const std::string opened_path = std::string(plain_path) + ".opened";
  {
    FILE *f = std::fopen(plain_path, "wb");
    ASSERT_EQ(std::fwrite(plaintext.data(), 1, plaintext.size(), f), plaintext.size());
    std::fclose(f);
  }
  auto read_all = [](const std::string &path) {
    Bytes data;
    FILE *f = std::fopen(path.c_str(), "rb");
    for (int c; f != nullptr && (c = std::fgetc(f)) != EOF;) data.push_back(static_cast<uint8_t>(c));
    if (f != nullptr) std::fclose(f);
    return data;
  };
  const wc_options cpu = make_options(2, WC_BACKEND_CPU);
  for (const char *aead : {"aes-256-gcm", "chacha20-poly1305"}) {
    for (wc_backend backend : {WC_BACKEND_GPU, WC_BACKEND_HYBRID}) {
      SCOPED_TRACE(std::string(aead) + " on " + wc_backend_name(backend));
      wc_options options = make_options(2, backend);
      options.chunk_bytes = 4 * kChunk;  // windows of four 64 KiB chunks
      const wc_seal_params params = key_seal_params(aead, kChunk);
      const Bytes key = rng.bytes(32);
      wc_job job;
      wc_job_init(&job);
      ASSERT_EQ(wc_seal_file(&options, &params, &job, sealed_path.c_str(), plain_path, key.data(), key.size()), WC_OK);
      EXPECT_GT(job.gpu_bytes, 0u);
      ASSERT_EQ(wc_open_file(&cpu, nullptr, nullptr, opened_path.c_str(), sealed_path.c_str(), WC_SEAL_KEY,
                             key.data(), key.size()),
                WC_OK);
      EXPECT_TRUE(same_bytes(plaintext, read_all(opened_path)));

      ASSERT_EQ(wc_seal_file(&cpu, &params, nullptr, sealed_path.c_str(), plain_path, key.data(), key.size()), WC_OK);
      wc_open_params range;
      wc_open_params_init(&range);
      range.offset = 5 * kChunk + 3;
      range.length = 20 * kChunk;
      ASSERT_EQ(wc_open_file(&options, &range, nullptr, opened_path.c_str(), sealed_path.c_str(), WC_SEAL_KEY,
                             key.data(), key.size()),
                WC_OK);
      EXPECT_TRUE(same_bytes(Bytes(plaintext.begin() + 5 * kChunk + 3, plaintext.begin() + 25 * kChunk + 3),
                             read_all(opened_path)));

      Bytes damaged = read_all(sealed_path);
      damaged[WC_SEAL_HEADER_LEN + 30 * (kChunk + 16) + 100] ^= 1;
      FILE *f = std::fopen(sealed_path.c_str(), "wb");
      ASSERT_EQ(std::fwrite(damaged.data(), 1, damaged.size(), f), damaged.size());
      std::fclose(f);
      wc_job_init(&job);
      EXPECT_EQ(wc_open_file(&options, nullptr, &job, opened_path.c_str(), sealed_path.c_str(), WC_SEAL_KEY,
                             key.data(), key.size()),
                WC_ERR_AUTH);
      EXPECT_EQ(job.failed_chunk, 30u);
    }
  }
  unlink(plain_path);
  unlink(sealed_path.c_str());
  unlink(opened_path.c_str());
}

}  // namespace
}  // namespace wctest
