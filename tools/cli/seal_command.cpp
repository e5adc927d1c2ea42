// `warpcrypt seal` and `warpcrypt open`: files sealed with an AEAD in the
// chunked format of docs/format.md, through the library's wc_seal_fd and
// wc_open_fd, which run the chunks on the engine's workers.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "arguments.h"
#include "cli_error.h"
#include "command_line.h"
#include "commands.h"
#include "file_io.h"
#include "key_setup.h"
#include "seal_options.h"

namespace warpcrypt::cli {
namespace {

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

// The library's sentence for a failed job (wc_job.message), with what only
// the CLI knows: which command failed, the option to use instead, the
// backend asked for.
[[noreturn]] void fail(const SealOptions &o, wc_status status, const wc_job &job) {
  const std::string sentence = job.message;
  const std::string failed = o.sealing ? "sealing failed" : "opening failed";
  if (status == WC_ERR_INVALID_ARGUMENT && job.detail != nullptr && !o.sealing) {
    // The only sentence open gives for a bad argument: the file was sealed
    // from the other kind of secret.
    throw CliError(failed + ": " + sentence + (o.pass_source ? ": use -kfile" : ": use -pass"));
  }
  if (status == WC_ERR_NO_DEVICE || status == WC_ERR_BACKEND_UNAVAILABLE) {
    throw CliError(std::string("cannot run on backend ") + wc_backend_name(o.backend) + ": " + sentence);
  }
  throw CliError(failed + ": " + sentence);
}

void report(const SealOptions &o, const wc_aead *aead, uint64_t chunks, const wc_job &job) {
  if (!o.verbose) return;
  const uint64_t plaintext = o.sealing ? job.bytes_in : job.bytes_out;
  std::fprintf(stderr, "warpcrypt: %s %s: %llu plaintext bytes in %llu chunks, %.3f s, %.2f GB/s\n",
               o.sealing ? "sealed with" : "opened", wc_aead_name(aead), static_cast<unsigned long long>(plaintext),
               static_cast<unsigned long long>(chunks), job.seconds,
               job.seconds > 0 ? static_cast<double>(plaintext) / job.seconds / 1e9 : 0.0);
}

void check_key_source(const SealOptions &o) {
  if (o.pass_source.has_value() == o.key_file.has_value()) throw CliError("give exactly one of -pass and -kfile");
}

int seal(const SealOptions &o) {
  check_key_source(o);
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
  check_key_source(o);
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

// Adds seal (`sealing`) or open, whose options differ only in part.
void add_seal_or_open(CommandLine &command_line, bool sealing) {
  // The command keeps the options alive, through its run function, for as
  // long as the option functions that fill them.
  auto options = std::make_shared<SealOptions>();
  options->sealing = sealing;
  Command &command =
      sealing ? command_line.add_command("seal", "encrypt and authenticate a file with an AEAD")
              : command_line.add_command("open", "check and decrypt a sealed file, or any byte range of it");
  add_seal_options(command, *options);
  if (sealing) {
    command.set_run([options] { return seal(*options); });
  } else {
    command.set_footer("Every byte written has been authenticated; a failure leaves no output file.");
    command.set_run([options] { return open(*options); });
  }
}

}  // namespace

void add_seal_command(CommandLine &command_line) { add_seal_or_open(command_line, true); }

void add_open_command(CommandLine &command_line) { add_seal_or_open(command_line, false); }

}  // namespace warpcrypt::cli
