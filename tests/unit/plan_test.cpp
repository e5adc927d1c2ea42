// wc_plan_describe: the plan agrees with what the jobs it describes run on
// (their wc_job byte counts, wc_ctx_backend, wc_aead_key_backend), for every
// backend and for auto on either side of a break-even size, and options a
// job refuses are refused with the job's status and message. Without a
// device (this machine) the gpu and hybrid backends are WC_ERR_NO_DEVICE.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "support/bytes.h"
#include "support/scratch_files.h"

namespace wctest {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

bool have_device() {
  int count = 0;
  return wc_device_count(&count) == WC_OK && count > 0;
}

wc_options options_for(wc_backend backend) {
  wc_options options;
  wc_options_init(&options);
  options.backend = backend;
  return options;
}

wc_work cipher_work(const char *cipher, wc_data_place data, uint64_t bytes) {
  return wc_work{wc_cipher_by_name(cipher), nullptr, WC_ENCRYPT, data, bytes};
}

wc_work aead_work(wc_data_place data, uint64_t bytes) {
  return wc_work{nullptr, wc_aead_by_name("aes-256-gcm"), WC_ENCRYPT, data, bytes};
}

struct Described {
  wc_status status;
  wc_plan plan;
  wc_job job;
};

Described describe(const wc_options &options, const wc_work &work) {
  Described d{};
  wc_job_init(&d.job);
  d.status = wc_plan_describe(&options, &work, &d.job, &d.plan);
  return d;
}

// A wc_encrypt_buffer job of `bytes` of pageable memory: its status and its
// wc_job.
Described run_buffer_job(const wc_options &options, const char *cipher_name, size_t bytes) {
  const wc_cipher *cipher = wc_cipher_by_name(cipher_name);
  const Bytes key(wc_cipher_key_len(cipher), 7), iv(wc_cipher_iv_len(cipher), 9), in(bytes, 1);
  Bytes out(wc_encrypt_bound(cipher, bytes));
  Described ran{};
  wc_job_init(&ran.job);
  size_t written = 0;
  ran.status = wc_encrypt_buffer(&options, cipher, &ran.job, out.data(), out.size(), &written, key.data(), key.size(),
                                 iv.data(), iv.size(), in.data(), in.size());
  return ran;
}

// Where a job ran, from its byte counts.
wc_backend ran_on(const wc_job &job) {
  if (job.gpu_bytes == 0) return WC_BACKEND_CPU;
  return job.cpu_bytes == 0 ? WC_BACKEND_GPU : WC_BACKEND_HYBRID;
}

TEST(Plan, CpuPlanIsWhatTheJobRuns) {
  wc_options options = options_for(WC_BACKEND_CPU);
  options.threads = 3;
  const Described d = describe(options, cipher_work("aes-256-ctr", WC_DATA_PAGEABLE, 8 * kMiB));
  ASSERT_EQ(d.status, WC_OK) << d.job.message;
  EXPECT_EQ(d.plan.backend, WC_BACKEND_CPU);
  EXPECT_EQ(d.plan.reason, WC_PLAN_AS_ASKED);
  EXPECT_EQ(d.plan.cpu_lanes, 3u);
  EXPECT_EQ(d.plan.device_count, 0u);
  EXPECT_EQ(d.plan.gpu_lanes_per_device, 0u);
  EXPECT_EQ(d.plan.chunk_bytes, WC_DEFAULT_CPU_CHUNK_BYTES);
  const Described ran = run_buffer_job(options, "aes-256-ctr", 8 * kMiB);
  ASSERT_EQ(ran.status, WC_OK);
  EXPECT_EQ(ran_on(ran.job), d.plan.backend);
}

TEST(Plan, TheDefaultsTakeEveryCore) {
  const wc_work work = cipher_work("aes-128-ctr", WC_DATA_PAGEABLE, 0);
  wc_plan plan;
  ASSERT_EQ(wc_plan_describe(nullptr, &work, nullptr, &plan), WC_OK);
  EXPECT_EQ(plan.backend, WC_BACKEND_CPU);
  EXPECT_EQ(plan.cpu_lanes, wc_default_threads());
}

TEST(Plan, GpuAndHybridWithoutADeviceFailAsTheJobDoes) {
  if (have_device()) GTEST_SKIP() << "a CUDA device is present";
  for (const wc_backend backend : {WC_BACKEND_GPU, WC_BACKEND_HYBRID}) {
    const wc_options options = options_for(backend);
    const Described d = describe(options, cipher_work("aes-256-ctr", WC_DATA_PAGEABLE, kMiB));
    const Described ran = run_buffer_job(options, "aes-256-ctr", kMiB);
    EXPECT_EQ(d.status, WC_ERR_NO_DEVICE) << wc_backend_name(backend);
    EXPECT_EQ(ran.status, d.status);
    EXPECT_STREQ(d.job.message, ran.job.message);
    EXPECT_EQ(d.plan.backend, WC_BACKEND_AUTO) << "a failed describe zeroes the plan";
  }
}

TEST(Plan, HybridPlanIsWhatTheJobRuns) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const wc_options options = options_for(WC_BACKEND_HYBRID);
  const Described d = describe(options, cipher_work("aes-256-ctr", WC_DATA_PAGEABLE, 64 * kMiB));
  ASSERT_EQ(d.status, WC_OK) << d.job.message;
  EXPECT_EQ(d.plan.backend, WC_BACKEND_HYBRID);
  EXPECT_NE(d.plan.gpu_lanes_late, 0);
  EXPECT_GT(d.plan.device_count, 0u);
  EXPECT_EQ(d.plan.gpu_lanes_per_device, unsigned{WC_DEFAULT_STREAMS});
  const Described ran = run_buffer_job(options, "aes-256-ctr", 64 * kMiB);
  ASSERT_EQ(ran.status, WC_OK);
  EXPECT_GT(ran.job.cpu_bytes, 0u) << "a hybrid job's CPU lanes start at once";
}

