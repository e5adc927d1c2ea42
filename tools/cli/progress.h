// The progress bar and the summary line of a job, both on stderr.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::cli {

// One line on stderr, redrawn in place (\r) and never wider than the
// terminal, whose width it reads at every redraw: a resized window gets a
// line that fits at the next one. Quiet unless enabled (by default, only
// when stderr is a terminal).
class ProgressBar {
 public:
  // What is counted: bytes (with a rate in GB/s), or steps of a sweep.
  enum class Units { bytes, steps };
  ProgressBar(bool enabled, std::string label, Units units = Units::bytes);
  ~ProgressBar() { finish(); }
  ProgressBar(const ProgressBar &) = delete;
  ProgressBar &operator=(const ProgressBar &) = delete;

  // Hooks the bar into a job, if enabled.
  void attach(wc_job *job);
  // Redraws with `done` of `total` (0: unknown) counted; `label` replaces the
  // label where not empty.
  void update(uint64_t done, uint64_t total, const std::string &label = "");
  // Ends the bar's line.
  void finish();

 private:
  // The line for these figures in `columns` columns.
  std::string line(uint64_t done, uint64_t total, double seconds, unsigned columns) const;
  static int on_progress(void *self, uint64_t done, uint64_t total);

  bool enabled_;
  std::string label_;
  Units units_;
  size_t drawn_width_ = 0;  // 0: nothing drawn
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

// Whether a command draws its progress bar: --progress forces it, -q
// silences it, and otherwise only a terminal on stderr gets one.
bool progress_wanted(bool forced, bool quiet);

// "warpcrypt: <what>: N bytes in, M bytes out, S s, R GB/s, cpu X %, gpu Y %"
void print_job_stats(const char *what, const wc_job &job);

}  // namespace warpcrypt::cli
