// Command-line pieces shared by the subcommands: option values, numbers,
// backends and thread counts, each with a one-line error naming the flag.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::cli {

// The value after the flag at args[i], advancing i; throws CliError when
// the flag is last. The value is never echoed: it may be a key.
const std::string &take_value(const std::vector<std::string> &args, size_t &i);

// A decimal number up to `max`, or CliError naming `flag`.
uint64_t parse_unsigned(const std::string &text, const std::string &flag, uint64_t max);

// auto, cpu, gpu; and gpu-ref where `allow_reference` (speed only).
wc_backend parse_backend(const std::string &name, bool allow_reference = false);
unsigned parse_thread_count(const std::string &text);

}  // namespace warpcrypt::cli
