// The streaming engine's jobs (wc_*_buffer, wc_*_fd, wc_*_file): whatever the
// input (host buffer, regular file, pipe), the chunk size, the thread count
// and the backend, the output equals the one-shot call's; progress,
// cancellation, statistics and every failure path behave as documented. The
// GPU variants are in tests/gpu/gpu_engine_test.cpp.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <algorithm>
#include <atomic>
#include <future>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "support/bytes.h"
#include "support/cipher_table.h"
#include "support/scratch_files.h"
#include "support/test_rng.h"
#include "support/warpcrypt_calls.h"

#include "core/backend_tables.h"
#include "engine/endpoint.h"
#include "engine/io_buffer.h"
#include "engine/job_monitor.h"
#include "engine/lane_set.h"
#include "engine/placement.h"

namespace wctest {
namespace {

namespace fs = std::filesystem;

// The smallest chunk the engine takes, so that a few KiB cross many chunk
// boundaries.
constexpr size_t kChunk = 4096;

enum class Io { buffer, file, pipe };

const char *io_name(Io io) {
  switch (io) {
    case Io::buffer: return "buffer";
    case Io::file: return "file";
    case Io::pipe: return "pipe";
  }
  return "?";
}

struct JobResult {
  wc_status status = WC_OK;
  Bytes out;
  wc_job job{};
};

// One job over `in`: a buffer job, a descriptor job between regular files
// (the output starting after `out_prefix` bytes already written), or a
// descriptor job between pipes fed and drained by helper threads.
JobResult run_job(Io io, wc_direction direction, const wc_cipher *cipher, const Bytes &key, const Bytes &iv,
                  const Bytes &in, const wc_options &options, wc_progress_fn progress = nullptr,
                  void *progress_user = nullptr) {
  JobResult result;
  wc_job_init(&result.job);
  result.job.progress = progress;
  result.job.progress_user = progress_user;
  const auto fd_call = direction == WC_ENCRYPT ? wc_encrypt_fd : wc_decrypt_fd;
  switch (io) {
    case Io::buffer: {
      result.out.resize(direction == WC_ENCRYPT ? wc_encrypt_bound(cipher, in.size()) : in.size());
      size_t out_len = 0;
      const auto call = direction == WC_ENCRYPT ? wc_encrypt_buffer : wc_decrypt_buffer;
      result.status = call(&options, cipher, &result.job, result.out.data(), result.out.size(), &out_len,
                           key.data(), key.size(), iv.data(), iv.size(), data_or_dummy(in), in.size());
      result.out.resize(out_len);
      break;
    }
    case Io::file: {
      const ScratchDir dir;
      write_file(dir / "in", in);
      const int in_fd = open((dir / "in").c_str(), O_RDONLY);
      const int out_fd = open((dir / "out").c_str(), O_RDWR | O_CREAT, 0600);
      result.status = fd_call(&options, cipher, &result.job, out_fd, in_fd, key.data(), key.size(), iv.data(),
                              iv.size());
      // Both offsets end where read() and write() would have left them.
      if (result.status == WC_OK) {
        EXPECT_EQ(lseek(in_fd, 0, SEEK_CUR), static_cast<off_t>(in.size()));
        EXPECT_EQ(lseek(out_fd, 0, SEEK_CUR), static_cast<off_t>(result.job.bytes_out));
      }
      close(in_fd);
      close(out_fd);
      result.out = read_file(dir / "out");
      break;
    }
    case Io::pipe:
      result.out = through_pipes(in, [&](int out_fd, int in_fd) {
        return fd_call(&options, cipher, &result.job, out_fd, in_fd, key.data(), key.size(), iv.data(), iv.size());
      }, &result.status);
      break;
  }
  return result;
}

struct EngineCase {
  CipherSpec spec;
  wc_direction direction;
  Io io;
};

std::vector<EngineCase> engine_cases() {
  std::vector<EngineCase> cases;
  for (const CipherSpec &spec : all_cipher_specs()) {
    for (wc_direction direction : {WC_ENCRYPT, WC_DECRYPT}) {
      for (Io io : {Io::buffer, Io::file, Io::pipe}) cases.push_back({spec, direction, io});
    }
  }
  return cases;
}

std::string engine_case_name(const ::testing::TestParamInfo<EngineCase> &info) {
  return identifier_from(info.param.spec.name) + "_" + direction_name(info.param.direction) + "_" +
         io_name(info.param.io);
}

class EngineJobTest : public ::testing::TestWithParam<EngineCase> {};

// Sizes around chunk boundaries (a pipe's chunk also carries 16 bytes over),
// one and several threads, padding on and off, the cpu backend and, where a
// device is present, hybrid (the CPU alone for a mode the GPU does not run).
TEST_P(EngineJobTest, EqualsOneShotAtChunkBoundaries) {
  const EngineCase &c = GetParam();
  const wc_cipher *cipher = lookup(c.spec.name);
  TestRng rng = TestRng::for_current_test();
  const Bytes key = rng.bytes(c.spec.key_len);
  const Bytes iv = rng.bytes(c.spec.iv_len);
  const std::vector<size_t> sizes = {0, 1, 15, 16, 17, kChunk - 1, kChunk, kChunk + 1, kChunk + 16,
                                     kChunk + 17, 2 * kChunk, 7 * kChunk + 17};
  int devices = 0;
  ASSERT_EQ(wc_device_count(&devices), WC_OK);
  const std::vector<wc_backend> backends =
      devices != 0 ? std::vector<wc_backend>{WC_BACKEND_CPU, WC_BACKEND_HYBRID} : std::vector<wc_backend>{WC_BACKEND_CPU};
  for (bool padding : c.spec.padded ? std::vector<bool>{true, false} : std::vector<bool>{true}) {
    for (unsigned threads : {1u, 3u}) {
      for (wc_backend backend : backends) {
        const wc_cipher *run_cipher = with_padding(cipher, padding);
        wc_options options = make_options(threads, backend);
        options.chunk_bytes = kChunk;
        for (size_t size : sizes) {
          SCOPED_TRACE("size " + std::to_string(size) + ", threads " + std::to_string(threads) + ", " +
                       wc_backend_name(backend) + (padding ? "" : ", nopad"));
          Bytes in = rng.bytes(size);
          if (c.direction == WC_DECRYPT && padding && c.spec.padded) {
            // A valid ciphertext, so padding checks pass.
            in = lib_crypt(WC_ENCRYPT, cipher, key, iv, in, make_options(1, WC_BACKEND_CPU)).out;
          }
          const LibResult expected = lib_crypt(c.direction, run_cipher, key, iv, in, make_options(1, WC_BACKEND_CPU));
          const JobResult actual = run_job(c.io, c.direction, run_cipher, key, iv, in, options);
          ASSERT_EQ(actual.status, expected.status);
          if (expected.status != WC_OK) continue;
          ASSERT_TRUE(same_bytes(expected.out, actual.out));
          EXPECT_EQ(actual.job.bytes_in, in.size());
          EXPECT_EQ(actual.job.bytes_out, expected.out.size());
          // Hybrid runs GPU lanes where a device runs the mode; cpu never
          // does. A padding block counts as transformed bytes too.
          const uint64_t transformed = actual.job.cpu_bytes + actual.job.gpu_bytes;
          EXPECT_GE(transformed, in.size());
          EXPECT_LE(transformed, in.size() + 16);
          if (backend == WC_BACKEND_CPU) {
            EXPECT_EQ(actual.job.gpu_bytes, 0u);
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ciphers, EngineJobTest, ::testing::ValuesIn(engine_cases()), engine_case_name);

// ------------------------------------------------------------ progress, cancellation

struct ProgressLog {
  std::vector<uint64_t> done;
  uint64_t total = 0;
  size_t cancel_after = SIZE_MAX;  // calls before asking to stop
};

int record_progress(void *user, uint64_t done, uint64_t total) {
  auto *log = static_cast<ProgressLog *>(user);
  log->done.push_back(done);
  log->total = total;
  return log->done.size() > log->cancel_after ? 1 : 0;
}

// A stream cipher whose one-shot output is easy to produce.
struct Keyed {
  const wc_cipher *cipher = lookup("aes-128-ctr");
  Bytes key = Bytes(16, 0x11);
  Bytes iv = Bytes(16, 0x22);
};

TEST(EngineProgress, ReportsGrowingCountsAndEndsAtTheTotal) {
  const Keyed k;
  TestRng rng = TestRng::for_current_test();
  const Bytes in = rng.bytes(64 * kChunk);
  for (Io io : {Io::buffer, Io::file, Io::pipe}) {
    SCOPED_TRACE(io_name(io));
    ProgressLog log;
    wc_options options = make_options(2, WC_BACKEND_CPU);
    options.chunk_bytes = kChunk;
    const JobResult result = run_job(io, WC_ENCRYPT, k.cipher, k.key, k.iv, in, options, record_progress, &log);
    ASSERT_EQ(result.status, WC_OK);
    ASSERT_FALSE(log.done.empty());
    EXPECT_EQ(log.done.back(), in.size());
    EXPECT_TRUE(std::is_sorted(log.done.begin(), log.done.end()));
    // A pipe's size is unknown until its end.
    EXPECT_EQ(log.total, io == Io::pipe ? 0u : in.size());
  }
}

TEST(EngineProgress, NonzeroAnswerCancels) {
  const Keyed k;
  TestRng rng = TestRng::for_current_test();
  const Bytes in = rng.bytes(4096 * kChunk);  // 16 MiB: long enough to be asked twice
  for (Io io : {Io::buffer, Io::file, Io::pipe}) {
    SCOPED_TRACE(io_name(io));
    ProgressLog log;
    log.cancel_after = 0;
    wc_options options = make_options(1, WC_BACKEND_CPU);
    options.chunk_bytes = kChunk;
    const JobResult result = run_job(io, WC_ENCRYPT, k.cipher, k.key, k.iv, in, options, record_progress, &log);
    EXPECT_EQ(result.status, WC_ERR_CANCELLED);
    EXPECT_LT(result.out.size(), in.size()) << "the job went on after it was cancelled";
    if (io == Io::buffer) {
      EXPECT_TRUE(same_bytes(Bytes(result.out.size(), 0), result.out)) << "a failed buffer job zeroes its output";
    }
  }
}

TEST(EngineStats, CountsBytesPerBackend) {
  const Keyed k;
  const Bytes in(100 * kChunk + 3, 0x5a);
  wc_options options = make_options(2, WC_BACKEND_CPU);
  const JobResult result = run_job(Io::file, WC_ENCRYPT, k.cipher, k.key, k.iv, in, options);
  ASSERT_EQ(result.status, WC_OK);
  EXPECT_EQ(result.job.cpu_bytes, in.size());
  EXPECT_EQ(result.job.gpu_bytes, 0u);
  EXPECT_GT(result.job.seconds, 0.0);
}

// ------------------------------------------------------------ files and failures

// A job's plan is made by the planner alone (engine/placement.h): no code
// can build one, from nothing or from its fields, or change its fields.
static_assert(!std::is_default_constructible_v<warpcrypt::engine::Placement>);
static_assert(!std::is_constructible_v<warpcrypt::engine::Placement, warpcrypt::engine::Placement::Fields>);
static_assert(std::is_copy_constructible_v<warpcrypt::engine::Placement>);

TEST(EngineFile, WritesAtomicallyAndKeepsAnExistingFilesMode) {
  const Keyed k;
  const ScratchDir dir;
  TestRng rng = TestRng::for_current_test();
  const Bytes in = rng.bytes(10 * kChunk + 5);
  write_file(dir / "in", in);
  write_file(dir / "out", Bytes{1, 2, 3});
  ASSERT_EQ(chmod((dir / "out").c_str(), 0640), 0);
  wc_options options = make_options(2, WC_BACKEND_CPU);
  options.chunk_bytes = kChunk;
  ASSERT_EQ(wc_encrypt_file(&options, k.cipher, nullptr, (dir / "out").c_str(), (dir / "in").c_str(), k.key.data(),
                            16, k.iv.data(), 16),
            WC_OK);
  EXPECT_TRUE(same_bytes(lib_crypt(WC_ENCRYPT, k.cipher, k.key, k.iv, in, options).out, read_file(dir / "out")));
  EXPECT_EQ(fs::status(dir / "out").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  EXPECT_EQ(dir.entries().size(), 2u) << "a temporary file was left behind";
}

TEST(EngineFile, FailureLeavesTheTargetUntouchedAndNoTemporaryFile) {
  const wc_cipher *cbc = lookup("aes-256-cbc");
  const Bytes key(32, 7);
  const Bytes iv(16, 9);
  const ScratchDir dir;
  // Truncated ciphertext: not a whole number of blocks.
  write_file(dir / "truncated", Bytes(10 * kChunk + 5, 0x33));
  write_file(dir / "out", Bytes{4, 5, 6});
  wc_job job;
  wc_job_init(&job);
  EXPECT_EQ(wc_decrypt_file(nullptr, cbc, &job, (dir / "out").c_str(), (dir / "truncated").c_str(), key.data(), 32,
                            iv.data(), 16),
            WC_ERR_NOT_BLOCK_ALIGNED);
  EXPECT_TRUE(same_bytes(Bytes{4, 5, 6}, read_file(dir / "out")));
  // Whole blocks, but a wrong key: the padding check fails at the end.
  write_file(dir / "garbage", Bytes(10 * kChunk, 0x44));
  EXPECT_EQ(wc_decrypt_file(nullptr, cbc, &job, (dir / "new").c_str(), (dir / "garbage").c_str(), key.data(), 32,
                            iv.data(), 16),
            WC_ERR_BAD_DECRYPT);
  EXPECT_FALSE(fs::exists(dir / "new"));
  EXPECT_EQ(dir.entries().size(), 3u) << "a temporary file was left behind";
}

TEST(EngineFile, CancelledRunLeavesNoOutput) {
  const Keyed k;
  const ScratchDir dir;
  write_file(dir / "in", Bytes(4096 * kChunk, 1));
  ProgressLog log;
  log.cancel_after = 0;
  wc_job job;
  wc_job_init(&job);
  job.progress = record_progress;
  job.progress_user = &log;
  wc_options options = make_options(1, WC_BACKEND_CPU);
  options.chunk_bytes = kChunk;
  EXPECT_EQ(wc_encrypt_file(&options, k.cipher, &job, (dir / "out").c_str(), (dir / "in").c_str(), k.key.data(), 16,
                            k.iv.data(), 16),
            WC_ERR_CANCELLED);
  EXPECT_FALSE(fs::exists(dir / "out"));
  EXPECT_EQ(dir.entries().size(), 1u);
}

TEST(EngineFile, RefusesToOverwriteItsInput) {
  const Keyed k;
  const ScratchDir dir;
  write_file(dir / "in", Bytes(100, 1));
  fs::create_symlink(dir / "in", dir / "link");
  for (const char *out : {"in", "link"}) {
    EXPECT_EQ(wc_encrypt_file(nullptr, k.cipher, nullptr, (dir / out).c_str(), (dir / "in").c_str(), k.key.data(), 16,
                              k.iv.data(), 16),
              WC_ERR_INVALID_ARGUMENT)
        << out;
  }
  EXPECT_TRUE(same_bytes(Bytes(100, 1), read_file(dir / "in")));
}

TEST(EngineFile, UnreadableInputAndMissingDirectoryGiveTheOsError) {
  const Keyed k;
  const ScratchDir dir;
  wc_job job;
  wc_job_init(&job);
  EXPECT_EQ(wc_encrypt_file(nullptr, k.cipher, &job, (dir / "out").c_str(), (dir / "missing").c_str(), k.key.data(),
                            16, k.iv.data(), 16),
            WC_ERR_IO);
  EXPECT_EQ(job.os_error, ENOENT);
  EXPECT_STREQ(job.message, std::strerror(ENOENT));
  EXPECT_FALSE(fs::exists(dir / "out"));
  write_file(dir / "in", Bytes(100, 1));
  EXPECT_EQ(wc_encrypt_file(nullptr, k.cipher, &job, (dir / "no" / "out").c_str(), (dir / "in").c_str(),
                            k.key.data(), 16, k.iv.data(), 16),
            WC_ERR_IO);
  EXPECT_EQ(job.os_error, ENOENT);
}

TEST(EngineFd, FullDeviceIsAnIoError) {
  const Keyed k;
  const ScratchDir dir;
  write_file(dir / "in", Bytes(10 * kChunk, 1));
  const int in_fd = open((dir / "in").c_str(), O_RDONLY);
  const int full = open("/dev/full", O_WRONLY);
  if (full < 0) GTEST_SKIP() << "no /dev/full";
  wc_job job;
  wc_job_init(&job);
  EXPECT_EQ(wc_encrypt_fd(nullptr, k.cipher, &job, full, in_fd, k.key.data(), 16, k.iv.data(), 16), WC_ERR_IO);
  EXPECT_EQ(job.os_error, ENOSPC);
  EXPECT_STREQ(job.message, std::strerror(ENOSPC)) << "an I/O failure in errno's words";
  close(in_fd);
  close(full);
}

TEST(EngineOptions, BadEngineFieldsAreInvalidArguments) {
  const Keyed k;
  const Bytes in(100, 1);
  Bytes out(100);
  size_t out_len = 0;
  const int no_devices[1] = {0};
  auto run = [&](const wc_options &options) {
    return wc_encrypt_buffer(&options, k.cipher, nullptr, out.data(), out.size(), &out_len, k.key.data(), 16,
                             k.iv.data(), 16, in.data(), in.size());
  };
  wc_options options = make_options(0, WC_BACKEND_CPU);
  options.chunk_bytes = 1000;  // not a multiple of 4 KiB
  EXPECT_EQ(run(options), WC_ERR_INVALID_ARGUMENT);
  options = make_options(0, WC_BACKEND_CPU);
  options.streams = 1000;
  EXPECT_EQ(run(options), WC_ERR_INVALID_ARGUMENT);
  options = make_options(0, WC_BACKEND_CPU);
  options.devices = no_devices;  // a list with no length
  EXPECT_EQ(run(options), WC_ERR_INVALID_ARGUMENT);
}

TEST(EngineOptions, GpuBackendWithoutADeviceIsAnError) {
  int devices = 0;
  ASSERT_EQ(wc_device_count(&devices), WC_OK);
  if (devices != 0) GTEST_SKIP() << "a CUDA device is present";
  const Keyed k;
  const Bytes in(100, 1);
  const JobResult result = run_job(Io::file, WC_ENCRYPT, k.cipher, k.key, k.iv, in,
                                   make_options(0, WC_BACKEND_GPU));
  EXPECT_EQ(result.status, WC_ERR_NO_DEVICE);
}

// No silent fallback: hybrid without a device, and a device list that names
// one the machine lacks (with any backend), fail with a sentence that says
// how to run on the CPU, from jobs and from streaming contexts alike.
TEST(EngineOptions, AMissingDeviceIsAnErrorNeverTheCpu) {
  int devices = 0;
  ASSERT_EQ(wc_device_count(&devices), WC_OK);
  const Keyed k;
  const Bytes in(100, 1);
  const int missing[] = {devices};
  std::vector<wc_options> refused;
  for (wc_backend backend : {WC_BACKEND_AUTO, WC_BACKEND_CPU, WC_BACKEND_GPU, WC_BACKEND_HYBRID}) {
    wc_options options = make_options(0, backend);
    options.devices = missing;
    options.device_count = 1;
    refused.push_back(options);
  }
  if (devices == 0) refused.push_back(make_options(0, WC_BACKEND_HYBRID));
  for (const wc_options &options : refused) {
    SCOPED_TRACE(std::string("backend ") + wc_backend_name(options.backend));
    const JobResult result = run_job(Io::file, WC_ENCRYPT, k.cipher, k.key, k.iv, in, options);
    EXPECT_EQ(result.status, WC_ERR_NO_DEVICE);
    EXPECT_NE(std::string(result.job.message).find("run on the CPU with backend cpu"), std::string::npos)
        << result.job.message;
    wc_ctx *ctx = nullptr;
    EXPECT_EQ(wc_ctx_new(&ctx, &options, k.cipher, WC_ENCRYPT, k.key.data(), k.key.size(), k.iv.data(),
                                k.iv.size()),
              WC_ERR_NO_DEVICE);
    wc_ctx_free(ctx);
  }
  EXPECT_EQ(wc_status_kind_of(WC_ERR_NO_DEVICE), WC_KIND_NO_DEVICE);
}

// Both kinds of memory keep the same rules: a GPU lane's page-locked
// buffer (pageable where no device gives page-locked memory) and a CPU
// lane's.
using warpcrypt::engine::HostMemory;
class EngineIoBuffer : public ::testing::TestWithParam<HostMemory> {};
INSTANTIATE_TEST_SUITE_P(Memory, EngineIoBuffer, ::testing::Values(HostMemory::pageable, HostMemory::page_locked),
                         [](const auto &memory) {
                           return std::string(memory.param == HostMemory::pageable ? "pageable" : "page_locked");
                         });

// However far into its page a file offset is, the bytes for it start on a
// cache line and never 1 to 31 bytes from it within a page, either way (the
// kernel's slow copies), whatever was placed before.
TEST_P(EngineIoBuffer, KeepsEveryWindowOutOfTheSlowCopies) {
  warpcrypt::engine::IoBuffer buffer(GetParam());
  std::vector<uint64_t> offsets;
  // Every offset within a page, each in a page of its own.
  for (uint64_t in_page = 0; in_page < 4096; ++in_page) offsets.push_back(4097 * in_page);
  for (const uint64_t far : {uint64_t{3} << 40, UINT64_MAX - 200, UINT64_MAX}) offsets.push_back(far);
  size_t len = 0;
  for (const uint64_t offset : offsets) {
    len = (len * 7 + 4093) % (size_t{3} << 20);  // growing and shrinking windows
    uint8_t *bytes = buffer.place(len, offset);
    ASSERT_NE(bytes, nullptr);
    ASSERT_EQ(bytes, buffer.data());
    const auto address = reinterpret_cast<uintptr_t>(bytes);
    EXPECT_EQ(address % 64, 0u) << offset;
    const uint64_t apart = (address - offset) % 4096;
    EXPECT_TRUE(apart == 0 || (apart >= 32 && apart <= 4096 - 32)) << offset << " is " << apart << " bytes off";
    std::memset(bytes, 0xa5, len);  // the room is there (AddressSanitizer checks the bounds)
  }
}

// A window read in order grows as its bytes arrive: growing keeps them.
TEST_P(EngineIoBuffer, GrowingAtTheSamePageOffsetKeepsTheBytes) {
  warpcrypt::engine::IoBuffer buffer(GetParam());
  Bytes held(3000);
  for (size_t i = 0; i < held.size(); ++i) held[i] = static_cast<uint8_t>(i * 7 + 1);
  for (const uint64_t offset : {uint64_t{0}, uint64_t{4096 + 5}}) {
    std::memcpy(buffer.place(held.size(), offset), held.data(), held.size());
    for (const size_t len : {size_t{64} << 10, size_t{4} << 20}) {
      const uint8_t *grown = buffer.place(len, offset);
      ASSERT_NE(grown, nullptr);
      EXPECT_TRUE(same_bytes(held.data(), held.size(), grown, held.size())) << offset << " " << len;
    }
  }
}

// Where a device gives page-locked memory, a GPU lane's buffer is
// page-locked, so the device copies from it straight; elsewhere it is
// pageable, and the same bytes all the same.
TEST(EngineIoBufferMemory, PageLockedWhereADeviceGivesIt) {
  int devices = 0;
  const bool device = wc_device_count(&devices) == WC_OK && devices > 0;
  warpcrypt::engine::IoBuffer locked(HostMemory::page_locked), pageable;
  ASSERT_NE(locked.place(size_t{1} << 20, 0), nullptr);
  ASSERT_NE(pageable.place(size_t{1} << 20, 0), nullptr);
  EXPECT_EQ(warpcrypt::kCudaBackend.page_locked(locked.data()), device);
  EXPECT_FALSE(warpcrypt::kCudaBackend.page_locked(pageable.data()));
}

// The process's one pool of page-locked memory (backends/cuda/pinned_pool.h),
// as the engine and the C API reach it. Each test runs in a process of its
// own (gtest_discover_tests), so the pool starts empty.
class PinnedPool : public ::testing::Test {
 protected:
  void SetUp() override {
    int devices = 0;
    if (wc_device_count(&devices) != WC_OK || devices == 0) GTEST_SKIP() << "no CUDA device: no page-locked memory";
  }
  static bool all_zero(const uint8_t *bytes, size_t len) {
    return std::all_of(bytes, bytes + len, [](uint8_t b) { return b == 0; });
  }
};

// A block given back serves the next request of its size, with what it
// held wiped: the holder says how far it wrote, and the pool wipes that far.
TEST_F(PinnedPool, ABlockGivenBackIsWipedAsFarAsItHeldBytesAndServesTheNextRequest) {
  constexpr size_t kBytes = size_t{1} << 20;
  void *first = nullptr;
  ASSERT_EQ(warpcrypt::kCudaBackend.alloc_pinned(&first, kBytes), WC_OK);
  std::memset(first, 0x5a, 4096);
  warpcrypt::kCudaBackend.free_pinned(first, 4096);
  void *second = nullptr;
  ASSERT_EQ(warpcrypt::kCudaBackend.alloc_pinned(&second, kBytes), WC_OK);
  EXPECT_EQ(second, first) << "a block of the size asked for was kept";
  EXPECT_TRUE(all_zero(static_cast<uint8_t *>(second), 4096));
  EXPECT_TRUE(warpcrypt::kCudaBackend.page_locked(second));
  warpcrypt::kCudaBackend.free_pinned(second, 0);
}

// A small request never holds a large window: a block serves requests of at
// least half its size.
TEST_F(PinnedPool, ASmallRequestDoesNotTakeALargeBlock) {
  void *large = nullptr;
  ASSERT_EQ(warpcrypt::kCudaBackend.alloc_pinned(&large, size_t{8} << 20), WC_OK);
  warpcrypt::kCudaBackend.free_pinned(large, 0);
  void *small = nullptr;
  ASSERT_EQ(warpcrypt::kCudaBackend.alloc_pinned(&small, size_t{64} << 10), WC_OK);
  EXPECT_NE(small, large);
  void *window = nullptr;
  ASSERT_EQ(warpcrypt::kCudaBackend.alloc_pinned(&window, (size_t{8} << 20) - 100), WC_OK);
  EXPECT_EQ(window, large);
  warpcrypt::kCudaBackend.free_pinned(small, 0);
  warpcrypt::kCudaBackend.free_pinned(window, 0);
}

// The C API's page-locked memory holds whatever the caller wrote: all of
// it is wiped when it comes back.
TEST_F(PinnedPool, MemoryTheCallerFreesIsWipedWhole) {
  constexpr size_t kBytes = size_t{3} << 20;
  void *first = nullptr;
  ASSERT_EQ(wc_host_alloc_pinned(&first, kBytes), WC_OK);
  std::memset(first, 0x5a, kBytes);
  wc_host_free_pinned(first);
  void *second = nullptr;
  ASSERT_EQ(wc_host_alloc_pinned(&second, kBytes), WC_OK);
  ASSERT_EQ(second, first);
  EXPECT_TRUE(all_zero(static_cast<uint8_t *>(second), kBytes));
  wc_host_free_pinned(second);
}

// A page-locked IoBuffer gives its memory back with every byte it placed
// marked as held, so the next buffer gets it wiped.
TEST_F(PinnedPool, AnIoBufferGivesBackWhatItHeldToBeWiped) {
  constexpr size_t kBytes = size_t{2} << 20;
  const uint8_t *first = nullptr;
  {
    warpcrypt::engine::IoBuffer buffer(HostMemory::page_locked);
    uint8_t *bytes = buffer.place(kBytes, 0);
    ASSERT_NE(bytes, nullptr);
    std::memset(bytes, 0x5a, kBytes);
    first = bytes;
  }
  warpcrypt::engine::IoBuffer buffer(HostMemory::page_locked);
  const uint8_t *bytes = buffer.place(kBytes, 0);
  ASSERT_EQ(bytes, first) << "the block came back to the pool";
  EXPECT_TRUE(all_zero(bytes, kBytes));
}

// OrderedWriter on a pipe: pieces handed over before their turn wait with
// the writer while their lane goes on, and whoever writes the turn before
// them writes them too.
class EngineOrderedWriter : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(pipe(fds_), 0);
    ASSERT_EQ(warpcrypt::engine::open_endpoint(&out_, fds_[1]), WC_OK);
    ASSERT_FALSE(out_.seekable);
  }
  void TearDown() override {
    if (fds_[1] >= 0) close(fds_[1]);
    close(fds_[0]);
  }
  // Closes the writing end and returns everything the pipe holds.
  std::string drain() {
    close(fds_[1]);
    fds_[1] = -1;
    std::string got;
    char piece[4096];
    for (ssize_t n; (n = read(fds_[0], piece, sizeof piece)) > 0;) got.append(piece, static_cast<size_t>(n));
    return got;
  }
  wc_status hand(warpcrypt::engine::OrderedWriter &writer, size_t index, const std::string &text) {
    return writer.hand_over(index, 1, 0, reinterpret_cast<const uint8_t *>(text.data()), text.size());
  }

  int fds_[2] = {-1, -1};
  warpcrypt::engine::Endpoint out_;
  warpcrypt::engine::JobMonitor monitor_{nullptr, 0};
};

TEST_F(EngineOrderedWriter, APieceBeforeItsTurnIsWrittenByTheTurnBeforeIt) {
  warpcrypt::engine::OrderedWriter writer(out_, monitor_);
  const std::string pieces[] = {"zero ", "one ", "two ", "three"};
  EXPECT_EQ(hand(writer, 2, pieces[2]), WC_OK);
  EXPECT_EQ(hand(writer, 1, pieces[1]), WC_OK);
  EXPECT_FALSE(writer.written(1));
  EXPECT_FALSE(writer.written(2));
  EXPECT_EQ(hand(writer, 0, pieces[0]), WC_OK);  // writes 0, then 1 and 2 for their lanes
  EXPECT_TRUE(writer.written(2));
  EXPECT_FALSE(writer.written(3));
  EXPECT_EQ(hand(writer, 3, pieces[3]), WC_OK);
  writer.wait_written(3);
  EXPECT_EQ(drain(), "zero one two three");
}

// Many lanes claim pieces in turn and finish them in any order (every 7th
// dawdles): handing them over, each lane keeping at most two unwritten as
// the AEAD streams' lanes do, or writing each and waiting until it is
// written, as the cipher pipeline's lanes do. The pipe gets them in order
// either way.
class EngineOrderedWriterLanes : public EngineOrderedWriter, public ::testing::WithParamInterface<bool> {};

TEST_P(EngineOrderedWriterLanes, WriteInOrderWhateverOrderTheyFinishIn) {
  const bool hand_over = GetParam();
  constexpr size_t kPieces = 3000;
  constexpr unsigned kLanes = 12;
  std::vector<std::string> pieces(kPieces);
  std::string expected;
  for (size_t i = 0; i < kPieces; ++i) {
    pieces[i] = "<" + std::to_string(i) + std::string(i % 97, 'x') + ">";
    expected += pieces[i];
  }
  std::future<std::string> read_back = std::async(std::launch::async, [this] {
    std::string got;
    char piece[4096];
    for (ssize_t n; (n = read(fds_[0], piece, sizeof piece)) > 0;) got.append(piece, static_cast<size_t>(n));
    return got;
  });
  {
    warpcrypt::engine::OrderedWriter writer(out_, monitor_);
    std::atomic<size_t> next{0};
    std::vector<std::thread> lanes;
    for (unsigned lane = 0; lane < kLanes; ++lane) {
      lanes.emplace_back([&] {
        std::vector<size_t> held;
        for (size_t i = next++; i < kPieces; i = next++) {
          if (i % 7 == 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
          const auto *bytes = reinterpret_cast<const uint8_t *>(pieces[i].data());
          if (!hand_over) {
            EXPECT_EQ(writer.write(i, 1, 0, bytes, pieces[i].size()), WC_OK);
            continue;
          }
          if (held.size() == 2) {
            writer.wait_written(held.front());
            held.erase(held.begin());
          }
          EXPECT_EQ(writer.hand_over(i, 1, 0, bytes, pieces[i].size()), WC_OK);
          held.push_back(i);
        }
      });
    }
    for (std::thread &lane : lanes) lane.join();
    writer.wait_written(kPieces - 1);
  }
  close(fds_[1]);
  fds_[1] = -1;
  EXPECT_EQ(read_back.get(), expected);
}

INSTANTIATE_TEST_SUITE_P(HandedOverOrWritten, EngineOrderedWriterLanes, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool> &param) {
                           return param.param ? "HandedOver" : "Written";
                         });

TEST_F(EngineOrderedWriter, AStoppedJobWritesNothingMoreAndWaitsForNothing) {
  warpcrypt::engine::OrderedWriter writer(out_, monitor_);
  EXPECT_EQ(hand(writer, 1, "one"), WC_OK);
  monitor_.fail(WC_ERR_AUTH);
  writer.wait_written(1);  // returns: nobody will write it
  EXPECT_EQ(hand(writer, 0, "zero"), WC_OK);
  EXPECT_FALSE(writer.written(0));
  EXPECT_EQ(drain(), "");
}

TEST(EngineOrderedWriterFailing, AFailedWriteWritesNoPieceAfterIt) {
  const int full = open("/dev/full", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(full, 0);
  warpcrypt::engine::Endpoint out;
  ASSERT_EQ(warpcrypt::engine::open_endpoint(&out, full), WC_OK);
  warpcrypt::engine::JobMonitor monitor(nullptr, 0);
  warpcrypt::engine::OrderedWriter writer(out, monitor);
  const uint8_t bytes[8] = {};
  EXPECT_EQ(writer.hand_over(1, 1, 0, bytes, sizeof bytes), WC_OK);
  EXPECT_EQ(writer.hand_over(0, 1, 0, bytes, sizeof bytes), WC_ERR_IO);
  EXPECT_TRUE(monitor.stopped());
  EXPECT_FALSE(writer.written(1));
  writer.wait_written(1);  // returns: the job stopped
  close(full);
}

// A hybrid descriptor job counts its devices beside its first work
// (engine::DeviceCheck): the check runs on a thread of its own, and its
// caller gets what it found once it waits.
TEST(EngineDeviceCheck, RunsBesideItsCallerAndGivesWhatItFound) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  warpcrypt::engine::DeviceCheck check([released](std::vector<int> *devices, unsigned *spare_cpu_lanes) {
    if (released.wait_for(std::chrono::seconds(5)) != std::future_status::ready) return WC_ERR_CANCELLED;
    *devices = {0, 2};
    *spare_cpu_lanes = 8;
    return WC_OK;
  });
  EXPECT_FALSE(check.done()) << "the check ran on its caller's thread";
  release.set_value();
  EXPECT_EQ(check.wait(), WC_OK);
  EXPECT_TRUE(check.done());
  EXPECT_EQ(check.devices(), (std::vector<int>{0, 2}));
  EXPECT_EQ(check.spare_cpu_lanes(), 8u);
}

}  // namespace
}  // namespace wctest
