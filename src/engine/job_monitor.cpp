#include "engine/job_monitor.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "core/status_text.h"

namespace warpcrypt::engine {
namespace {

// Often enough for a smooth progress bar, rarely enough to cost nothing.
constexpr int64_t kReportIntervalNs = 50'000'000;

// The one rule for a failure's sentence (wc_job.message).
void compose_message(wc_job &job, wc_status status) {
  char *out = job.message;
  const size_t cap = sizeof job.message;
  if (status == WC_OK) {
    out[0] = '\0';
  } else if (status == WC_ERR_AUTH && job.failed_chunk != UINT64_MAX) {
    std::snprintf(out, cap, "authentication failed at chunk %llu: %s",
                  static_cast<unsigned long long>(job.failed_chunk), job.detail);
  } else if (job.detail != nullptr) {
    std::snprintf(out, cap, "%s", job.detail);
  } else if (status == WC_ERR_IO && job.os_error != 0) {
    std::snprintf(out, cap, "%s", std::strerror(job.os_error));
  } else {
    std::snprintf(out, cap, "%s", status_text(status));
  }
}

}  // namespace

JobMonitor::JobMonitor(wc_job *job, uint64_t total_bytes) : job_(job), total_(total_bytes) {}

void JobMonitor::fail(wc_status status) { record(status, WC_IO_NONE, 0, nullptr); }

wc_status JobMonitor::fail_io(wc_io_side side, int os_error, const char *detail) {
  if (detail == nullptr && os_error == 0) detail = "the input changed size while it was read";
  record(WC_ERR_IO, side, os_error, detail);
  return WC_ERR_IO;
}

void JobMonitor::fail_with_detail(wc_status status, const char *detail) {
  record(status, WC_IO_NONE, 0, detail);
}

void JobMonitor::record(wc_status status, wc_io_side side, int os_error, const char *detail) {
  std::lock_guard lock(mutex_);
  if (status_ == WC_OK) {
    status_ = status;
    os_error_ = os_error;
    io_side_ = side;
    detail_ = detail;
  }
  stopped_.store(true, std::memory_order_relaxed);
}

void JobMonitor::fail_chunk(uint64_t chunk) {
  std::lock_guard lock(mutex_);
  if (status_ == WC_OK) {
    status_ = WC_ERR_AUTH;
    detail_ = chunk_failure_;
  }
  // Lanes run chunks out of order: report the first, not the first found.
  if (status_ == WC_ERR_AUTH) failed_chunk_ = std::min(failed_chunk_, chunk);
  stopped_.store(true, std::memory_order_relaxed);
}

wc_status JobMonitor::status() const {
  std::lock_guard lock(mutex_);
  return status_;
}

void JobMonitor::advance(wc_backend backend, uint64_t bytes) {
  std::atomic<uint64_t> &counter =
      backend == WC_BACKEND_GPU ? gpu_bytes_ : cpu_bytes_;
  counter.fetch_add(bytes, std::memory_order_relaxed);
  if (job_ == nullptr || job_->progress == nullptr) return;
  const int64_t now = (std::chrono::steady_clock::now() - started_).count();
  int64_t due = next_report_ns_.load(std::memory_order_relaxed);
  // One thread wins each interval; the others carry on without waiting.
  if (now < due || !next_report_ns_.compare_exchange_strong(due, now + kReportIntervalNs)) return;
  report(cpu_bytes_.load() + gpu_bytes_.load());
}

void JobMonitor::report(uint64_t done) {
  std::lock_guard lock(mutex_);
  if (status_ != WC_OK) return;
  if (job_->progress(job_->progress_user, done, total_) != 0) {
    status_ = WC_ERR_CANCELLED;
    stopped_.store(true, std::memory_order_relaxed);
  }
}

wc_status JobMonitor::finish(uint64_t bytes_in, uint64_t bytes_out) {
  if (job_ != nullptr) {
    // The last call reports completion; it can no longer cancel.
    if (job_->progress != nullptr && status() == WC_OK) job_->progress(job_->progress_user, bytes_in, total_);
    job_->bytes_in = bytes_in;
    job_->bytes_out = bytes_out;
    job_->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    job_->cpu_bytes = cpu_bytes_.load();
    job_->gpu_bytes = gpu_bytes_.load();
  }
  std::lock_guard lock(mutex_);
  if (job_ != nullptr) {
    job_->os_error = os_error_;
    job_->io_side = io_side_;
    job_->detail = detail_;
    job_->failed_chunk = failed_chunk_;
    compose_message(*job_, status_);
  }
  return status_;
}

}  // namespace warpcrypt::engine
