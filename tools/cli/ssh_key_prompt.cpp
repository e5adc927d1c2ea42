#include "ssh_key_prompt.h"

#include <algorithm>

#include "cli_error.h"
#include "key_setup.h"
#include "terminal.h"

namespace warpcrypt::cli {

wc_status SshKeyPrompt::ask(void *context, uint8_t *out, size_t out_cap, size_t *out_len) {
  auto *prompt = static_cast<SshKeyPrompt *>(context);
  try {
    Passphrase passphrase;
    ask_passphrase("Enter passphrase for \"" + prompt->path_ + "\":", false,
                   "remove the key's passphrase in a copy (ssh-keygen -p) to decrypt without a terminal", &passphrase);
    const auto bytes = passphrase.bytes();
    if (bytes.size() > out_cap) throw CliError(prompt->path_ + ": the passphrase is too long");
    std::copy(bytes.begin(), bytes.end(), out);
    *out_len = bytes.size();
    return WC_OK;
  } catch (const std::exception &error) {
    prompt->error_ = error.what();
    return WC_ERR_INVALID_ARGUMENT;
  }
}

void SshKeyPrompt::rethrow() const {
  if (error_) throw CliError(*error_);
}

}  // namespace warpcrypt::cli
