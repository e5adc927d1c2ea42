// The terminal: passphrases typed without echo, asked as `openssl enc` asks
// for them (the same prompts, the second one "Verifying - "), and the width
// a line may take.
#pragma once

#include <string>

namespace warpcrypt::cli {

class Passphrase;

// Asks for a passphrase on the controlling terminal (/dev/tty) without echo
// and, if `confirm`, a second time, failing unless both match. Without a
// terminal to ask on it fails, saying which options give one instead
// (`instead`); it never reads standard input, which may carry the data.
void ask_passphrase(const std::string &prompt, bool confirm, const std::string &instead, Passphrase *out);

// The columns of the terminal on `fd`, read afresh on every call (so a
// resized window is seen at the next redraw); 0 if `fd` is no terminal.
unsigned terminal_columns(int fd);

}  // namespace warpcrypt::cli