TEST(Plan, AutoKeepsPageableMemoryOnTheCpuAsTheJobDoes) {
  const wc_options options = options_for(WC_BACKEND_AUTO);
  const Described d = describe(options, cipher_work("chacha20", WC_DATA_PAGEABLE, 16 * kMiB));
  ASSERT_EQ(d.status, WC_OK);
  EXPECT_EQ(d.plan.backend, WC_BACKEND_CPU);
  EXPECT_EQ(d.plan.reason, WC_PLAN_STAGED_INPUT);
  const Described ran = run_buffer_job(options, "chacha20", 16 * kMiB);
  ASSERT_EQ(ran.status, WC_OK);
  EXPECT_EQ(ran_on(ran.job), d.plan.backend);
}

TEST(Plan, AutoOnPinnedMemoryFollowsTheBreakEvenSize) {
  const wc_cipher *chacha20 = wc_cipher_by_name("chacha20");
  const size_t break_even = wc_auto_gpu_min_bytes(chacha20, WC_ENCRYPT);
  ASSERT_NE(break_even, SIZE_MAX);
  const wc_options options = options_for(WC_BACKEND_AUTO);

  const Described below = describe(options, cipher_work("chacha20", WC_DATA_PINNED, break_even - 4096));
  ASSERT_EQ(below.status, WC_OK);
  EXPECT_EQ(below.plan.backend, WC_BACKEND_CPU);
  EXPECT_EQ(below.plan.reason, WC_PLAN_BELOW_BREAK_EVEN);
  EXPECT_STREQ(below.plan.reason_text, "below the measured GPU break-even size");

  const Described above = describe(options, cipher_work("chacha20", WC_DATA_PINNED, break_even));
  ASSERT_EQ(above.status, WC_OK);
  if (have_device()) {
    EXPECT_EQ(above.plan.backend, WC_BACKEND_HYBRID);
    EXPECT_EQ(above.plan.reason, WC_PLAN_AT_BREAK_EVEN);
    EXPECT_EQ(above.plan.gpu_lanes_late, 0) << "auto's GPU lanes take part from the start";
  } else {
    EXPECT_EQ(above.plan.backend, WC_BACKEND_CPU);
    EXPECT_EQ(above.plan.reason, WC_PLAN_NO_DEVICE);
  }

  // A mode whose break-even the GPU never reached stays on the CPU.
  const Described never = describe(options, cipher_work("aes-128-ctr", WC_DATA_PINNED, 1ull << 40));
  ASSERT_EQ(never.status, WC_OK);
  EXPECT_EQ(never.plan.reason, WC_PLAN_CPU_ALWAYS_FASTER);
}

