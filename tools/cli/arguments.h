// Command-line pieces shared by the subcommands: option values, numbers,
// backends and thread counts, each with a one-line error naming the flag.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::cli {

// An argument that may carry a secret (a -pass source such as pass:TEXT, a
// hex key): its copy is wiped when it goes out of scope, as is every
// argument main() holds (WipedArguments).
struct SecretText {
  std::string value;
  explicit SecretText(std::string text) : value(std::move(text)) {}
  SecretText(const SecretText &) = default;
  SecretText &operator=(const SecretText &) = default;
  ~SecretText();
};

// The command line as strings, wiped when main() is done with them: a short
// argument lives inside the vector's own buffer, so wiping each string's
// bytes covers both.
struct WipedArguments {
  std::vector<std::string> values;
  ~WipedArguments();
};

// The value after the flag at args[i], advancing i; throws CliError when
// the flag is last. The value is never echoed: it may be a key.
const std::string &take_value(const std::vector<std::string> &args, size_t &i);

// A decimal number up to `max`, or CliError naming `flag`.
uint64_t parse_unsigned(const std::string &text, const std::string &flag, uint64_t max);

// auto, cpu, gpu, hybrid; and gpu-ref where `allow_reference` (speed only).
wc_backend parse_backend(const std::string &name, bool allow_reference = false);
unsigned parse_thread_count(const std::string &text);

// A byte count with an optional K, M or G suffix (powers of 1024).
uint64_t parse_size(const std::string &text, const std::string &flag);

// The streaming engine's flags, shared by enc and speed.
struct EngineFlags {
  size_t chunk_bytes = 0;    // --chunk-size; 0: the library default
  unsigned streams = 0;      // --streams; 0: the library default
  std::vector<int> devices;  // --devices; empty: all
};
// Consumes args[i] (and its value) if it is an engine flag.
bool parse_engine_flag(const std::vector<std::string> &args, size_t &i, EngineFlags &flags);
// The library options for these flags; `flags` must outlive the result.
void apply_engine_flags(const EngineFlags &flags, wc_options *options);

extern const char *const kEngineFlagsUsage;

}  // namespace warpcrypt::cli
