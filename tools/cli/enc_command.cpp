// `warpcrypt enc`: a drop-in for `openssl enc` on the shared ciphers.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli_error.h"
#include "command_line.h"
#include "commands.h"
#include "enc_options.h"
#include "file_io.h"
#include "key_setup.h"
#include "progress.h"

namespace warpcrypt::cli {
namespace {

// Random-access decryption reads and decrypts at most this much at a time.
constexpr uint64_t kRangePiece = uint64_t{64} << 20;

// Printed after success only, so a failing run keeps to its one error line.
void warn_about_legacy_kdf(const EncOptions &options, const KeyMaterialBytes &material) {
  if (material.used_legacy_kdf && !options.quiet) {
    std::fprintf(stderr, "warpcrypt: warning: deprecated key derivation used; -pbkdf2 or -iter would be better\n");
  }
}

void list_ciphers() {
  std::printf("Supported ciphers:\n");
  for (size_t i = 0; i < wc_cipher_count(); ++i) {
    std::printf("-%-24s%s", wc_cipher_name(wc_cipher_at(i)), i % 3 == 2 ? "\n" : "");
  }
  if (wc_cipher_count() % 3 != 0) std::printf("\n");
}

const char *direction_word(wc_direction direction) {
  return direction == WC_ENCRYPT ? "encryption" : "decryption";
}

// `enc -d --offset N --length M`: only the ciphertext blocks the range needs
// are read, a piece at a time.
void decrypt_range(const EncOptions &options, const wc_options &lib_options, const KeyMaterialBytes &material,
                   InputFile &input) {
  if (options.direction != WC_DECRYPT) throw CliError("--offset and --length work only when decrypting (-d)");
  if (!wc_cipher_has_random_access(options.cipher)) {
    throw CliError(std::string(wc_cipher_name(options.cipher)) + " has no random access: its keystream is sequential");
  }
  if (!S_ISREG(input.status().st_mode)) throw CliError("--offset and --length need a regular input file");
  const off_t header = lseek(input.fd(), 0, SEEK_CUR);
  if (header < 0) throw_system_error("cannot seek input", input.display_name());
  const uint64_t ciphertext_len = static_cast<uint64_t>(input.status().st_size - header);
  const uint64_t first = options.range_offset.value_or(0);
  const uint64_t length = options.range_length.value_or(UINT64_MAX - first);
  const uint64_t end = first + std::min(length, UINT64_MAX - first);

  OutputFile output(options.out_path, input);
  std::vector<uint8_t> window;
  std::vector<uint8_t> plain;
  const size_t key_len = wc_cipher_key_len(options.cipher);
  const size_t iv_len = wc_cipher_iv_len(options.cipher);
  for (uint64_t at = first; at < end;) {
    const uint64_t want = std::min(kRangePiece, end - at);
    uint64_t window_offset = 0;
    uint64_t window_len = 0;
    check(wc_range_window(options.cipher, &window_offset, &window_len, ciphertext_len, at, want),
          "bad range");
    if (window_len == 0) break;  // past the end of the ciphertext
    window.resize(window_len);
    const ssize_t got = pread(input.fd(), window.data(), window_len, static_cast<off_t>(header + window_offset));
    if (got < 0) throw_system_error("cannot read input", input.display_name());
    if (static_cast<uint64_t>(got) != window_len) throw CliError("input changed size while it was read");
    plain.resize(want);
    size_t produced = 0;
    check(wc_decrypt_range(&lib_options, options.cipher, plain.data(), plain.size(), &produced, material.key.data(),
                           key_len, material.iv.data(), iv_len, window.data(), window.size(), ciphertext_len, at,
                           want),
          "decryption failed");
    output.write(plain.data(), produced);
    wc_memzero(plain.data(), produced);
    if (produced < want) break;  // the plaintext ended inside this piece
    at += want;
  }
  output.commit();
}

int run_enc(EncOptions options) {
  if (options.list_ciphers) {
    list_ciphers();
    return 0;
  }
  if (options.cipher == nullptr) throw CliError("no cipher given: use -<cipher> or -c <cipher> (see -list)");
  // -nopad runs the cipher's unpadded twin, wherever it stood on the line.
  if (!options.padding) options.cipher = wc_cipher_unpadded(options.cipher);

  // Open the input first: an unreadable input must not leave an output file.
  InputFile input(options.in_path);
  const KeyMaterialBytes material = resolve_key_material(options, input);
  if (options.key_print != KeyPrint::none) print_key_material(options, material);
  if (options.key_print == KeyPrint::print_and_exit) {
    warn_about_legacy_kdf(options, material);
    return 0;
  }

  wc_options lib_options;
  wc_options_init(&lib_options);
  lib_options.backend = options.backend;
  lib_options.threads = options.threads;
  apply_engine_flags(options.engine, &lib_options);

  if (options.range_offset || options.range_length) {
    decrypt_range(options, lib_options, material, input);
    warn_about_legacy_kdf(options, material);
    return 0;
  }

  OutputFile output(options.out_path, input);
  if (material.write_salt_header) {
    output.write(reinterpret_cast<const uint8_t *>(kSaltMagic), 8);
    output.write(material.salt->data(), material.salt->size());
  }

  wc_job job;
  wc_job_init(&job);
  ProgressBar progress(!options.quiet && (options.progress || isatty(STDERR_FILENO)));
  progress.attach(&job);
  const auto run = options.direction == WC_ENCRYPT ? wc_encrypt_fd : wc_decrypt_fd;
  const wc_status status = run(&lib_options, options.cipher, &job, output.fd(), input.fd(), material.key.data(),
                               wc_cipher_key_len(options.cipher), material.iv.data(), wc_cipher_iv_len(options.cipher));
  progress.finish();
  if (status != WC_OK) {
    const bool startup = status == WC_ERR_NO_DEVICE || status == WC_ERR_BACKEND_UNAVAILABLE;
    const std::string what = startup ? std::string("cannot run ") + wc_cipher_name(options.cipher) + " " +
                                           direction_word(options.direction) + " on backend " +
                                           wc_backend_name(options.backend)
                             : options.direction == WC_ENCRYPT ? "encryption failed"
                                                               : "decryption failed";
    throw CliError(what + ": " + job.message);
  }
  output.commit();
  warn_about_legacy_kdf(options, material);

  if (options.verbose || options.stats) {
    job.bytes_in += material.header_bytes_read;
    if (material.write_salt_header) job.bytes_out += 8 + material.salt->size();
    const std::string what = std::string(wc_cipher_name(options.cipher)) + " " + direction_word(options.direction);
    print_job_stats(what.c_str(), job);
  }
  return 0;
}

}  // namespace

void add_enc_command(CommandLine &command_line) {
  // The command keeps the options alive, through its run function, for as
  // long as the option functions that fill them.
  auto options = std::make_shared<EncOptions>();
  Command &command = command_line.add_command("enc", "encrypt or decrypt, a drop-in for `openssl enc`");
  add_enc_options(command, *options);
  command.set_run([options] { return run_enc(*options); });
}

}  // namespace warpcrypt::cli
