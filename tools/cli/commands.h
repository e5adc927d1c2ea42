// The subcommands of `warpcrypt`. Each takes the arguments after its name and
// returns the process exit status; failures throw CliError.
#pragma once

#include <string>
#include <vector>

namespace warpcrypt::cli {

int run_enc(const std::vector<std::string> &args);
int run_speed(const std::vector<std::string> &args);
int run_devices(const std::vector<std::string> &args);
int run_seal(const std::vector<std::string> &args);
int run_open(const std::vector<std::string> &args);

}  // namespace warpcrypt::cli
