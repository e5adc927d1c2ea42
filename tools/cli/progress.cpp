#include "progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "terminal.h"

namespace warpcrypt::cli {
namespace {

// The width when stderr is no terminal but --progress asked for the bar.
constexpr unsigned kDefaultColumns = 80;
// Narrower than this, a bar tells nothing and is left out.
constexpr size_t kMinBar = 5;

std::string formatted(const char *format, double a, double b = 0) {
  char text[64];
  std::snprintf(text, sizeof text, format, a, b);
  return text;
}

// A decimal unit for `bytes` (B, kB, MB, GB, TB) and its size, as GB/s
// is decimal: a 3 MB file reads "3.00/3.00 MB", not "0.00/0.00 GB".
struct Unit {
  const char *name;
  double size;
};
Unit unit_for(double bytes) {
  static constexpr Unit kUnits[] = {{"B", 1}, {"kB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}};
  const Unit *chosen = &kUnits[0];
  for (const Unit &unit : kUnits) {
    if (bytes >= unit.size) chosen = &unit;
  }
  return *chosen;
}

std::string minutes_and_seconds(double seconds) {
  const auto whole = static_cast<long long>(seconds + 0.5);
  char text[32];
  std::snprintf(text, sizeof text, "%lld:%02lld", whole / 60, whole % 60);
  return text;
}

}  // namespace

ProgressBar::ProgressBar(bool enabled, std::string label, Units units)
    : enabled_(enabled), label_(std::move(label)), units_(units) {}

void ProgressBar::attach(wc_job *job) {
  if (!enabled_) return;
  job->progress = on_progress;
  job->progress_user = this;
}

int ProgressBar::on_progress(void *self, uint64_t done, uint64_t total) {
  static_cast<ProgressBar *>(self)->update(done, total);
  return 0;
}

std::string ProgressBar::line(uint64_t done, uint64_t total, double seconds, unsigned columns) const {
  const bool bytes = units_ == Units::bytes;
  const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0.0;
  // The figures, most important first; what does not fit is left out from
  // the end, then the bar, then the label.
  std::string figures;
  const Unit size = unit_for(static_cast<double>(std::max(done, total)));
  if (total != 0) {
    const double fraction = static_cast<double>(std::min(done, total)) / static_cast<double>(total);
    figures = formatted("%3.0f%%", fraction * 100.0);
    figures += bytes ? formatted("  %.2f/%.2f ", static_cast<double>(done) / size.size,
                                 static_cast<double>(total) / size.size) + size.name
                     : "  " + std::to_string(done) + "/" + std::to_string(total);
  } else {
    figures = bytes ? formatted("%.2f ", static_cast<double>(done) / size.size) + size.name : std::to_string(done);
  }
  if (bytes) {
    const Unit speed = unit_for(rate);
    figures += formatted("  %.2f ", rate / speed.size) + speed.name + "/s";
  }
  if (total != 0 && rate > 0) figures += "  " + minutes_and_seconds(static_cast<double>(total - std::min(done, total)) / rate) + " left";

  // One column stays free: writing the last one makes some terminals wrap.
  const size_t width = columns > 1 ? columns - 1 : 0;
  std::string label = label_;
  size_t bar = 0;
  if (total != 0) {
    const size_t used = (label.empty() ? 0 : label.size() + 1) + 3 + figures.size();  // "[" "] "
    bar = width > used ? width - used : 0;
    if (bar < kMinBar) bar = 0;
    bar = std::min<size_t>(bar, 50);
  }
  std::string text = label.empty() ? "" : label + " ";
  if (bar != 0) {
    const double fraction = static_cast<double>(std::min(done, total)) / static_cast<double>(total);
    const auto filled = static_cast<size_t>(fraction * static_cast<double>(bar));
    text += "[" + std::string(filled, '#') + std::string(bar - filled, '.') + "] ";
  }
  text += figures;
  if (text.size() > width) text = figures;  // without the label
  if (text.size() > width) text.resize(width);
  return text;
}

void ProgressBar::update(uint64_t done, uint64_t total, const std::string &label) {
  if (!enabled_) return;
  if (!label.empty()) label_ = label;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  const unsigned columns = terminal_columns(STDERR_FILENO);
  std::string text = line(done, total, seconds, columns != 0 ? columns : kDefaultColumns);
  // Blanks over what a longer line left.
  const size_t width = text.size();
  if (text.size() < drawn_width_) text.append(drawn_width_ - text.size(), ' ');
  std::fprintf(stderr, "\r%s", text.c_str());
  std::fflush(stderr);
  drawn_width_ = width == 0 ? 1 : width;
}

void ProgressBar::finish() {
  if (drawn_width_ != 0) std::fputc('\n', stderr);
  drawn_width_ = 0;
}

bool progress_wanted(bool forced, bool quiet) { return !quiet && (forced || isatty(STDERR_FILENO)); }

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
