// `warpcrypt seal` and `warpcrypt open`: files sealed with an AEAD in the
// chunked format of docs/format.md, through the library's wc_seal_fd and
// wc_open_fd, which run the chunks on the engine's workers.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "arguments.h"
#include "cli_error.h"
#include "commands.h"
#include "file_io.h"
#include "key_setup.h"
#include "seal_options.h"

namespace warpcrypt::cli {
namespace {

constexpr const char *kSealUsage =
    "usage: warpcrypt seal [options]\n"
    "  -aes-256-gcm, -c NAME  the AEAD: aes-128-gcm, aes-192-gcm, aes-256-gcm (default),\n"
    "                         chacha20-poly1305\n"
    "  -pass SOURCE           passphrase: pass:TEXT, env:VAR, file:PATH, fd:N, stdin\n"
    "  -kfile PATH            a key file instead: exactly the AEAD's key length of random bytes\n"
    "  -iter N                PBKDF2 iterations for -pass (default 600000)\n"
    "  -md sha256|sha512      the KDF's digest (default sha256)\n"
    "  --chunk-size N[K|M|G]  plaintext per chunk, a power of two from 4K to 1G (default 1M)\n"
    "  -in FILE, -out FILE    default stdin and stdout; output to a file is written atomically\n"
    "  --backend auto|cpu|gpu|hybrid  where the chunks are sealed (default auto: the CPU)\n"
    "  --threads N            CPU workers (default: all cores)\n"
    "  --window N[K|M|G]      plaintext a worker claims at a time, in whole chunks (default 1M on\n"
    "                         the CPU, 8M with GPU workers)\n"
    "  -v, -q                 verbose / quiet\n";

constexpr const char *kOpenUsage =
    "usage: warpcrypt open [options]\n"
    "  -pass SOURCE, -kfile PATH  the passphrase or key file the file was sealed with\n"
    "  -in FILE, -out FILE    default stdin and stdout; output to a file is written atomically\n"
    "  --offset N, --length M plaintext bytes [N, N + M) only (K, M, G suffixes); reads and\n"
    "                         authenticates only the chunks holding them (a regular input file)\n"
    "  --max-iter N           open a -pass file whose header asks for up to N PBKDF2\n"
    "                         iterations (default 2000000; the header is checked only after)\n"
    "  --backend auto|cpu|gpu|hybrid  where the chunks are opened (default auto: the CPU)\n"
    "  --threads N            CPU workers (default: all cores)\n"
    "  --window N[K|M|G]      plaintext a worker claims at a time, in whole chunks (default 1M on\n"
    "                         the CPU, 8M with GPU workers)\n"
    "  -v, -q                 verbose / quiet\n"
    "Every byte written has been authenticated; a failure leaves no output file.\n";

// The passphrase, or the key file's bytes.
struct Secret {
  Passphrase passphrase;
  std::vector<uint8_t> key_file;
  ~Secret() { wc_memzero(key_file.data(), key_file.size()); }