TEST(Plan, AStreamContextRunsWhereThePlanSays) {
  const wc_options options = options_for(WC_BACKEND_AUTO);
  const wc_cipher *cipher = wc_cipher_by_name("aes-256-ctr");
  const Bytes key(32, 1), iv(16, 2);
  wc_ctx *ctx = nullptr;
  ASSERT_EQ(wc_ctx_new(&ctx, &options, cipher, WC_ENCRYPT, key.data(), key.size(), iv.data(), iv.size()), WC_OK);
  const Described d = describe(options, cipher_work("aes-256-ctr", WC_DATA_PAGEABLE, kMiB));
  EXPECT_EQ(wc_ctx_backend(ctx), d.plan.backend);
  wc_ctx_free(ctx);
}

TEST(Plan, ASequentialModeRunsOnOneCpuThread) {
  const Described d = describe(options_for(WC_BACKEND_AUTO), cipher_work("aes-256-ofb", WC_DATA_PINNED, 64 * kMiB));
  ASSERT_EQ(d.status, WC_OK);
  EXPECT_EQ(d.plan.backend, WC_BACKEND_CPU);
  EXPECT_EQ(d.plan.reason, WC_PLAN_SEQUENTIAL_MODE);
  EXPECT_EQ(d.plan.cpu_lanes, 1u);
  const Described ran = run_buffer_job(options_for(WC_BACKEND_AUTO), "aes-256-ofb", kMiB);
  ASSERT_EQ(ran.status, WC_OK);
  EXPECT_EQ(ran_on(ran.job), WC_BACKEND_CPU);
}

TEST(Plan, DescriptorJobsRunWhereThePlanSays) {
  const wc_options options = options_for(WC_BACKEND_AUTO);
  const Described d = describe(options, cipher_work("chacha20", WC_DATA_STREAM, 4 * kMiB));
  ASSERT_EQ(d.status, WC_OK);
  EXPECT_EQ(d.plan.backend, WC_BACKEND_CPU);
  EXPECT_EQ(d.plan.reason, WC_PLAN_STAGED_INPUT);

  ScratchDir dir;
  write_file(dir / "in", Bytes(4 * kMiB, 3));
  const wc_cipher *cipher = wc_cipher_by_name("chacha20");
  const Bytes key(32, 1), iv(16, 2);
  wc_job job;
  wc_job_init(&job);
  ASSERT_EQ(wc_encrypt_file(&options, cipher, &job, (dir / "out").c_str(), (dir / "in").c_str(), key.data(),
                            key.size(), iv.data(), iv.size()),
            WC_OK);
  EXPECT_EQ(ran_on(job), d.plan.backend);
}

TEST(Plan, AeadHostMemoryRunsWhereItsKeyDoes) {
  for (const wc_backend backend : {WC_BACKEND_AUTO, WC_BACKEND_CPU}) {
    const wc_options options = options_for(backend);
    const Described d = describe(options, aead_work(WC_DATA_PAGEABLE, kMiB));
    ASSERT_EQ(d.status, WC_OK) << d.job.message;
    EXPECT_EQ(d.plan.reason, backend == WC_BACKEND_AUTO ? WC_PLAN_NO_AEAD_BREAK_EVEN : WC_PLAN_AS_ASKED);
    const Bytes key(32, 5);
    wc_aead_key *made = nullptr;
    ASSERT_EQ(wc_aead_key_new(&made, &options, wc_aead_by_name("aes-256-gcm"), key.data(), key.size()), WC_OK);
    EXPECT_EQ(wc_aead_key_backend(made), d.plan.backend);
    wc_aead_key_free(made);
  }
}

TEST(Plan, SealedFilesUnderAutoRunOnTheCpu) {
  const Described d = describe(options_for(WC_BACKEND_AUTO), aead_work(WC_DATA_STREAM, 0));
  ASSERT_EQ(d.status, WC_OK);
  EXPECT_EQ(d.plan.backend, WC_BACKEND_CPU);
  EXPECT_EQ(d.plan.reason, WC_PLAN_NO_AEAD_BREAK_EVEN);
}

