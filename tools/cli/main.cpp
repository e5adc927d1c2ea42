// warpcrypt: the command-line front end of the library.
#include <cstdio>
#include <new>
#include <string>
#include <vector>

#include "arguments.h"
#include "cli_error.h"
#include "command_line.h"
#include "commands.h"
#include "file_io.h"

int main(int argc, char **argv) {
  using namespace warpcrypt::cli;
  const WipedArguments arguments{{argv + 1, argv + argc}};
  try {
    const std::vector<std::string> &args = arguments.values;
    if (!args.empty() && args.front() == "tensors") run_tensors_command({args.begin() + 1, args.end()});
    CommandLine command_line;
    add_commands(command_line);
    const Invocation invocation = command_line.parse(arguments.values);
    if (invocation.command == nullptr) {
      std::fputs(invocation.text.c_str(), invocation.on_stderr ? stderr : stdout);
      return invocation.exit_status;
    }
    install_cleanup_signal_handlers();
    return invocation.command->run();
  } catch (const CliError &error) {
    std::fprintf(stderr, "warpcrypt: %s\n", error.what());
    return exit_status(error.kind());
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "warpcrypt: out of memory\n");
  }
  return exit_status(WC_KIND_FAILURE);
}
