#include "cli_error.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <utility>

namespace warpcrypt::cli {

namespace {

bool starts_with_ignoring_case(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() &&
         std::equal(prefix.begin(), prefix.end(), text.begin(), [](char a, char b) {
           return std::toupper(static_cast<unsigned char>(a)) == std::toupper(static_cast<unsigned char>(b));
         });
}

// A word ends at whitespace, at the quotes and colon messages put around a
// value, and at a path's slash (a key given as a file name).
bool ends_word(char c) {
  return std::isspace(static_cast<unsigned char>(c)) || c == '\'' || c == '"' || c == ':' || c == '/';
}

// Replaces each PEM private key block, from its BEGIN line through its END
// line and its line break (or the end, where that is missing), by
// "<private key>".
std::string mask_private_key_blocks(std::string message) {
  static constexpr std::string_view kBegin = "-----BEGIN ";
  static constexpr std::string_view kEnd = "-----END ";
  static constexpr std::string_view kLabelEnd = "PRIVATE KEY-----";
  static constexpr std::string_view kMask = "<private key>";
  for (size_t at = message.find(kBegin); at != std::string::npos; at = message.find(kBegin, at)) {
    const size_t label = message.find(kLabelEnd, at);
    if (label == std::string::npos || message.find('\n', at) < label) {
      at += kBegin.size();
      continue;
    }
    const size_t end_line = message.find(kEnd, label);
    const size_t end_label = end_line == std::string::npos ? std::string::npos : message.find(kLabelEnd, end_line);
    size_t end = end_label == std::string::npos ? message.size() : end_label + kLabelEnd.size();
    // The END line's own line break goes too, so the message stays one line.
    if (message.compare(end, 2, "\r\n") == 0) {
      end += 2;
    } else if (end < message.size() && message[end] == '\n') {
      ++end;
    }
    message.replace(at, end - at, kMask);
    at += kMask.size();
  }
  return message;
}

}  // namespace

std::string mask_secrets(std::string message) {
  message = mask_private_key_blocks(std::move(message));
  static constexpr std::string_view kSecretPrefixes[] = {"AGE-SECRET-KEY-", "AGE-PLUGIN-"};
  static constexpr std::string_view kMask = "<secret key>";
  for (size_t at = 0; at < message.size(); ++at) {
    if (at > 0 && !ends_word(message[at - 1])) continue;
    const std::string_view rest = std::string_view(message).substr(at);
    if (std::none_of(std::begin(kSecretPrefixes), std::end(kSecretPrefixes),
                     [&](std::string_view prefix) { return starts_with_ignoring_case(rest, prefix); })) {
      continue;
    }
    const size_t end = std::find_if(message.begin() + static_cast<std::ptrdiff_t>(at), message.end(), ends_word) -
                       message.begin();
    message.replace(at, end - at, kMask);
    at += kMask.size() - 1;
  }
  return message;
}

int exit_status(wc_status_kind kind) {
  switch (kind) {
    case WC_KIND_OK: return 0;
    case WC_KIND_FAILURE: return 1;
    case WC_KIND_USAGE: return 2;
    case WC_KIND_IO: return 3;
    case WC_KIND_AUTH: return 4;
    case WC_KIND_NO_DEVICE: return 5;
  }
  return 1;
}

const char *exit_status_meaning(wc_status_kind kind) {
  switch (kind) {
    case WC_KIND_OK: return "success";
    case WC_KIND_FAILURE: return "a failure of no kind below: out of memory, OpenSSL or a CUDA call failed";
    case WC_KIND_USAGE:
      return "usage: an unknown or refused option, a missing or invalid value, a wrong key length, no cipher";
    case WC_KIND_IO: return "input or output: a file that cannot be opened, read or written";
    case WC_KIND_AUTH:
      return "authentication: a wrong key or passphrase, or data that was modified, truncated or is not in the "
             "format (bad decrypt, a sealed file that does not open, base64 that is not)";
    case WC_KIND_NO_DEVICE: return "no device: the gpu or hybrid backend, or a device index, that this machine lacks";
  }
  return "";
}

void check(wc_status status, const std::string &context) {
  if (status != WC_OK) throw CliError(context + ": " + wc_status_string(status), wc_status_kind_of(status));
}

void throw_system_error(const std::string &what, const std::string &path) {
  throw CliError(what + " '" + path + "': " + std::strerror(errno), WC_KIND_IO);
}

}  // namespace warpcrypt::cli
