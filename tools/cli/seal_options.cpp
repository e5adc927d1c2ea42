#include "seal_options.h"

#include <string>

#include "cli_error.h"
#include "command_line.h"

namespace warpcrypt::cli {
namespace {

const std::string &parse_digest(const std::string &name) {
  if (name != "sha256" && name != "sha512") throw CliError("-md: seal takes sha256 or sha512, not '" + name + "'");
  return name;
}

std::string mebibytes(uint64_t bytes) { return std::to_string(bytes >> 20) + "M"; }

wc_seal_kdf parse_kdf(const std::string &name) {
  if (name == "argon2id") return WC_SEAL_ARGON2ID;
  if (name == "pbkdf2") return WC_SEAL_PBKDF2;
  throw CliError("--kdf: argon2id or pbkdf2, not '" + name + "'");
}

const wc_aead *parse_aead(const std::string &name) {
  const wc_aead *aead = wc_aead_by_name(name.c_str());
  if (aead == nullptr) throw CliError("unknown AEAD '" + name + "' (aes-128/192/256-gcm, chacha20-poly1305)");
  return aead;
}

}  // namespace

void add_seal_options(Command &command, SealOptions &o) {
  if (o.sealing) {
    command.add_option("-c,-cipher", "NAME",
                       "the AEAD, also written -NAME: aes-128-gcm, aes-192-gcm, aes-256-gcm "
                       "(the default), chacha20-poly1305",
                       [&o](const std::string &name) { o.aead = parse_aead(name); });
    command.add_value_words("-cipher", "AEAD",
                            [](const std::string &name) { return wc_aead_by_name(name.c_str()) != nullptr; });
  }
  command.add_secret_option("-pass", "SOURCE",
                            o.sealing ? "passphrase: pass:TEXT, env:VAR, file:PATH, fd:N or stdin"
                                      : "the passphrase the file was sealed with (as seal takes it)",
                            [&o](const SecretText &source) { o.pass_source.emplace(source); });
  // -kfile is the spelling of earlier versions, kept for their scripts; it
  // is not openssl enc's -kfile, a passphrase file (-pass file:PATH here).
  command.add_option("-keyfile,-kfile", "PATH",
                     o.sealing ? "a key file instead: exactly the AEAD's key length of random bytes"
                               : "the key file the file was sealed with",
                     [&o](const std::string &path) { o.key_file = path; });
  command.hide_unknown_arguments_starting_with("-kfile");
  if (o.sealing) {
    command.add_option("--kdf", "argon2id|pbkdf2",
                       "how -pass becomes the key: argon2id (the default; memory-hard) or pbkdf2",
                       [&o](const std::string &name) { o.kdf = parse_kdf(name); });
    command.add_option("--kdf-ops", "N",
                       "Argon2id's passes over its memory (default " + std::to_string(WC_SEAL_DEFAULT_ARGON2_OPS) + ")",
                       [&o](const std::string &text) {
                         o.argon2_ops = static_cast<uint32_t>(parse_unsigned(text, "--kdf-ops", UINT32_MAX));
                       });
    command.add_option("--kdf-memory", "SIZE",
                       "Argon2id's memory, whole KiB from 8K (default " +
                           mebibytes(WC_SEAL_DEFAULT_ARGON2_MEMORY) + ")",
                       [&o](const std::string &text) { o.argon2_memory = parse_size(text, "--kdf-memory"); });
    command.add_option("-iter", "N", "PBKDF2 iterations for -pass (default 600000); implies --kdf pbkdf2",
                       [&o](const std::string &text) {
                         o.iterations = static_cast<uint32_t>(parse_unsigned(text, "-iter", WC_SEAL_MAX_ITERATIONS));
                         if (o.iterations == 0) throw CliError("-iter must be at least 1");
                       });
    command.add_option("-md", "sha256|sha512", "PBKDF2's digest, or a key file's HKDF's (default sha256)",
                       [&o](const std::string &name) { o.digest = parse_digest(name); });
    command.add_option("--chunk-size", "SIZE", "plaintext per chunk, a power of two from 4K to 1G (default 1M)",
                       [&o](const std::string &text) { o.chunk_bytes = parse_size(text, "--chunk-size"); });
  }
  command.add_option("-in", "FILE", "input (default stdin)", [&o](const std::string &path) { o.in_path = path; });
  command.add_option("-out", "FILE", "output (default stdout); a file is written atomically",
                     [&o](const std::string &path) { o.out_path = path; });
  if (!o.sealing) {
    command.add_option("--offset", "SIZE",
                       "plaintext from byte SIZE on only, reading and authenticating only the "
                       "chunks that hold it (a regular input file); sizes take K, M and G",
                       [&o](const std::string &text) { o.offset = parse_size(text, "--offset"); });
    command.add_option("--length", "SIZE", "only SIZE bytes of plaintext (from --offset)",
                       [&o](const std::string &text) { o.length = parse_size(text, "--length"); });
    command.add_option("--max-iter", "N",
                       "open a -pass file whose header asks for up to N PBKDF2 iterations "
                       "(default 2000000; the header is checked only after)",
                       [&o](const std::string &text) {
                         o.max_iterations =
                             static_cast<uint32_t>(parse_unsigned(text, "--max-iter", WC_SEAL_MAX_ITERATIONS));
                         if (o.max_iterations == 0) throw CliError("--max-iter must be at least 1");
                       });
    command.add_option("--max-kdf-ops", "N",
                       "open a -pass file whose header asks for up to N Argon2id passes (default " +
                           std::to_string(WC_OPEN_DEFAULT_MAX_ARGON2_OPS) + ")",
                       [&o](const std::string &text) {
                         o.max_argon2_ops = static_cast<uint32_t>(parse_unsigned(text, "--max-kdf-ops", UINT32_MAX));
                         if (o.max_argon2_ops == 0) throw CliError("--max-kdf-ops must be at least 1");
                       });
    command.add_option("--max-kdf-memory", "SIZE",
                       "open a -pass file whose header asks for up to SIZE of Argon2id memory (default " +
                           mebibytes(WC_OPEN_DEFAULT_MAX_ARGON2_MEMORY) + ")",
                       [&o](const std::string &text) {
                         o.max_argon2_memory = parse_size(text, "--max-kdf-memory");
                         if (o.max_argon2_memory < WC_SEAL_MIN_ARGON2_MEMORY) {
                           throw CliError("--max-kdf-memory must be at least 8K, Argon2id's least");
                         }
                       });
  }
  command.add_option("--backend", "NAME",
                     std::string("where the chunks are ") + (o.sealing ? "sealed" : "opened") +
                         ": auto (the default: the CPU), cpu, gpu or hybrid",
                     [&o](const std::string &name) { o.backend = parse_backend(name); });
  command.add_option("--threads", "N", "CPU workers (default: all cores)",
                     [&o](const std::string &text) { o.threads = parse_thread_count(text); });
  add_window_option(command, o.engine);
  add_device_options(command, o.engine);
  if (o.sealing) {
    command.add_flag("-f,--force", "write the sealed bytes to standard output even when it is a terminal",
                     [&o] { o.force = true; });
  }
  command.add_flag("--progress", "a progress bar on stderr (default: when it is a terminal)",
                   [&o] { o.progress = true; });
  command.add_flag("--json", "one line of JSON on stdout at the end: bytes, seconds, backends, or the failure "
                   "(needs -out)",
                   [&o] { o.json = true; });
  command.add_flag("-v", "verbose: a summary line", [&o] { o.verbose = true; });
  command.add_flag("-q", "quiet: no summary line, no progress bar", [&o] {
    o.verbose = false;
    o.quiet = true;
  });
}

}  // namespace warpcrypt::cli
