// How the CLI reports failure: a one-line message, never key material, and an
// exit status by the failure's kind (docs/cli.md lists them).
#pragma once

#include <stdexcept>
#include <string>

#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::cli {

// `message` with every word that is an age secret key (AGE-SECRET-KEY-1...,
// AGE-PLUGIN-..., in either case) replaced by "<secret key>", and every PEM
// private key block (an SSH key's "-----BEGIN ... PRIVATE KEY-----" through
// its END line, or the message's end) by "<private key>": a key given where
// a recipient or a path belongs must not be echoed to a terminal or a log.
std::string mask_secrets(std::string message);

// Thrown by any command; main() prints "warpcrypt: <message>" and exits with
// exit_status(kind()). A message with no library status behind it is a usage
// error unless it says otherwise. Every message is masked (mask_secrets)
// here, the one place all of them pass.
class CliError : public std::runtime_error {
 public:
  explicit CliError(const std::string &message, wc_status_kind kind = WC_KIND_USAGE)
      : std::runtime_error(mask_secrets(message)), kind_(kind) {}
  wc_status_kind kind() const { return kind_; }

 private:
  wc_status_kind kind_;
};

// The process exit status for a kind of failure: 0 ok, 1 failure, 2 usage,
// 3 I/O, 4 authentication, 5 no device.
int exit_status(wc_status_kind kind);
// What the exit status of `kind` tells, for the manual page.
const char *exit_status_meaning(wc_status_kind kind);
// The kinds, in the order of their exit statuses.
inline constexpr wc_status_kind kStatusKinds[] = {WC_KIND_OK,   WC_KIND_FAILURE, WC_KIND_USAGE,
                                                  WC_KIND_IO,   WC_KIND_AUTH,    WC_KIND_NO_DEVICE};

// Throws CliError("<context>: <status text>"), of the status' kind, unless
// status is WC_OK.
void check(wc_status status, const std::string &context);

// "<what> '<path>': <strerror(errno)>", an I/O error, for failed system calls.
[[noreturn]] void throw_system_error(const std::string &what, const std::string &path);

}  // namespace warpcrypt::cli
