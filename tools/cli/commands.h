// The commands of `warpcrypt`. Each adds itself and its options to the
// command line, and runs once the command line is parsed, returning the
// process exit status; failures throw CliError.
#pragma once

#include <string>
#include <vector>

#include "command_line.h"

namespace warpcrypt::cli {

void add_enc_command(CommandLine &command_line);
void add_speed_command(CommandLine &command_line);
void add_seal_command(CommandLine &command_line);
void add_open_command(CommandLine &command_line);
void add_devices_command(CommandLine &command_line);
// age and age-keygen (age_command.cpp).
void add_age_command(CommandLine &command_line);
// age-inspect (age_inspect_command.cpp).
void add_age_inspect_command(CommandLine &command_line);
// tensors (tensors_command.cpp): listed here, for the help, the manual page
// and the completions; its arguments are the Python package's to parse, so
// main() hands them to run_tensors_command() as they are, before parsing.
void add_tensors_command(CommandLine &command_line);
// Runs the Python package's warpcrypt-tensors with `args` in place of this
// process; throws CliError where it cannot.
[[noreturn]] void run_tensors_command(const std::vector<std::string> &args);

// Every command, in the order `warpcrypt --help` lists them.
inline void add_commands(CommandLine &command_line) {
  add_enc_command(command_line);
  add_speed_command(command_line);
  add_seal_command(command_line);
  add_open_command(command_line);
  add_age_command(command_line);
  add_age_inspect_command(command_line);
  add_tensors_command(command_line);
  add_devices_command(command_line);
}

}  // namespace warpcrypt::cli
