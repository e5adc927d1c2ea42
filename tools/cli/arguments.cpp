#include "arguments.h"

#include <algorithm>
#include <charconv>

#include "cli_error.h"
#include "command_line.h"

namespace warpcrypt::cli {

namespace {

// The whole buffer, not just the current text: a string that shrank keeps
// old bytes past its end. Growing to the capacity never reallocates.
void wipe(std::string &text) {
  text.resize(text.capacity());
  wc_memzero(text.data(), text.size());
}

}  // namespace

SecretText::~SecretText() { wipe(value); }

WipedArguments::~WipedArguments() {
  for (std::string &value : values) wipe(value);
}

uint64_t parse_unsigned(const std::string &text, const std::string &option, uint64_t max) {
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value > max) {
    throw CliError("invalid number '" + text + "' for " + option);
  }
  return value;
}

uint64_t parse_size(const std::string &text, const std::string &option) {
  if (text.empty()) throw CliError("invalid size '' for " + option);
  unsigned shift = 0;
  switch (text.back()) {
    case 'K': case 'k': shift = 10; break;
    case 'M': case 'm': shift = 20; break;
    case 'G': case 'g': shift = 30; break;
    default: break;
  }
  const std::string digits = shift != 0 ? text.substr(0, text.size() - 1) : text;
  const uint64_t value = parse_unsigned(digits, option, UINT64_MAX >> shift);
  return value << shift;
}

wc_backend parse_backend(const std::string &name) {
  std::string names;
  const size_t count = wc_backend_count();
  for (size_t i = 0; i < count; ++i) {
    const wc_backend backend = wc_backend_at(i);
    if (name == wc_backend_name(backend)) return backend;
    names += std::string(i == 0 ? "" : i + 1 == count ? " or " : ", ") + wc_backend_name(backend);
  }
  throw CliError("unknown backend '" + name + "' (use " + names + ")");
}

unsigned parse_thread_count(const std::string &text) {
  const auto threads = static_cast<unsigned>(parse_unsigned(text, "--threads", 4096));
  if (threads == 0) throw CliError("--threads must be at least 1");
  return threads;
}

void add_engine_options(Command &command, EngineFlags &flags) {
  command.add_option("--chunk-size", "SIZE",
                     "bytes per chunk handed to a CPU thread or GPU stream, a multiple of 4K up to 1G "
                     "(default 1M on CPU threads alone, else 8M)",
                     [&flags](const std::string &text) {
                       // The library checks the size and says why it refuses one.
                       flags.chunk_bytes = static_cast<size_t>(parse_size(text, "--chunk-size"));
                     });
  add_device_options(command, flags);
}

void add_device_options(Command &command, EngineFlags &flags) {
  command.add_option("--streams", "N", "CUDA streams per device", [&flags](const std::string &text) {
    flags.streams = static_cast<unsigned>(parse_unsigned(text, "--streams", 64));
    if (flags.streams == 0) throw CliError("--streams must be at least 1");
  });
  command.add_option("--devices", "all|0,1", "the GPUs to use (default all)", [&flags](const std::string &list) {
    flags.devices.clear();
    if (list == "all") return;
    size_t start = 0;
    while (start <= list.size()) {
      const size_t comma = std::min(list.find(',', start), list.size());
      flags.devices.push_back(static_cast<int>(parse_unsigned(list.substr(start, comma - start), "--devices", 1023)));
      start = comma + 1;
    }
  });
}

void add_window_option(Command &command, EngineFlags &flags) {
  command.add_option("--window", "SIZE",
                     "plaintext a worker claims at a time, in whole chunks, at least one (default " +
                         std::to_string(WC_DEFAULT_CPU_CHUNK_BYTES >> 20) + "M on the CPU, " +
                         std::to_string(WC_DEFAULT_CHUNK_BYTES >> 20) + "M with GPU workers)",
                     [&flags](const std::string &text) {
                       flags.chunk_bytes = static_cast<size_t>(parse_size(text, "--window"));
                     });
}

wc_options library_options(wc_backend backend, unsigned threads, const EngineFlags &flags) {
  wc_options options;
  wc_options_init(&options);
  options.backend = backend;
  options.threads = threads;
  options.chunk_bytes = flags.chunk_bytes;
  options.streams = flags.streams;
  options.devices = flags.devices.empty() ? nullptr : flags.devices.data();
  options.device_count = flags.devices.size();
  return options;
}

}  // namespace warpcrypt::cli
