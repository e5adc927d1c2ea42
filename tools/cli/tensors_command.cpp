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

// Where to look for the script, in order: beside this binary, then PATH's
// folders (an empty entry is the working directory, as execvp takes it,
// and glibc's default where PATH is unset).
std::vector<std::string> script_folders() {
  std::vector<std::string> folders;
  if (const std::string own = own_directory(); !own.empty()) folders.push_back(own);
  const char *path = std::getenv("PATH");
  const std::string entries = path != nullptr ? path : "/bin:/usr/bin";
  for (size_t from = 0; from <= entries.size();) {
    const size_t colon = std::min(entries.find(':', from), entries.size());
    const std::string entry = entries.substr(from, colon - from);
    folders.push_back(entry.empty() ? "./" : entry + "/");
    from = colon + 1;
  }
  return folders;
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
  // One search, with execv on each script found: execvp's ENOENT would
  // not tell a missing script from one whose first line names a Python
  // that is gone (a virtual environment moved or deleted).
  std::string broken;
  for (const std::string &folder : script_folders()) {
    const std::string script = folder + kScript;
    if (access(script.c_str(), X_OK) != 0) continue;
    execv(script.c_str(), argv.data());
    if (errno != ENOENT) throw_system_error("cannot run", script);
    if (broken.empty()) broken = script;
  }
  if (!broken.empty()) {
    throw CliError("tensors runs " + broken + ", but the Python its first line names is missing (a moved or " +
                   "deleted virtual environment): reinstall the package (pip install warpcrypt)");
  }
  throw CliError(std::string("tensors runs ") + kScript + " from the Python package, found neither beside " +
                 "warpcrypt nor on PATH: install it (pip install warpcrypt)");
}

}  // namespace warpcrypt::cli
