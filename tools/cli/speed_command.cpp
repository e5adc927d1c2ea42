// `warpcrypt speed`: throughput in the style of `openssl speed -evp`. Each
// figure is the median of at least five timed runs after a warm-up, in GB/s
// (10^9 bytes per second).
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cli_error.h"
#include "commands.h"
#include "enc_options.h"

namespace warpcrypt::cli {
namespace {

constexpr const char *kSpeedUsage =
    "usage: warpcrypt speed [options]\n"
    "  -evp NAME        cipher to measure (repeatable; default aes-128-ctr)\n"
    "  -bytes N         message size (repeatable; default: openssl's sizes plus 1 MiB, 16 MiB)\n"
    "  -seconds S       time per size, split over the runs (default 3)\n"
    "  -decrypt         measure decryption\n"
    "  --runs N         timed runs per size, at least 5 (default 5)\n"
    "  --backend NAME   auto, cpu or gpu (default cpu)\n"
    "  --threads N      CPU threads (default: all cores)\n"
    "  --json           machine-readable output\n";

struct SpeedOptions {
  std::vector<const wc_cipher *> ciphers;
  std::vector<size_t> sizes;
  double seconds = 3.0;
  unsigned runs = 5;
  wc_direction direction = WC_ENCRYPT;
  wc_backend backend = WC_BACKEND_CPU;
  unsigned threads = 0;
  bool json = false;
};

struct Measurement {
  const wc_cipher *cipher;
  size_t bytes;
  double median_gbps;
  std::vector<double> run_gbps;
};

template <typename T>
T parse_value(const std::string &text, const char *flag) {
  T value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    throw CliError(std::string("invalid value '") + text + "' for " + flag);
  }
  return value;
}

SpeedOptions parse_speed_options(const std::vector<std::string> &args) {
  SpeedOptions o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    auto value = [&]() -> const std::string & {
      if (i + 1 >= args.size()) throw CliError("option " + arg + " needs a value");
      return args[++i];
    };
    if (arg == "-evp") {
      const std::string &name = value();
      const wc_cipher *cipher = wc_cipher_by_name(name.c_str());
      if (cipher == nullptr) throw CliError("unknown cipher '" + name + "' (see 'warpcrypt enc -list')");
      o.ciphers.push_back(cipher);
    } else if (arg == "-bytes") {
      const auto bytes = parse_value<size_t>(value(), "-bytes");
      if (bytes == 0) throw CliError("-bytes must be at least 1");
      o.sizes.push_back(bytes);
    } else if (arg == "-seconds") {
      o.seconds = parse_value<double>(value(), "-seconds");
      if (!(o.seconds > 0)) throw CliError("-seconds must be positive");
    } else if (arg == "--runs") {
      o.runs = std::max(5u, parse_value<unsigned>(value(), "--runs"));
    } else if (arg == "-decrypt") {
      o.direction = WC_DECRYPT;
    } else if (arg == "--backend") {
      o.backend = parse_backend(value());
    } else if (arg == "--threads") {
      o.threads = parse_thread_count(value());
    } else if (arg == "--json") {
      o.json = true;
    } else if (arg == "-h" || arg == "-help" || arg == "--help") {
      std::fputs(kSpeedUsage, stdout);
      std::exit(0);
    } else {
      throw CliError("unknown speed option '" + arg + "' (see 'warpcrypt speed --help')");
    }
  }
  if (o.ciphers.empty()) o.ciphers.push_back(wc_cipher_by_name("aes-128-ctr"));
  if (o.sizes.empty()) o.sizes = {16, 64, 256, 1024, 8192, 16384, 1 << 20, 16 << 20};
  return o;
}

struct CtxDeleter {
  void operator()(wc_ctx *ctx) const { wc_ctx_free(ctx); }
};

