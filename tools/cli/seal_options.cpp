#include "seal_options.h"

#include "cli_error.h"

namespace warpcrypt::cli {
namespace {

uint64_t parse_chunk_bytes(const std::string &text) {
  const uint64_t bytes = parse_size(text, "--chunk-size");
  const bool power_of_two = bytes != 0 && (bytes & (bytes - 1)) == 0;
  if (!power_of_two || bytes < 4096 || bytes > (uint64_t{1} << 30)) {
    throw CliError("--chunk-size must be a power of two from 4K to 1G");
  }
  return bytes;
}

// The engine takes chunks of whole 4 KiB pages up to 1 GiB.
uint64_t parse_window(const std::string &text) {
  const uint64_t bytes = parse_size(text, "--window");
  if (bytes == 0 || bytes % 4096 != 0 || bytes > (uint64_t{1} << 30)) {
    throw CliError("--window must be a multiple of 4K, up to 1G");
  }
  return bytes;
}

const std::string &parse_digest(const std::string &name) {
  if (name != "sha256" && name != "sha512") throw CliError("-md: seal takes sha256 or sha512, not '" + name + "'");
  return name;
}

}  // namespace

SealOptions parse_seal_options(const std::vector<std::string> &args, bool sealing) {
  SealOptions o;
  o.sealing = sealing;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    auto value = [&]() -> const std::string & { return take_value(args, i); };
    if (arg == "-pass") o.pass_source.emplace(value());
    else if (arg == "-kfile") o.key_file = value();
    else if (arg == "-in") o.in_path = value();
    else if (arg == "-out") o.out_path = value();
    else if (arg == "--backend") o.backend = parse_backend(value());
    else if (arg == "--threads") o.threads = parse_thread_count(value());
    else if (arg == "--window") o.window = parse_window(value());
    else if (arg == "-v") o.verbose = true;
    else if (arg == "-q") o.verbose = false;
    else if (arg == "-h" || arg == "-help" || arg == "--help") o.help = true;
    else if (sealing && arg == "-iter") {
      o.iterations = static_cast<uint32_t>(parse_unsigned(value(), "-iter", WC_SEAL_MAX_ITERATIONS));
      if (o.iterations == 0) throw CliError("-iter must be at least 1");
    } else if (sealing && arg == "-md") o.digest = parse_digest(value());
    else if (sealing && arg == "--chunk-size") o.chunk_bytes = parse_chunk_bytes(value());
    else if (sealing && (arg == "-c" || arg == "-cipher")) {
      const std::string &name = value();
      o.aead = wc_aead_by_name(name.c_str());
      if (o.aead == nullptr) throw CliError("unknown AEAD '" + name + "' (aes-128/192/256-gcm, chacha20-poly1305)");
    } else if (sealing && arg.size() > 1 && arg[0] == '-' && wc_aead_by_name(arg.c_str() + 1) != nullptr) {
      o.aead = wc_aead_by_name(arg.c_str() + 1);
    } else if (!sealing && arg == "--offset") o.offset = parse_size(value(), arg);
    else if (!sealing && arg == "--length") o.length = parse_size(value(), arg);
    else if (!sealing && arg == "--max-iter") {
      o.max_iterations = static_cast<uint32_t>(parse_unsigned(value(), "--max-iter", WC_SEAL_MAX_ITERATIONS));
      if (o.max_iterations == 0) throw CliError("--max-iter must be at least 1");
    }
    else if (arg.rfind("-pass", 0) == 0 || arg.rfind("-kfile", 0) == 0) {
      throw CliError("unknown option starting with '" + arg.substr(0, arg[1] == 'p' ? 5 : 6) + "'");
    } else {
      throw CliError("unknown option '" + arg + "' (see 'warpcrypt " + (sealing ? "seal" : "open") + " --help')");
    }
  }
  if (!o.help && o.pass_source.has_value() == o.key_file.has_value()) {
    throw CliError("give exactly one of -pass and -kfile");
  }
  return o;
}

}  // namespace warpcrypt::cli
