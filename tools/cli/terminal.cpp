#include "terminal.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iterator>

#include "cli_error.h"
#include "key_setup.h"

namespace warpcrypt::cli {
namespace {

// The signals that end the program while echo is off. Their handler puts the
// terminal back before the signal takes its course, so that a ^C at the
// prompt leaves a terminal that echoes.
constexpr int kEndingSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
// The signals that stop it: held back until echo is on again, so that a
// stopped program never leaves the shell a terminal without echo, nor reads
// on with echo on once continued.
constexpr int kStoppingSignals[] = {SIGTSTP, SIGTTIN, SIGTTOU};

// What the handler restores; set only while echo is off (one prompt at a
// time: the CLI asks from its main thread).
int g_tty = -1;
termios g_saved{};

void restore_and_reraise(int signal_number) {
  tcsetattr(g_tty, TCSANOW, &g_saved);  // async-signal-safe
  ::signal(signal_number, SIG_DFL);
  raise(signal_number);
}

// Echo off on `tty` for as long as it lives, the terminal put back on every
// way out: return, exception, or an ending signal.
class EchoOff {
 public:
  explicit EchoOff(int tty) : tty_(tty) {
    if (tcgetattr(tty, &saved_) != 0) throw CliError(std::string("cannot read the terminal's settings: ") +
                                                     std::strerror(errno));
    sigset_t stopping;
    sigemptyset(&stopping);
    for (int s : kStoppingSignals) sigaddset(&stopping, s);
    sigprocmask(SIG_BLOCK, &stopping, &mask_before_);
    g_tty = tty;
    g_saved = saved_;
    struct sigaction handler {};
    handler.sa_handler = restore_and_reraise;
    sigemptyset(&handler.sa_mask);
    for (size_t i = 0; i < std::size(kEndingSignals); ++i) sigaction(kEndingSignals[i], &handler, &before_[i]);
    termios quiet = saved_;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    // What was typed before echo went off was shown: it is dropped, not taken
    // for the passphrase.
    if (tcsetattr(tty, TCSAFLUSH, &quiet) != 0) {
      restore();
      throw CliError(std::string("cannot turn the terminal's echo off: ") + std::strerror(errno));
    }
  }
  ~EchoOff() { restore(); }
  EchoOff(const EchoOff &) = delete;
  EchoOff &operator=(const EchoOff &) = delete;

 private:
  void restore() {
    tcsetattr(tty_, TCSANOW, &saved_);
    for (size_t i = 0; i < std::size(kEndingSignals); ++i) sigaction(kEndingSignals[i], &before_[i], nullptr);
    g_tty = -1;
    sigprocmask(SIG_SETMASK, &mask_before_, nullptr);
  }

  int tty_;
  termios saved_{};
  sigset_t mask_before_{};
  struct sigaction before_[std::size(kEndingSignals)] {};
};

void write_text(int tty, const std::string &text) {
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = write(tty, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw CliError(std::string("cannot write to the terminal: ") + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
}

// Shows `prompt` and reads one line without echo into `out` (without its
// LF); false where the terminal ended (^D) before a line.
bool read_hidden_line(int tty, const std::string &prompt, Passphrase *out) {
  write_text(tty, prompt);
  bool got_any = false;
  {
    const EchoOff quiet(tty);
    for (;;) {
      char c = 0;
      const ssize_t n = read(tty, &c, 1);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw CliError(std::string("cannot read the terminal: ") + std::strerror(errno));
      if (n == 0 || c == '\n') break;
      got_any = true;
      out->push_back(c);  // CliError past the capacity: refused, not cut short
    }
  }
  write_text(tty, "\n");  // the LF typed, which echo did not show
  return got_any || !out->empty();
}

// Closes the descriptor on every way out.
class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) close(fd_);
  }
  Descriptor(const Descriptor &) = delete;
  Descriptor &operator=(const Descriptor &) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

void ask_passphrase(const std::string &prompt, bool confirm, const std::string &instead, Passphrase *out) {
  // Never standard input, which may carry the data.
  const Descriptor tty(open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY));
  if (tty.get() < 0) throw CliError("no passphrase given, and no terminal to ask for one: " + instead);
  if (!read_hidden_line(tty.get(), prompt, out)) throw CliError("no passphrase was read");
  if (out->empty()) throw CliError("empty passphrase: " + instead);
  if (!confirm) return;
  Passphrase again;
  // As openssl asks for it the second time.
  const bool read_again = read_hidden_line(tty.get(), "Verifying - " + prompt, &again);
  const auto first = out->bytes();
  const auto second = again.bytes();
  if (!read_again || first.size() != second.size() || std::memcmp(first.data(), second.data(), first.size()) != 0) {
    throw CliError("the passphrases differ");
  }
}

unsigned terminal_columns(int fd) {
  winsize size{};
  if (!isatty(fd) || ioctl(fd, TIOCGWINSZ, &size) != 0) return 0;
  return size.ws_col;
}

}  // namespace warpcrypt::cli
