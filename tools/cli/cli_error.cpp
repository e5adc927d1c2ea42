#include "cli_error.h"

#include <cerrno>
#include <cstring>

namespace warpcrypt::cli {

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
