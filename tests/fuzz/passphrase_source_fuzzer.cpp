// Fuzzes the -pass source parser, read_passphrase(), on the input's first
// NUL-terminated string; the rest of the input is what the source holds; and
// enc's -kfile reader, read_kfile(), on the same file for a file: source. A
// bad source must end in CliError, nothing else. No source may read a real
// file or wait for the terminal, so before the call:
//  - file:NAME names a file of a scratch directory, where "passphrase" holds
//    the rest of the input; any other source with a '/' is skipped;
//  - every number of fd:N that could be a descriptor becomes that of a pipe
//    holding the rest of the input;
//  - descriptor 0 is that pipe too, for `stdin` (and for parsers that read
//    an fd: without a number as 0);
//  - env:VAR reads the environment, where WARPCRYPT_FUZZ_PASSPHRASE is set.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <span>
#include <string>

#include "cli_error.h"
#include "fuzz_support.h"
#include "key_setup.h"

namespace {

using warpcrypt::fuzz::Pipe;
using warpcrypt::fuzz::require;
using warpcrypt::fuzz::write_all;

constexpr char kFilePrefix[] = "file:";
constexpr char kFdPrefix[] = "fd:";

class ScratchDirectory {
 public:
  ScratchDirectory() {
    std::string pattern = (std::filesystem::temp_directory_path() / "warpcrypt-passphrase-fuzz.XXXXXX").string();
    require(mkdtemp(pattern.data()) != nullptr, "mkdtemp failed");
    path_ = pattern;
  }
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDirectory(const ScratchDirectory &) = delete;
  ScratchDirectory &operator=(const ScratchDirectory &) = delete;

  const std::string &path() const { return path_; }

 private:
  std::string path_;
};

const ScratchDirectory &scratch() {
  static const ScratchDirectory directory;
  return directory;
}

void write_scratch_file(std::span<const uint8_t> contents) {
  const std::string path = scratch().path() + "/passphrase";
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  require(fd >= 0, "cannot write the scratch file");
  write_all(fd, contents);
  close(fd);
}

bool starts_with(const std::string &text, const char *prefix) { return text.rfind(prefix, 0) == 0; }

// Every run of digits that could be a descriptor number (up to INT32_MAX)
// becomes `fd`, so however the parser reads the number, it can only reach
// the pipe. Larger numbers stay, for the parser to refuse.
std::string aim_numbers_at(const std::string &text, int fd) {
  std::string aimed;
  for (size_t i = 0; i < text.size();) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) {
      aimed.push_back(text[i++]);
      continue;
    }
    size_t end = i;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    uint64_t value = 0;
    const auto [stop, error] = std::from_chars(text.data() + i, text.data() + end, value);
    const bool could_be_fd = error == std::errc() && value <= INT32_MAX;
    aimed += could_be_fd ? std::to_string(fd) : text.substr(i, end - i);
    i = end;
  }
  return aimed;
}

// The source as the parser gets it, or nullopt for one that could reach
// outside the scratch directory.
std::optional<std::string> confine(const std::string &source, int pipe_fd) {
  if (starts_with(source, kFilePrefix)) {
    const std::string name = source.substr(sizeof kFilePrefix - 1);
    if (name.find('/') != std::string::npos) return std::nullopt;
    return kFilePrefix + scratch().path() + "/" + name;
  }
  if (source.find('/') != std::string::npos) return std::nullopt;
  if (starts_with(source, kFdPrefix)) return kFdPrefix + aim_numbers_at(source.substr(sizeof kFdPrefix - 1), pipe_fd);
  return source;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  setenv("WARPCRYPT_FUZZ_PASSPHRASE", "a passphrase from the environment", 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::span<const uint8_t> input(data, size);
  const auto nul = std::find(input.begin(), input.end(), uint8_t{0});
  const std::string source(input.begin(), nul);
  const std::span<const uint8_t> contents = nul == input.end() ? input.last(0) : input.subspan(source.size() + 1);

  Pipe pipe;
  if (!pipe.holds(contents.size())) return 0;
  write_all(pipe.write_end(), contents);
  pipe.close_write();
  const std::optional<std::string> confined = confine(source, pipe.read_end());
  if (!confined) return 0;
  if (starts_with(*confined, kFilePrefix)) write_scratch_file(contents);
  // Replaces the previous input's pipe; what is left of this one after the
  // call stays readable, and ends, until the next input.
  require(dup2(pipe.read_end(), STDIN_FILENO) == STDIN_FILENO, "dup2 failed");

  try {
    warpcrypt::cli::Passphrase passphrase;
    warpcrypt::cli::read_passphrase(*confined, &passphrase);
  } catch (const warpcrypt::cli::CliError &) {
    // A bad source, reported in one line: what the parser must do.
  }
  if (starts_with(*confined, kFilePrefix)) {
    try {
      warpcrypt::cli::Passphrase passphrase;
      warpcrypt::cli::read_kfile(confined->substr(sizeof kFilePrefix - 1), &passphrase);
    } catch (const warpcrypt::cli::CliError &) {
    }
  }
  return 0;
}
