// The progress bar and the summary line of a job, both on stderr.
#pragma once

#include <chrono>
#include <cstdint>

#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::cli {

class ProgressBar {
 public:
  explicit ProgressBar(bool enabled) : enabled_(enabled) {}
  // Hooks the bar into a job, if enabled.
  void attach(wc_job *job);
  // Ends the bar's line.
  void finish();

 private:
  static int on_progress(void *self, uint64_t done, uint64_t total);
  void draw(uint64_t done, uint64_t total);

  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

// "warpcrypt: <what>: N bytes in, M bytes out, S s, R GB/s, cpu X %, gpu Y %"
void print_job_stats(const char *what, const wc_job &job);

}  // namespace warpcrypt::cli
