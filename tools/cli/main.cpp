// warpcrypt: the command-line front end of the library.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "cli_error.h"
#include "commands.h"
#include "arguments.h"
#include "file_io.h"

namespace {

constexpr const char *kUsage =
    "usage: warpcrypt <command> [options]\n"
    "\n"
    "commands:\n"
    "  enc       encrypt or decrypt, a drop-in for `openssl enc` (warpcrypt enc --help)\n"
    "  speed     cipher throughput, in the style of `openssl speed` (warpcrypt speed --help)\n"
    "  seal      encrypt and authenticate a file with an AEAD (warpcrypt seal --help)\n"
    "  open      check and decrypt a sealed file, or any byte range of it (warpcrypt open --help)\n"
    "  devices   list the CUDA devices\n"
    "\n"
    "  --help    this text\n"
    "  --version the library version\n";

}  // namespace

int main(int argc, char **argv) {
  using namespace warpcrypt::cli;
  const WipedArguments arguments{{argv + (argc > 1 ? 2 : 1), argv + argc}};
  const std::vector<std::string> &args = arguments.values;
  const std::string command = argc > 1 ? argv[1] : "";
  try {
    if (command.empty() || command == "--help" || command == "-h" || command == "help") {
      std::fputs(kUsage, stdout);
      return command.empty() ? 1 : 0;
    }
    if (command == "--version") {
      std::printf("warpcrypt %s\n", wc_version());
      return 0;
    }
    install_cleanup_signal_handlers();
    if (command == "enc") return run_enc(args);
    if (command == "speed") return run_speed(args);
    if (command == "devices") return run_devices(args);
    if (command == "seal") return run_seal(args);
    if (command == "open") return run_open(args);
    throw CliError("unknown command '" + command + "' (see 'warpcrypt --help')");
  } catch (const CliError &error) {
    std::fprintf(stderr, "warpcrypt: %s\n", error.what());
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "warpcrypt: out of memory\n");
  }
  return 1;
}
