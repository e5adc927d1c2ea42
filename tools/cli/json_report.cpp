#include "json_report.h"

#include <cstdio>

#include "cli_error.h"

namespace warpcrypt::cli {

std::string json_quoted(const std::string &text, bool html) {
  std::string out = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte == 0x7f || (html && (c == '<' || c == '>' || c == '&'))) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", byte);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

void print_json_result(const char *command, uint64_t bytes_in, uint64_t bytes_out, const wc_job &job) {
  const double gbps = job.seconds > 0 ? static_cast<double>(job.bytes_in) / job.seconds / 1e9 : 0.0;
  std::printf("{\"command\":%s,\"ok\":true,\"bytes_in\":%llu,\"bytes_out\":%llu,\"seconds\":%.6f,\"gbps\":%.3f,"
              "\"cpu_bytes\":%llu,\"gpu_bytes\":%llu}\n",
              json_quoted(command).c_str(), static_cast<unsigned long long>(bytes_in),
              static_cast<unsigned long long>(bytes_out), job.seconds, gbps,
              static_cast<unsigned long long>(job.cpu_bytes), static_cast<unsigned long long>(job.gpu_bytes));
  std::fflush(stdout);
}

int run_reporting(const char *command, bool json, const std::function<int()> &body) {
  try {
    return body();
  } catch (const CliError &error) {
    if (!json) throw;
    std::printf("{\"command\":%s,\"ok\":false,\"kind\":%s,\"exit\":%d,\"message\":%s}\n", json_quoted(command).c_str(),
                json_quoted(wc_status_kind_name(error.kind())).c_str(), exit_status(error.kind()),
                json_quoted(error.what()).c_str());
    std::fflush(stdout);
    return exit_status(error.kind());
  }
}

void check_json_output(bool json, bool data_to_stdout, const char *output_option) {
  if (json && data_to_stdout) {
    throw CliError(std::string("--json writes to standard output: name the output file with ") + output_option);
  }
}

}  // namespace warpcrypt::cli