TEST(Plan, DeviceMemoryNeedsADeviceAndABackendThatReachesIt) {
  if (have_device()) {
    const Described d = describe(options_for(WC_BACKEND_AUTO), aead_work(WC_DATA_DEVICE, kMiB));
    ASSERT_EQ(d.status, WC_OK);
    EXPECT_EQ(d.plan.backend, WC_BACKEND_GPU);
    EXPECT_EQ(d.plan.reason, WC_PLAN_DEVICE_MEMORY);
    EXPECT_EQ(describe(options_for(WC_BACKEND_CPU), aead_work(WC_DATA_DEVICE, kMiB)).status,
              WC_ERR_BACKEND_UNAVAILABLE);
  } else {
    EXPECT_EQ(describe(options_for(WC_BACKEND_AUTO), aead_work(WC_DATA_DEVICE, kMiB)).status, WC_ERR_NO_DEVICE);
  }
}

// Each refused field, described and run: one status, one message.
TEST(Plan, RefusedOptionsGiveTheJobsMessage) {
  const int device = 0;
  wc_options bad_chunk = options_for(WC_BACKEND_CPU);
  bad_chunk.chunk_bytes = 1000;
  wc_options bad_streams = options_for(WC_BACKEND_CPU);
  bad_streams.streams = 65;
  wc_options half_list = options_for(WC_BACKEND_CPU);
  half_list.devices = &device;
  for (const wc_options &options : {bad_chunk, bad_streams, half_list}) {
    const Described d = describe(options, cipher_work("aes-256-ctr", WC_DATA_PAGEABLE, kMiB));
    const Described ran = run_buffer_job(options, "aes-256-ctr", kMiB);
    EXPECT_EQ(d.status, WC_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(ran.status, WC_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(d.job.message), "");
    EXPECT_STREQ(d.job.message, ran.job.message);
  }
}

// A file job is planned before it opens a file: a refused option names
// the option, not the missing input, and leaves no output behind.
TEST(Plan, AFileJobIsPlannedBeforeItOpensAFile) {
  wc_options bad_chunk = options_for(WC_BACKEND_CPU);
  bad_chunk.chunk_bytes = 1000;
  const ScratchDir dir;
  const Bytes key(32, 1), iv(16, 2);
  for (const char *name : {"aes-256-ctr", "aes-256-cbc"}) {  // parallel, and one stream
    const wc_cipher *cipher = wc_cipher_by_name(name);
    wc_job job;
    wc_job_init(&job);
    EXPECT_EQ(wc_encrypt_file(&bad_chunk, cipher, &job, (dir / "out").c_str(), (dir / "missing").c_str(),
                              key.data(), key.size(), iv.data(), iv.size()),
              WC_ERR_INVALID_ARGUMENT)
        << name;
    EXPECT_NE(std::string(job.message).find("chunk"), std::string::npos) << job.message;
  }
  EXPECT_TRUE(dir.entries().empty());
}

TEST(Plan, RefusesMalformedWork) {
  wc_plan plan;
  wc_work work = cipher_work("aes-256-ctr", WC_DATA_PAGEABLE, 0);
  EXPECT_EQ(wc_plan_describe(nullptr, nullptr, nullptr, &plan), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_plan_describe(nullptr, &work, nullptr, nullptr), WC_ERR_INVALID_ARGUMENT);
  work.cipher = nullptr;
  EXPECT_EQ(wc_plan_describe(nullptr, &work, nullptr, &plan), WC_ERR_UNKNOWN_CIPHER);
  work = cipher_work("aes-256-ctr", WC_DATA_PAGEABLE, 0);
  work.aead = wc_aead_by_name("aes-256-gcm");
  EXPECT_EQ(wc_plan_describe(nullptr, &work, nullptr, &plan), WC_ERR_INVALID_ARGUMENT);
  work.aead = nullptr;
  work.data = static_cast<wc_data_place>(9);
  EXPECT_EQ(wc_plan_describe(nullptr, &work, nullptr, &plan), WC_ERR_INVALID_ARGUMENT);
  wc_options unknown_backend = options_for(static_cast<wc_backend>(9));
  work.data = WC_DATA_PAGEABLE;
  EXPECT_EQ(wc_plan_describe(&unknown_backend, &work, nullptr, &plan), WC_ERR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace wctest