  std::span<const uint8_t> bytes() const {
    if (!key_file.empty()) return key_file;
    return passphrase.bytes();
  }
};

void read_secret(const SealOptions &o, Secret *secret) {
  if (o.pass_source) {
    read_passphrase(o.pass_source->value, &secret->passphrase);
    return;
  }
  InputFile file(*o.key_file);
  secret->key_file.resize(WC_MAX_KEY_LEN + 1);
  secret->key_file.resize(file.read_up_to(secret->key_file.data(), secret->key_file.size()));
}

void check_key_file_length(const SealOptions &o, const Secret &secret, const wc_aead *aead) {
  if (o.key_file && secret.key_file.size() != wc_aead_key_len(aead)) {
    const std::string held = secret.key_file.size() > WC_MAX_KEY_LEN ? "more" : std::to_string(secret.key_file.size());
    throw CliError("-kfile: " + std::string(wc_aead_name(aead)) + " needs a key file of exactly " +
                   std::to_string(wc_aead_key_len(aead)) + " bytes, not " + held);
  }
}

wc_options library_options(const SealOptions &o) {
  wc_options options;
  wc_options_init(&options);
  options.backend = o.backend;
  options.threads = o.threads;
  options.chunk_bytes = o.window;
  return options;
}

// The library's failure in words: the chunk that did not authenticate, the
// header field that is wrong, or errno's reason.
[[noreturn]] void fail(const SealOptions &o, wc_status status, const wc_job &job) {
  if (status == WC_ERR_AUTH && job.failed_chunk != UINT64_MAX) {
    throw CliError("authentication failed at chunk " + std::to_string(job.failed_chunk) +
                   ": wrong passphrase or key, or the file was modified, truncated or reordered");
  }
  if (status == WC_ERR_INVALID_ARGUMENT && job.detail != nullptr && !o.sealing) {
    // The only detail open gives for a bad argument: the other key source.
    throw CliError(std::string(job.detail) + (o.pass_source ? ": use -kfile" : ": use -pass"));
  }
  if (job.detail != nullptr) throw CliError(job.detail);
  if (status == WC_ERR_IO && job.os_error != 0) {
    throw CliError(std::string(o.sealing ? "sealing" : "opening") + " failed: " + std::strerror(job.os_error));
  }
  if (status == WC_ERR_NO_DEVICE || status == WC_ERR_BACKEND_UNAVAILABLE) {
    throw CliError(std::string("cannot run on backend ") + wc_backend_name(o.backend) + ": " + wc_status_string(status));
  }
  throw CliError(std::string(o.sealing ? "sealing" : "opening") + " failed: " + wc_status_string(status));
}

void report(const SealOptions &o, const wc_aead *aead, uint64_t chunks, const wc_job &job) {
  if (!o.verbose) return;
  const uint64_t plaintext = o.sealing ? job.bytes_in : job.bytes_out;
  std::fprintf(stderr, "warpcrypt: %s %s: %llu plaintext bytes in %llu chunks, %.3f s, %.2f GB/s\n",
               o.sealing ? "sealed with" : "opened", wc_aead_name(aead), static_cast<unsigned long long>(plaintext),
               static_cast<unsigned long long>(chunks), job.seconds,
               job.seconds > 0 ? static_cast<double>(plaintext) / job.seconds / 1e9 : 0.0);
}

int seal(const SealOptions &o) {
  InputFile input(o.in_path);
  Secret secret;
  read_secret(o, &secret);
  check_key_file_length(o, secret, o.aead);

  wc_seal_params params;
  wc_seal_params_init(&params);
  params.aead = o.aead;
  params.key_source = o.pass_source ? WC_SEAL_PASSPHRASE : WC_SEAL_KEY;
  params.iterations = o.iterations;
  params.digest = o.digest.c_str();
  params.chunk_bytes = o.chunk_bytes;

  OutputFile output(o.out_path, input);
  const wc_options options = library_options(o);
  wc_job job;
  wc_job_init(&job);
  const std::span<const uint8_t> bytes = secret.bytes();
  const wc_status status = wc_seal_fd(&options, &params, &job, output.fd(), input.fd(), bytes.data(), bytes.size());
  if (status != WC_OK) fail(o, status, job);
  output.commit();
  report(o, o.aead, std::max<uint64_t>(1, (job.bytes_in + params.chunk_bytes - 1) / params.chunk_bytes), job);
  if (o.pass_source && o.iterations > WC_OPEN_DEFAULT_MAX_ITERATIONS) {
    std::fprintf(stderr, "warpcrypt: warning: more than %u PBKDF2 iterations: open this file with --max-iter %u\n",
                 WC_OPEN_DEFAULT_MAX_ITERATIONS, o.iterations);
  }
  return 0;
}

int open(const SealOptions &o) {
  InputFile input(o.in_path);
  Secret secret;
  read_secret(o, &secret);
  const bool ranged = o.offset || o.length;
  if (ranged && !S_ISREG(input.status().st_mode)) throw CliError("--offset and --length need a regular input file");
  // A file's header names its AEAD, and so the key length a key file needs.
  wc_sealed_info info{};
  const bool inspected = S_ISREG(input.status().st_mode) && wc_sealed_inspect(input.fd(), &info, nullptr) == WC_OK;
  if (inspected && info.key_source == WC_SEAL_KEY) check_key_file_length(o, secret, info.aead);

  OutputFile output(o.out_path, input);
  const wc_options options = library_options(o);
  wc_job job;
  wc_job_init(&job);
  const std::span<const uint8_t> bytes = secret.bytes();
  wc_open_params params;
  wc_open_params_init(&params);
  params.offset = o.offset.value_or(0);
  params.length = o.length.value_or(UINT64_MAX);
  params.max_iterations = o.max_iterations;
  const wc_status status = wc_open_fd(&options, &params, &job, output.fd(), input.fd(),
                                      o.pass_source ? WC_SEAL_PASSPHRASE : WC_SEAL_KEY, bytes.data(), bytes.size());
  if (status != WC_OK) fail(o, status, job);
  output.commit();
  if (inspected) report(o, info.aead, info.chunks, job);
  return 0;
}

}  // namespace

int run_seal(const std::vector<std::string> &args) {
  const SealOptions options = parse_seal_options(args, true);
  if (options.help) {
    std::fputs(kSealUsage, stdout);
    return 0;
  }
  return seal(options);
}

int run_open(const std::vector<std::string> &args) {
  const SealOptions options = parse_seal_options(args, false);
  if (options.help) {
    std::fputs(kOpenUsage, stdout);
    return 0;
  }
  return open(options);
}

}  // namespace warpcrypt::cli
