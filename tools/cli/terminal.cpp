#include "terminal.h"

#include <fcntl.h>
#include <openssl/ui.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <array>

#include "cli_error.h"
#include "key_setup.h"

namespace warpcrypt::cli {

void ask_passphrase(const std::string &prompt, bool confirm, const std::string &instead, Passphrase *out) {
  // OpenSSL's UI reads standard input when it cannot open the terminal;
  // here that would take the data for the passphrase.
  const int tty = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
  if (tty < 0) throw CliError("no passphrase given, and no terminal to ask for one: " + instead);
  close(tty);
  // One byte more than a Passphrase holds, so that a longer one is refused
  // rather than cut short; UI_UTIL_read_pw_string ends it with a NUL.
  std::array<char, Passphrase::kCapacity + 2> typed{};
  const bool read = UI_UTIL_read_pw_string(typed.data(), static_cast<int>(typed.size()), prompt.c_str(),
                                           confirm ? 1 : 0) == 0;
  try {
    for (size_t i = 0; read && typed[i] != '\0'; ++i) out->push_back(typed[i]);
  } catch (...) {
    wc_memzero(typed.data(), typed.size());
    throw;
  }
  wc_memzero(typed.data(), typed.size());
  if (!read) throw CliError(confirm ? "the passphrases differ, or none was read" : "no passphrase was read");
  if (out->empty()) throw CliError("empty passphrase: " + instead);
}

unsigned terminal_columns(int fd) {
  winsize size{};
  if (!isatty(fd) || ioctl(fd, TIOCGWINSZ, &size) != 0) return 0;
  return size.ws_col;
}

}  // namespace warpcrypt::cli
