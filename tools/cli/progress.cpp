#include "progress.h"

#include <cstdio>

namespace warpcrypt::cli {

void ProgressBar::attach(wc_job *job) {
  if (!enabled_) return;
  job->progress = on_progress;
  job->progress_user = this;
}

int ProgressBar::on_progress(void *self, uint64_t done, uint64_t total) {
  static_cast<ProgressBar *>(self)->draw(done, total);
  return 0;
}

void ProgressBar::draw(uint64_t done, uint64_t total) {
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0.0;
  constexpr int kWidth = 30;
  if (total != 0) {
    const double fraction = static_cast<double>(done) / static_cast<double>(total);
    const int filled = static_cast<int>(fraction * kWidth);
    const double eta = rate > 0 ? static_cast<double>(total - done) / rate : 0.0;
    std::fprintf(stderr, "\r[%-*.*s] %3.0f%%  %.2f / %.2f GB  %.2f GB/s  ETA %d:%02d ", kWidth, filled,
                 "##############################", fraction * 100.0, static_cast<double>(done) / 1e9,
                 static_cast<double>(total) / 1e9, rate / 1e9, static_cast<int>(eta) / 60, static_cast<int>(eta) % 60);
  } else {
    std::fprintf(stderr, "\r%.2f GB  %.2f GB/s ", static_cast<double>(done) / 1e9, rate / 1e9);
  }
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::finish() {
  if (drawn_) std::fputc('\n', stderr);
  drawn_ = false;
}

void print_job_stats(const char *what, const wc_job &job) {
  const double rate = job.seconds > 0 ? static_cast<double>(job.bytes_in) / job.seconds / 1e9 : 0.0;
  // Only the backends that took part are named.
  const double transformed = static_cast<double>(job.cpu_bytes + job.gpu_bytes);
  char shares[64] = "cpu 100 %";
  if (job.gpu_bytes != 0 && job.cpu_bytes != 0) {
    const double gpu = 100.0 * static_cast<double>(job.gpu_bytes) / transformed;
    std::snprintf(shares, sizeof shares, "cpu %.0f %%, gpu %.0f %%", 100.0 - gpu, gpu);
  } else if (job.gpu_bytes != 0) {
    std::snprintf(shares, sizeof shares, "gpu 100 %%");
  }
  std::fprintf(stderr, "warpcrypt: %s: %llu bytes in, %llu bytes out, %.3f s, %.2f GB/s, %s\n", what,
               static_cast<unsigned long long>(job.bytes_in), static_cast<unsigned long long>(job.bytes_out),
               job.seconds, rate, shares);
}

}  // namespace warpcrypt::cli
