#include "arguments.h"

#include <charconv>

#include "cli_error.h"

namespace warpcrypt::cli {

const std::string &take_value(const std::vector<std::string> &args, size_t &i) {
  if (i + 1 >= args.size()) throw CliError("option " + args[i] + " needs a value");
  return args[++i];
}

uint64_t parse_unsigned(const std::string &text, const std::string &flag, uint64_t max) {
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value > max) {
    throw CliError("invalid number '" + text + "' for " + flag);
  }
  return value;
}

wc_backend parse_backend(const std::string &name, bool allow_reference) {
  if (name == "auto") return WC_BACKEND_AUTO;
  if (name == "cpu") return WC_BACKEND_CPU;
  if (name == "gpu") return WC_BACKEND_GPU;
  if (allow_reference && name == "gpu-ref") return WC_BACKEND_GPU_REFERENCE;
  throw CliError("unknown backend '" + name + "' (use auto, cpu or gpu" + (allow_reference ? " or gpu-ref)" : ")"));
}

unsigned parse_thread_count(const std::string &text) {
  const auto threads = static_cast<unsigned>(parse_unsigned(text, "--threads", 4096));
  if (threads == 0) throw CliError("--threads must be at least 1");
  return threads;
}

}  // namespace warpcrypt::cli
