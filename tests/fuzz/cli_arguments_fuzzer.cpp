// Fuzzes the CLI's argument parsing on argument vectors: the input split at
// NUL bytes, as the arguments after `warpcrypt enc`, `seal` or `open`, each
// parser getting the same vector. Together they reach every shared parser of
// arguments.h (numbers, sizes, backends, threads, the engine flags); a bad
// argument must end in CliError, which main() reports, and nothing else.
// Parsing runs no command and touches no file. (`speed` parses in a function
// private to its command file, which may exit; it is out of reach here.)
#include <cstdint>
#include <string>
#include <vector>

#include "cli_error.h"
#include "enc_options.h"
#include "seal_options.h"

namespace {

std::vector<std::string> split_at_nul(const uint8_t *data, size_t size) {
  std::vector<std::string> args;
  if (size == 0) return args;
  args.emplace_back();
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == '\0') {
      args.emplace_back();
    } else {
      args.back().push_back(static_cast<char>(data[i]));
    }
  }
  return args;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace warpcrypt::cli;
  const std::vector<std::string> args = split_at_nul(data, size);
  // A CliError is the user's mistake, reported in one line: what each
  // parser must do with anything it cannot take.
  try {
    parse_enc_options(args);
  } catch (const CliError &) {
  }
  for (bool sealing : {true, false}) {
    try {
      parse_seal_options(args, sealing);
    } catch (const CliError &) {
    }
  }
  return 0;
}
