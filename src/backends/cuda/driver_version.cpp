#include "backends/cuda/driver_version.h"

#include <charconv>

namespace warpcrypt::cuda {

namespace {

// "580.95.05" as {580, 95, 5}: one to three numbers joined by dots, nothing
// else; nullopt for any other word.
std::optional<DriverVersion> parse_version(std::string_view word) {
  DriverVersion version{};
  for (size_t part = 0; part < version.size(); ++part) {
    if (word.empty() || word.front() < '0' || word.front() > '9') return std::nullopt;  // from_chars takes a '-'
    const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), version[part]);
    if (error != std::errc{}) return std::nullopt;
    word.remove_prefix(static_cast<size_t>(end - word.data()));
    if (word.empty()) return part > 0 ? std::optional(version) : std::nullopt;
    if (word.front() != '.') return std::nullopt;
    word.remove_prefix(1);
  }
  return std::nullopt;
}

}  // namespace

// The line reads "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05 
// <build date>" from the proprietary module and "NVRM version: NVIDIA UNIX
// Open Kernel Module for x86_64  580.95.05  Release Build ..." from the open
// one: the version is the first word that is numbers joined by dots.
std::optional<DriverVersion> kernel_driver_version(std::string_view version_file) {
  std::string_view line = version_file.substr(0, version_file.find('\n'));
  while (true) {
    const size_t start = line.find_first_not_of(" \t");
    if (start == std::string_view::npos) return std::nullopt;
    line.remove_prefix(start);
    const std::string_view word = line.substr(0, line.find_first_of(" \t"));
    line.remove_prefix(word.size());
    if (const std::optional<DriverVersion> version = parse_version(word)) return version;
  }
}

// CUDA's compatibility guide and release notes, the minimum driver for CUDA
// minor version compatibility on Linux: 11.x from 450.80.02, 12.x from
// 525.60.13, 13.x from 580.
std::optional<DriverVersion> oldest_driver(int runtime_major) {
  switch (runtime_major) {
    case 11: return DriverVersion{450, 80, 2};
    case 12: return DriverVersion{525, 60, 13};
    case 13: return DriverVersion{580, 0, 0};
    default: return std::nullopt;
  }
}

bool driver_runs_runtime(std::string_view version_file, int runtime_version) {
  const std::optional<DriverVersion> driver = kernel_driver_version(version_file);
  const std::optional<DriverVersion> oldest = oldest_driver(runtime_version / 1000);
  return driver && oldest && *driver >= *oldest;
}

}  // namespace warpcrypt::cuda
