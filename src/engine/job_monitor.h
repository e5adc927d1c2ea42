// The shared state of one job: progress and its callback, cancellation, the
// first failure, and the per-backend byte counts the caller gets back.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>

#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::engine {

class JobMonitor {
 public:
  // `job` may be null; `total_bytes` is 0 when the input's size is unknown.
  JobMonitor(wc_job *job, uint64_t total_bytes);

  // True once the job failed or was cancelled: lanes stop taking chunks.
  bool stopped() const { return stopped_.load(std::memory_order_relaxed); }
  // Records the first failure and stops the job.
  void fail(wc_status status);
  // A failed read or write on `side`, returning WC_ERR_IO; os_error 0 means
  // the input changed size while it was read. `detail`, if given, says more
  // than errno can (a refused symlink).
  wc_status fail_io(wc_io_side side, int os_error, const char *detail = nullptr);
  // fail() with a static, secret-free sentence for wc_job.detail.
  void fail_with_detail(wc_status status, const char *detail);
  // A chunk that did not authenticate: the job fails with WC_ERR_AUTH and
  // reports the lowest such chunk, with the sentence the job's format set
  // (set_chunk_failure).
  void fail_chunk(uint64_t chunk);
  // What a chunk that does not authenticate means, as the format knows it
  // (static, secret-free): a wrong key or passphrase, or a changed file; or,
  // where the header proved the key, a changed file alone.
  void set_chunk_failure(const char *detail) { chunk_failure_ = detail; }
  static constexpr const char *kWrongKeyOrChanged = "wrong key, or the file was modified, truncated or reordered";
  wc_status status() const;

  // Counts `bytes` of input transformed by `backend`, and calls the progress
  // callback when it is due; a nonzero answer cancels the job.
  void advance(wc_backend backend, uint64_t bytes);
  void set_total(uint64_t total_bytes) { total_ = total_bytes; }
  // The input bytes counted so far, and the total (0 when unknown).
  uint64_t bytes_done() const { return cpu_bytes_.load() + gpu_bytes_.load(); }
  uint64_t total() const { return total_; }

  // Fills the caller's wc_job, calls the callback a last time on success and
  // returns the job's status.
  wc_status finish(uint64_t bytes_in, uint64_t bytes_out);

 private:
  // The first failure wins; every later one only stops the job again.
  void record(wc_status status, wc_io_side side, int os_error, const char *detail);
  void report(uint64_t done);

  wc_job *job_;
  uint64_t total_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::atomic<bool> stopped_{false};
  std::atomic<uint64_t> cpu_bytes_{0};
  std::atomic<uint64_t> gpu_bytes_{0};
  std::atomic<int64_t> next_report_ns_{0};
  mutable std::mutex mutex_;  // guards status_, os_error_ and the callback
  wc_status status_ = WC_OK;
  int os_error_ = 0;
  wc_io_side io_side_ = WC_IO_NONE;
  const char *detail_ = nullptr;
  uint64_t failed_chunk_ = UINT64_MAX;
  const char *chunk_failure_ = kWrongKeyOrChanged;
};

}  // namespace warpcrypt::engine
