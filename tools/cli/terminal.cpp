#include "terminal.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iterator>

#include "cli_error.h"
#include "file_io.h"
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
    // TCSANOW, not TCSAFLUSH: what was typed ahead, before the prompt came
    // (a passphrase after a pasted armored file), is kept for the prompt to
    // read, as age keeps it.
    if (tcsetattr(tty, TCSANOW, &quiet) != 0) {
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
// LF); false where the terminal ended (^D) before a line. An empty line is
// a line: the empty answer.
bool read_hidden_line(int tty, const std::string &prompt, Passphrase *out) {
  write_text(tty, prompt);
  bool got_line = false;
  {
    const EchoOff quiet(tty);
    for (;;) {
      char c = 0;
      const ssize_t n = read(tty, &c, 1);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw CliError(std::string("cannot read the terminal: ") + std::strerror(errno));
      if (n == 0) break;
      if (c == '\n') {
        got_line = true;
        break;
      }
      out->push_back(c);  // CliError past the capacity: refused, not cut short
    }
  }
  write_text(tty, "\n");  // the LF typed, which echo did not show
  return got_line || !out->empty();
}

// The controlling terminal, never standard input, which may carry the data.
int open_terminal(const std::string &instead) {
  const int tty = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
  if (tty < 0) throw CliError("no passphrase given, and no terminal to ask for one: " + instead);
  return tty;
}

// Asks `prompt` for the same passphrase again, failing unless it matches.
void confirm_passphrase(int tty, const std::string &prompt, const Passphrase &first) {
  Passphrase again;
  const bool read_again = read_hidden_line(tty, prompt, &again);
  const auto one = first.bytes();
  const auto other = again.bytes();
  if (!read_again || one.size() != other.size() || std::memcmp(one.data(), other.data(), one.size()) != 0) {
    throw CliError("the passphrases didn't match");
  }
}

}  // namespace

void ask_passphrase(const std::string &prompt, bool confirm, const std::string &instead, Passphrase *out) {
  const Descriptor tty(open_terminal(instead));
  if (!read_hidden_line(tty.get(), prompt, out)) throw CliError("no passphrase was read");
  if (out->empty()) throw CliError("empty passphrase: " + instead);
  // As openssl asks for it the second time.
  if (confirm) confirm_passphrase(tty.get(), "Verifying - " + prompt, *out);
}

void ask_new_passphrase(const std::string &prompt, const std::string &confirm_prompt, const std::string &instead,
                        Passphrase *out) {
  const Descriptor tty(open_terminal(instead));
  if (!read_hidden_line(tty.get(), prompt, out)) throw CliError("no passphrase was read");
  if (!out->empty()) confirm_passphrase(tty.get(), confirm_prompt, *out);
}

void tell_terminal(const std::string &line) {
  const Descriptor tty(open("/dev/tty", O_WRONLY | O_CLOEXEC | O_NOCTTY));
  if (tty.get() < 0) throw CliError(std::string("cannot open the terminal: ") + std::strerror(errno));
  write_text(tty.get(), line + "\n");
}

Descriptor::~Descriptor() {
  if (fd_ >= 0) close(fd_);
}

int read_typed_input(int tty, std::string_view end_line) {
  std::string typed;
  char piece[4096];
  // Where end_line may start that was not searched yet: a read ends a line
  // at a time at a terminal, but a pasted line can come in pieces.
  size_t unsearched = 0;
  while (typed.find(end_line, unsearched) == std::string::npos) {
    unsearched = typed.size() >= end_line.size() ? typed.size() - end_line.size() + 1 : 0;
    const ssize_t n = read(tty, piece, sizeof piece);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw CliError(std::string("cannot read the terminal: ") + std::strerror(errno), WC_KIND_IO);
    if (n == 0) break;
    typed.append(piece, static_cast<size_t>(n));
  }
  Descriptor memory(memfd_create("warpcrypt-typed-input", MFD_CLOEXEC));
  if (memory.get() < 0) throw CliError(std::string("cannot keep the typed input: ") + std::strerror(errno));
  write_all(memory.get(), reinterpret_cast<const uint8_t *>(typed.data()), typed.size(), "the typed input");
  if (lseek(memory.get(), 0, SEEK_SET) != 0) {
    throw CliError(std::string("cannot keep the typed input: ") + std::strerror(errno));
  }
  return memory.release();
}

unsigned terminal_columns(int fd) {
  winsize size{};
  if (!isatty(fd) || ioctl(fd, TIOCGWINSZ, &size) != 0) return 0;
  return size.ws_col;
}

}  // namespace warpcrypt::cli
