#include "age_plugin_ui.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "cli_error.h"
#include "key_setup.h"
#include "terminal.h"

namespace warpcrypt::cli {
namespace {

// A plugin's text with every control character shown as '?': what a
// plugin writes must not drive the terminal (escape sequences, carriage
// returns that overwrite the prompt).
std::string printable(const char *text) {
  std::string out(text);
  std::replace_if(
      out.begin(), out.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }, '?');
  return out;
}

int display_message(void *, const char *plugin, const char *message) {
  const std::string line = "age-plugin-" + printable(plugin) + ": " + printable(message) + "\n";
  return write(STDERR_FILENO, line.data(), line.size()) == static_cast<ssize_t>(line.size()) ? 0 : 1;
}

// Every value a plugin asks for is typed without echo: a public one shows
// nothing that matters, and a secret one must not show.
int request_value(void *, const char *plugin, const char *prompt, int, char *value, size_t value_cap,
                  size_t *value_len) {
  try {
    Passphrase typed;
    ask_passphrase("age-plugin-" + printable(plugin) + ": " + printable(prompt) + " ", false,
                   "the age plugin's request needs a terminal", &typed);
    const auto bytes = typed.bytes();
    if (bytes.size() > value_cap) return 1;
    std::memcpy(value, bytes.data(), bytes.size());
    *value_len = bytes.size();
    return 0;
  } catch (const CliError &) {
    // No terminal, or nothing typed: the plugin hears "fail" and says why.
    return 1;
  }
}

}  // namespace

const wc_age_plugin_ui &terminal_plugin_ui() {
  static const wc_age_plugin_ui ui = {nullptr, display_message, request_value, nullptr};
  return ui;
}

}  // namespace warpcrypt::cli
