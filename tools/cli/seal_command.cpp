// `warpcrypt seal` and `warpcrypt open`: files sealed with an AEAD in the
// chunked format of docs/format.md, through the library's wc_seal_fd and
// wc_open_fd, which run the chunks on the engine's workers.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
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
#include "json_report.h"
#include "progress.h"
#include "seal_options.h"
#include "terminal.h"

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
  if (!o.key_file) {
    // Sealing asks twice, as openssl enc does when it encrypts.
    ask_passphrase(o.sealing ? "enter passphrase to seal with:" : "enter passphrase the file was sealed with:",
                   o.sealing, "use -pass or -keyfile", &secret->passphrase);
    return;
  }
  InputFile file(*o.key_file);
  secret->key_file.resize(WC_MAX_KEY_LEN + 1);
  secret->key_file.resize(file.read_up_to(secret->key_file.data(), secret->key_file.size()));
}

void check_key_file_length(const SealOptions &o, const Secret &secret, const wc_aead *aead) {
  if (o.key_file && secret.key_file.size() != wc_aead_key_len(aead)) {
    const std::string held = secret.key_file.size() > WC_MAX_KEY_LEN ? "more" : std::to_string(secret.key_file.size());
    throw CliError("-keyfile: " + std::string(wc_aead_name(aead)) + " needs a key file of exactly " +
                   std::to_string(wc_aead_key_len(aead)) + " bytes, not " + held);
  }
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
    throw CliError(failed + ": " + sentence + (o.key_file ? ": use -pass" : ": use -keyfile"),
                   wc_status_kind_of(status));
  }
  if (wc_status_kind_of(status) == WC_KIND_NO_DEVICE) {
    throw CliError(std::string("cannot run on backend ") + wc_backend_name(o.backend) + ": " + sentence,
                   WC_KIND_NO_DEVICE);
  }
  throw CliError(failed + ": " + sentence, wc_status_kind_of(status));
}

void report(const SealOptions &o, const wc_aead *aead, uint64_t chunks, const wc_job &job) {
  if (o.json) print_json_result(o.sealing ? "seal" : "open", job.bytes_in, job.bytes_out, job);
  if (!o.verbose) return;
  const uint64_t plaintext = o.sealing ? job.bytes_in : job.bytes_out;
  std::fprintf(stderr, "warpcrypt: %s %s: %llu plaintext bytes in %llu chunks, %.3f s, %.2f GB/s\n",
               o.sealing ? "sealed with" : "opened", wc_aead_name(aead), static_cast<unsigned long long>(plaintext),
               static_cast<unsigned long long>(chunks), job.seconds,
               job.seconds > 0 ? static_cast<double>(plaintext) / job.seconds / 1e9 : 0.0);
}

// Checks what can be checked before anything is read or written.
void check_invocation(const SealOptions &o) {
  if (o.pass_source && o.key_file) throw CliError("give one of -pass and -keyfile, not both");
  const bool to_stdout = !o.out_path || *o.out_path == "-";
  check_json_output(o.json, to_stdout, "-out");
  // As age does: sealed bytes on a terminal help no one and may upset it.
  if (o.sealing && to_stdout && !o.force && isatty(STDOUT_FILENO)) {
    throw CliError("refusing to write sealed binary data to a terminal: use -out FILE, a pipe, or -f");
  }
}

// Runs the library's seal or open with the progress bar on the job.
wc_status run_with_progress(const SealOptions &o, const std::function<wc_status(wc_job *)> &run, wc_job *job) {
  ProgressBar progress(progress_wanted(o.progress, o.quiet), o.sealing ? "seal" : "open");
  progress.attach(job);
  const wc_status status = run(job);
  progress.finish();
  return status;
}

// The library's parameters from seal's options, refusing options that the
// chosen secret or KDF would not read.
wc_seal_params seal_params(const SealOptions &o) {
  wc_seal_params params;
  wc_seal_params_init(&params);
  params.aead = o.aead;
  params.chunk_bytes = o.chunk_bytes;
  if (o.digest) params.digest = o.digest->c_str();
  const bool argon2_costs = o.argon2_ops || o.argon2_memory;
  if (o.key_file) {
    if (o.kdf || argon2_costs) throw CliError("--kdf, --kdf-ops and --kdf-memory are for passphrases, not -keyfile");
    params.key_source = WC_SEAL_KEY;
    return params;
  }
  params.key_source = WC_SEAL_PASSPHRASE;
  params.kdf = o.kdf.value_or(o.iterations ? WC_SEAL_PBKDF2 : WC_SEAL_ARGON2ID);
  if (params.kdf == WC_SEAL_PBKDF2) {
    if (argon2_costs) throw CliError("--kdf-ops and --kdf-memory are Argon2id's, not PBKDF2's");
    params.iterations = o.iterations.value_or(params.iterations);
  } else {
    if (o.iterations || o.digest) {
      throw CliError("-iter and -md are PBKDF2's: Argon2id takes --kdf-ops and --kdf-memory");
    }
    params.argon2_ops = o.argon2_ops.value_or(params.argon2_ops);
    params.argon2_memory = o.argon2_memory.value_or(params.argon2_memory);
  }
  return params;
}

