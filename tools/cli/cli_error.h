// How the CLI reports failure: a one-line message, never key material, and a
// non-zero exit.
#pragma once

#include <stdexcept>
#include <string>

#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::cli {

// Thrown by any command; main() prints "warpcrypt: <message>" and exits 1.
class CliError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws CliError("<context>: <status text>") unless status is WC_OK.
void check(wc_status status, const std::string &context);

// A failed job in the library's words: its sentence (wc_job.detail) where it
// has one, else errno's for an I/O failure, else the status's. Callers add
// only what the library cannot know: which command failed, a chunk number,
// the option to use instead.
std::string job_failure(wc_status status, const wc_job &job);

// "<what> '<path>': <strerror(errno)>", for failed system calls.
[[noreturn]] void throw_system_error(const std::string &what, const std::string &path);

}  // namespace warpcrypt::cli
