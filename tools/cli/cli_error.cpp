#include "cli_error.h"

#include <cerrno>
#include <cstring>

namespace warpcrypt::cli {

void check(wc_status status, const std::string &context) {
  if (status != WC_OK) throw CliError(context + ": " + wc_status_string(status));
}

std::string job_failure(wc_status status, const wc_job &job) {
  if (job.detail != nullptr) return job.detail;
  if (status == WC_ERR_IO && job.os_error != 0) return std::strerror(job.os_error);
  return wc_status_string(status);
}

void throw_system_error(const std::string &what, const std::string &path) {
  throw CliError(what + " '" + path + "': " + std::strerror(errno));
}

}  // namespace warpcrypt::cli
