// Fuzzes the CLI's command line on argument vectors: the input split at NUL
// bytes is what `warpcrypt` gets after its own name (the command's name
// first, as the seeds have it), parsed as main() parses it, by a fresh
// command line (command_line.h) with every command added. That reaches the
// translation of openssl's spellings, CLI11's parsing, the help, and every
// option's function (numbers, sizes, backends, ciphers, the engine options).
// A bad argument must end in CliError, which main() reports in one line, and
// nothing else. Parsing runs no command, prints nothing and touches no file.
// Building a command line takes milliseconds under the sanitizers, so each
// input is parsed once, for the command it names, rather than once per
// command.
#include <cstdint>
#include <string>
#include <vector>

#include "cli_error.h"
#include "command_line.h"
#include "commands.h"

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
  CommandLine command_line;
  add_commands(command_line);
  try {
    command_line.parse(split_at_nul(data, size));
  } catch (const CliError &) {
    // The user's mistake, reported in one line: what the command line must
    // do with anything it cannot take.
  }
  return 0;
}
