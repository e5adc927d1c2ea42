// The terminal: passphrases typed without echo, asked as `openssl enc` asks
// for them (the same prompts, the second one "Verifying - ") or as `age`
// asks for a new one, and the width a line may take.
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace warpcrypt::cli {

class Passphrase;

// Asks for a passphrase on the controlling terminal (/dev/tty) without echo
// and, if `confirm`, a second time, failing unless both match. Without a
// terminal to ask on it fails, saying which options give one instead
// (`instead`); it never reads standard input, which may carry the data.
void ask_passphrase(const std::string &prompt, bool confirm, const std::string &instead, Passphrase *out);

// Asks for a new passphrase as age asks for one: `prompt`, then, unless the
// answer was empty, `confirm_prompt` for it again, failing unless both
// match. An empty answer comes back empty, unconfirmed: age then makes a
// passphrase up.
void ask_new_passphrase(const std::string &prompt, const std::string &confirm_prompt, const std::string &instead,
                        Passphrase *out);

// Writes `line` on the controlling terminal, for what only the person at it
// may see (a passphrase made up for them): standard error may be a log.
void tell_terminal(const std::string &line);

// Reads what is typed or pasted at the terminal `tty` (standard input)
// until a line `end_line` (with its LF) or ^D, so that a prompt shown
// after it does not take part of the input for its answer, and returns it
// in an anonymous memory file, at its start, which the caller closes. What
// is typed after that line stays unread, for the prompt.
int read_typed_input(int tty, std::string_view end_line);

// Closes the descriptor on every way out.
class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor();
  Descriptor(const Descriptor &) = delete;
  Descriptor &operator=(const Descriptor &) = delete;
  int get() const { return fd_; }
  // Gives the descriptor up, unclosed.
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// The columns of the terminal on `fd`, read afresh on every call (so a
// resized window is seen at the next redraw); 0 if `fd` is no terminal.
unsigned terminal_columns(int fd);

}  // namespace warpcrypt::cli
