// The passphrase of a passphrase-protected SSH identity (age -d -i KEY),
// asked on the terminal as age asks it, and only when the file being
// decrypted has a stanza for that key: the library calls back
// (wc_age_passphrase_fn) in the middle of decryption.
#pragma once

#include <optional>
#include <string>

#include "warpcrypt/age.h"

namespace warpcrypt::cli {

class SshKeyPrompt {
 public:
  explicit SshKeyPrompt(std::string path) : path_(std::move(path)) {}

  // The callback and the context to hand wc_age_identities_add_with_prompt.
  static wc_status ask(void *context, uint8_t *out, size_t out_cap, size_t *out_len);
  // A CliError cannot cross the library's C frames, so ask keeps what went
  // wrong (no terminal, too long a passphrase) and this throws it, once
  // decryption has returned.
  void rethrow() const;

 private:
  std::string path_;
  std::optional<std::string> error_;
};

}  // namespace warpcrypt::cli