// Runs back-to-back updates of `bytes` on one context for each run, the way
// `openssl speed -evp` loops EVP_EncryptUpdate. Padding is off: speed is
// about the cipher, and ECB/CBC then take whole blocks only.
Measurement measure(const SpeedOptions &o, const wc_cipher *cipher, size_t bytes) {
  const size_t block = wc_cipher_block_len(cipher);
  const size_t len = std::max(block, bytes / block * block);
  std::vector<uint8_t> key(wc_cipher_key_len(cipher));
  std::vector<uint8_t> iv(wc_cipher_iv_len(cipher));
  std::vector<uint8_t> buffer(len);
  check(wc_random_bytes(key.data(), key.size()), "random key");
  check(wc_random_bytes(iv.data(), iv.size()), "random IV");
  check(wc_random_bytes(buffer.data(), buffer.size()), "random data");

  wc_options options;
  wc_options_init(&options);
  options.backend = o.backend;
  options.threads = o.threads;
  options.padding = 0;
  wc_ctx *raw = nullptr;
  check(wc_ctx_new(&raw, &options, cipher, o.direction, key.data(), key.size(), iv.data(), iv.size()),
        std::string("cannot start ") + wc_cipher_name(cipher));
  const std::unique_ptr<wc_ctx, CtxDeleter> ctx(raw);

  using clock = std::chrono::steady_clock;
  auto run_for = [&](double seconds) {
    uint64_t done = 0;
    const auto start = clock::now();
    double elapsed = 0;
    do {
      size_t produced = 0;
      check(wc_ctx_update(ctx.get(), buffer.data(), buffer.size(), &produced, buffer.data(), len),
            "update");
      done += len;
      elapsed = std::chrono::duration<double>(clock::now() - start).count();
    } while (elapsed < seconds);
    return static_cast<double>(done) / elapsed / 1e9;
  };

  run_for(std::min(0.2, o.seconds / 10));  // warm-up: thread pool, caches, clocks
  Measurement m{cipher, len, 0, {}};
  for (unsigned r = 0; r < o.runs; ++r) m.run_gbps.push_back(run_for(o.seconds / o.runs));
  std::vector<double> sorted = m.run_gbps;
  std::sort(sorted.begin(), sorted.end());
  m.median_gbps = sorted.size() % 2 ? sorted[sorted.size() / 2]
                                    : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
  return m;
}

void print_table(const SpeedOptions &o, const std::vector<Measurement> &results, unsigned threads) {
  std::printf("warpcrypt %s, backend %s, %u thread(s), %s\n", wc_version(), wc_backend_name(o.backend),
              threads, o.direction == WC_ENCRYPT ? "encrypt" : "decrypt");
  std::printf("The 'numbers' are in GB/s (10^9 bytes/s), median of %u runs.\n", o.runs);
  std::printf("%-16s", "type");
  for (size_t size : o.sizes) std::printf(" %11zu B", size);
  std::printf("\n");
  for (size_t c = 0; c < o.ciphers.size(); ++c) {
    std::printf("%-16s", wc_cipher_name(o.ciphers[c]));
    for (size_t s = 0; s < o.sizes.size(); ++s) {
      std::printf(" %13.3f", results[c * o.sizes.size() + s].median_gbps);
    }
    std::printf("\n");
  }
}

void print_json(const SpeedOptions &o, const std::vector<Measurement> &results, unsigned threads) {
  std::printf("{\"version\": \"%s\", \"backend\": \"%s\", \"threads\": %u, \"direction\": \"%s\",\n",
              wc_version(), wc_backend_name(o.backend), threads,
              o.direction == WC_ENCRYPT ? "encrypt" : "decrypt");
  std::printf(" \"unit\": \"GB/s\", \"results\": [\n");
  for (size_t i = 0; i < results.size(); ++i) {
    const Measurement &m = results[i];
    std::printf("  {\"cipher\": \"%s\", \"bytes\": %zu, \"median_gbps\": %.4f, \"runs_gbps\": [",
                wc_cipher_name(m.cipher), m.bytes, m.median_gbps);
    for (size_t r = 0; r < m.run_gbps.size(); ++r) std::printf("%s%.4f", r ? ", " : "", m.run_gbps[r]);
    std::printf("]}%s\n", i + 1 < results.size() ? "," : "");
  }
  std::printf("]}\n");
}

}  // namespace

int run_speed(const std::vector<std::string> &args) {
  const SpeedOptions o = parse_speed_options(args);
  std::vector<Measurement> results;
  for (const wc_cipher *cipher : o.ciphers) {
    for (size_t size : o.sizes) results.push_back(measure(o, cipher, size));
  }
  const unsigned threads = o.threads != 0 ? o.threads : std::thread::hardware_concurrency();
  if (o.json) {
    print_json(o, results, threads);
  } else {
    print_table(o, results, threads);
  }
  return 0;
}

}  // namespace warpcrypt::cli
