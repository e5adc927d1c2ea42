// Option values shared by the commands: numbers, sizes, backends and thread
// counts, each with a one-line error naming the option; the engine's options;
// and the wiped copies that secrets and the command line live in.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::cli {

class Command;

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

// A decimal number up to `max`, or CliError naming `option`.
uint64_t parse_unsigned(const std::string &text, const std::string &option, uint64_t max);

// The one reading of a byte count, for every option that takes one: decimal,
// with an optional K, M or G suffix (powers of 1024, either case).
uint64_t parse_size(const std::string &text, const std::string &option);

// A backend by the library's name for it (wc_backend_name).
wc_backend parse_backend(const std::string &name);
unsigned parse_thread_count(const std::string &text);

// The streaming engine's options, shared by enc, speed, seal, open and age.
struct EngineFlags {
  size_t chunk_bytes = 0;    // --chunk-size (seal, open, age: --window); 0: the library default
  unsigned streams = 0;      // --streams; 0: the library default
  std::vector<int> devices;  // --devices; empty: all
};
// Declares --chunk-size, --streams and --devices on `command`, filling `flags`.
void add_engine_options(Command &command, EngineFlags &flags);
// Declares --streams and --devices alone, for commands whose chunking is
// their own.
void add_device_options(Command &command, EngineFlags &flags);
// Declares --window, the plaintext a worker claims at a time, for the
// commands whose format has chunks of its own (seal, open, age).
void add_window_option(Command &command, EngineFlags &flags);
// The library options for a backend, a thread count and these flags; `flags`
// must outlive the result (it points into flags.devices).
wc_options library_options(wc_backend backend, unsigned threads, const EngineFlags &flags);

}  // namespace warpcrypt::cli