// What `open` will need to be told for a file sealed with `params`.
void warn_above_open_limits(const wc_seal_params &params) {
  if (params.key_source != WC_SEAL_PASSPHRASE) return;
  if (params.kdf == WC_SEAL_PBKDF2 && params.iterations > WC_OPEN_DEFAULT_MAX_ITERATIONS) {
    std::fprintf(stderr, "warpcrypt: warning: more than %u PBKDF2 iterations: open this file with --max-iter %u\n",
                 WC_OPEN_DEFAULT_MAX_ITERATIONS, params.iterations);
  }
  if (params.kdf != WC_SEAL_ARGON2ID) return;
  std::string options;
  if (params.argon2_ops > WC_OPEN_DEFAULT_MAX_ARGON2_OPS) {
    options += " --max-kdf-ops " + std::to_string(params.argon2_ops);
  }
  if (params.argon2_memory > WC_OPEN_DEFAULT_MAX_ARGON2_MEMORY) {
    options += " --max-kdf-memory " + std::to_string(params.argon2_memory >> 10) + "K";
  }
  if (!options.empty()) {
    std::fprintf(stderr, "warpcrypt: warning: Argon2id costs above open's default limits: open this file with%s\n",
                 options.c_str());
  }
}

int seal(const SealOptions &o) {
  check_invocation(o);
  InputFile input(o.in_path);
  Secret secret;
  read_secret(o, &secret);
  check_key_file_length(o, secret, o.aead);
  const wc_seal_params params = seal_params(o);

  OutputFile output(o.out_path);
  const wc_options options = library_options(o.backend, o.threads, o.engine);
  wc_job job;
  wc_job_init(&job);
  const std::span<const uint8_t> bytes = secret.bytes();
  const wc_status status = run_with_progress(
      o,
      [&](wc_job *run_job) {
        return wc_seal_fd(&options, &params, run_job, output.fd(), input.fd(), bytes.data(), bytes.size());
      },
      &job);
  if (status != WC_OK) fail(o, status, job);
  output.commit();
  report(o, o.aead, std::max<uint64_t>(1, (job.bytes_in + params.chunk_bytes - 1) / params.chunk_bytes), job);
  warn_above_open_limits(params);
  return 0;
}

int open(const SealOptions &o) {
  check_invocation(o);
  InputFile input(o.in_path);
  const bool ranged = o.offset || o.length;
  if (ranged && !S_ISREG(input.status().st_mode)) throw CliError("--offset and --length need a regular input file");
  // A file's header names its AEAD, and so the key length a key file needs,
  // and which secret to ask for when none is given.
  wc_sealed_info info{};
  const bool inspected = S_ISREG(input.status().st_mode) && wc_sealed_inspect(input.fd(), &info, nullptr) == WC_OK;
  if (inspected && info.key_source == WC_SEAL_KEY && !o.pass_source && !o.key_file) {
    throw CliError("the file was sealed with a key file: use -keyfile");
  }
  Secret secret;
  read_secret(o, &secret);
  if (inspected && info.key_source == WC_SEAL_KEY) check_key_file_length(o, secret, info.aead);

  OutputFile output(o.out_path);
  const wc_options options = library_options(o.backend, o.threads, o.engine);
  wc_job job;
  wc_job_init(&job);
  const std::span<const uint8_t> bytes = secret.bytes();
  wc_open_params params;
  wc_open_params_init(&params);
  params.offset = o.offset.value_or(0);
  params.length = o.length.value_or(UINT64_MAX);
  params.max_iterations = o.max_iterations;
  params.max_argon2_ops = o.max_argon2_ops;
  params.max_argon2_memory = o.max_argon2_memory;
  const wc_status status = run_with_progress(
      o,
      [&](wc_job *run_job) {
        return wc_open_fd(&options, &params, run_job, output.fd(), input.fd(),
                          o.key_file ? WC_SEAL_KEY : WC_SEAL_PASSPHRASE, bytes.data(), bytes.size());
      },
      &job);
  if (status != WC_OK) fail(o, status, job);
  output.commit();
  if (inspected) {
    report(o, info.aead, info.chunks, job);
  } else if (o.json) {
    print_json_result("open", job.bytes_in, job.bytes_out, job);
  }
  return 0;
}

int sealing_or_opening(const SealOptions &o) { return o.sealing ? seal(o) : open(o); }

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
  const char *name = sealing ? "seal" : "open";
  if (sealing) {
    command.set_footer("With neither -pass nor -keyfile, seal asks for a passphrase on the terminal, twice.");
  } else {
    command.set_footer("Every byte written has been authenticated; a failure leaves no output file.");
  }
  command.set_run([options, name] {
    return run_reporting(name, options->json, [&] { return sealing_or_opening(*options); });
  });
}

}  // namespace

void add_seal_command(CommandLine &command_line) { add_seal_or_open(command_line, true); }

void add_open_command(CommandLine &command_line) { add_seal_or_open(command_line, false); }

}  // namespace warpcrypt::cli
