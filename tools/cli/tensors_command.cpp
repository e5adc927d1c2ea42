// warpcrypt tensors: encrypted safetensors (CryptoTensors files), whose
// implementation is the Python package's (warpcrypt.safetensors). As git
// runs git-NAME for its commands, this runs warpcrypt-tensors, the console
// script that installing the package puts beside its interpreter: the
// script's first line names that interpreter, where `python3 -m` would take
// whichever python3 PATH finds first, with warpcrypt or without.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli_error.h"
#include "commands.h"

namespace warpcrypt::cli {

namespace {

constexpr const char *kScript = "warpcrypt-tensors";

// The directory of this binary, with its slash: an install that put both
// programs in one prefix (a virtual environment's bin) has the script
// there, whether PATH names it or not. Empty where it cannot be told.
std::string own_directory() {
  char path[PATH_MAX];
  const ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
  if (length <= 0) return "";
  const std::string self(path, static_cast<size_t>(length));
  return self.substr(0, self.rfind('/') + 1);
}

// Where the script lies, beside this binary or on PATH, as execv and
// execvp looked; empty where it is in neither. execvp's ENOENT does not tell
// a missing script from a script whose interpreter is missing (its first
// line names a virtual environment that was moved or deleted).
std::string find_script(const std::string &own_directory) {
  std::vector<std::string> directories;
  if (!own_directory.empty()) directories.push_back(own_directory);
  const char *path = std::getenv("PATH");
  std::string entries = path != nullptr ? path : "";
  for (size_t from = 0; from <= entries.size();) {
    const size_t colon = std::min(entries.find(':', from), entries.size());
    const std::string entry = entries.substr(from, colon - from);
    directories.push_back(entry.empty() ? "./" : entry + "/");
    from = colon + 1;
  }
  for (const std::string &directory : directories) {
    const std::string candidate = directory + kScript;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

}  // namespace

void add_tensors_command(CommandLine &command_line) {
  Command &command = command_line.add_command(
      "tensors", "encrypted safetensors (CryptoTensors): inspect, encrypt, decrypt, rewrap, keygen");
  command.set_footer(
      "warpcrypt tensors COMMAND ARGS... runs warpcrypt-tensors, which the Python package installs (pip install "
      "warpcrypt), with the arguments as given: 'warpcrypt tensors --help' and 'warpcrypt tensors COMMAND --help' "
      "print its options. Every COMMAND takes --json and exits with the statuses of this CLI.");
  command.set_run([]() -> int { run_tensors_command({}); });
}

void run_tensors_command(const std::vector<std::string> &args) {
  std::vector<char *> argv{const_cast<char *>(kScript)};
  for (const std::string &arg : args) argv.push_back(const_cast<char *>(arg.c_str()));
  argv.push_back(nullptr);
  // Its help and its errors then name the command as it was typed.
  setenv("WARPCRYPT_TENSORS_PROG", "warpcrypt tensors", 1);
  const std::string directory = own_directory();
  if (!directory.empty()) execv((directory + kScript).c_str(), argv.data());
  execvp(kScript, argv.data());
  if (errno == ENOENT) {
    const std::string script = find_script(directory);
    if (!script.empty()) {
      throw CliError("tensors runs " + script + ", but the Python its first line names is missing (a moved or " +
                     "deleted virtual environment): reinstall the package (pip install warpcrypt)");
    }
    throw CliError(std::string("tensors runs ") + kScript + " from the Python package, found neither beside " +
                   "warpcrypt nor on PATH: install it (pip install warpcrypt)");
  }
  throw_system_error("cannot run", kScript);
}

}  // namespace warpcrypt::cli
