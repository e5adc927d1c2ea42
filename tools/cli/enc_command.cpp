// `warpcrypt enc`: a drop-in for `openssl enc` on the shared ciphers.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base64_pipe.h"
#include "cli_error.h"
#include "command_line.h"
#include "commands.h"
#include "enc_options.h"
#include "file_io.h"
#include "json_report.h"
#include "key_setup.h"
#include "progress.h"

namespace warpcrypt::cli {
namespace {

// Random-access decryption reads and decrypts at most this much at a time.
constexpr uint64_t kRangePiece = uint64_t{64} << 20;
// -none copies this much at a time.
constexpr size_t kCopyPiece = size_t{1} << 20;

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

  OutputFile output(options.out_path);
  std::vector<uint8_t> window;
  std::vector<uint8_t> plain;
  const size_t key_len = wc_cipher_key_len(options.cipher);
  const size_t iv_len = wc_cipher_iv_len(options.cipher);
  for (uint64_t at = first; at < end;) {
    const uint64_t want = std::min(kRangePiece, end - at);
    uint64_t window_offset = 0;
    uint64_t window_len = 0;
    check(wc_range_window(options.cipher, &window_offset, &window_len, ciphertext_len, at, want), "bad range");
    if (window_len == 0) break;  // past the end of the ciphertext
    window.resize(window_len);
    const ssize_t got = pread(input.fd(), window.data(), window_len, static_cast<off_t>(header + window_offset));
    if (got < 0) throw_system_error("cannot read input", input.display_name());
    if (static_cast<uint64_t>(got) != window_len) {
      throw CliError("input changed size while it was read", WC_KIND_IO);
    }
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

bool writes_stdout(const std::optional<std::string> &path) { return !path || *path == "-"; }

// openssl's -v lines, on stderr.
void print_byte_counts(uint64_t read, uint64_t written) {
  std::fprintf(stderr, "bytes read   : %8llu\nbytes written: %8llu\n", static_cast<unsigned long long>(read),
               static_cast<unsigned long long>(written));
}

// -none, or -a with no cipher: the input copied, through base64 with -a.
int copy_through(const EncOptions &options, InputFile &input) {
  OutputFile output(options.out_path);
  std::optional<Base64Pipe> armor;
  if (options.base64) {
    armor.emplace(options.direction == WC_ENCRYPT ? Base64Pipe::Direction::encode : Base64Pipe::Direction::decode,
                  options.direction == WC_ENCRYPT ? output.fd() : input.fd(), options.base64_one_line,
                  options.direction == WC_ENCRYPT ? output.display_name() : input.display_name());
  }
  const int source = armor && options.direction == WC_DECRYPT ? armor->fd() : input.fd();
  const int sink = armor && options.direction == WC_ENCRYPT ? armor->fd() : output.fd();
  wc_job job;
  wc_job_init(&job);
  const auto started = std::chrono::steady_clock::now();
  std::vector<uint8_t> buffer(kCopyPiece);
  for (size_t got; (got = read_up_to(source, buffer.data(), buffer.size(), input.display_name())) != 0;) {
    write_all(sink, buffer.data(), got, output.display_name());
    job.bytes_in += got;
    if (got < buffer.size()) break;
  }
  const uint64_t text = armor ? armor->finish() : job.bytes_in;
  output.commit();
  job.bytes_out = job.bytes_in;
  job.cpu_bytes = job.bytes_in;
  job.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const uint64_t read = options.base64 && options.direction == WC_DECRYPT ? text : job.bytes_in;
  const uint64_t written = options.base64 && options.direction == WC_ENCRYPT ? text : job.bytes_in;
  if (options.verbose) print_byte_counts(read, written);
  if (options.json) print_json_result("enc", read, written, job);
  return 0;
}

int run_enc(EncOptions options) {
  if (options.list_ciphers) {
    list_ciphers();
    return 0;
  }
  if (options.cipher == nullptr && !options.no_cipher && !options.base64) {
    throw CliError("no cipher given: use -<cipher> or -c <cipher> (see -list), or -none to copy the input");
  }
  check_json_output(options.json, writes_stdout(options.out_path), "-out");
  // -nopad runs the cipher's unpadded twin, wherever it stood on the line.
  if (!options.padding && options.cipher != nullptr) options.cipher = wc_cipher_unpadded(options.cipher);
  if (options.verbose) std::fprintf(stderr, "bufsize=%llu\n", static_cast<unsigned long long>(options.bufsize));

  // Open the input first: an unreadable input must not leave an output file.
  InputFile input(options.in_path);
  if (options.cipher == nullptr) return copy_through(options, input);
  const bool encrypting = options.direction == WC_ENCRYPT;
  std::optional<Base64Pipe> decoder;
  if (options.base64 && !encrypting) {
    if (options.range_offset || options.range_length) {
      throw CliError("--offset and --length read binary ciphertext: decode the base64 (-a) first");
    }
    decoder.emplace(Base64Pipe::Direction::decode, input.fd(), options.base64_one_line, input.display_name());
  }
  const int source = decoder ? decoder->fd() : input.fd();
  const KeyMaterialBytes material = [&] {
    try {
      return resolve_key_material(options, source, input.display_name());
    } catch (const CliError &) {
      // A salt header cut short by text that is not base64 is that text's
      // failure: finish() throws it, as after a failed decryption below.
      if (decoder) decoder->finish();
      throw;
    }
  }();
  if (options.key_print != KeyPrint::none) print_key_material(options, material);
  if (options.key_print == KeyPrint::print_and_exit) {
    warn_about_legacy_kdf(options, material);
    return 0;
  }

  const wc_options lib_options = library_options(options.backend, options.threads, options.engine);

  if (options.range_offset || options.range_length) {
    decrypt_range(options, lib_options, material, input);
    warn_about_legacy_kdf(options, material);
    return 0;
  }

  OutputFile output(options.out_path);
  std::optional<Base64Pipe> encoder;
  if (options.base64 && encrypting) {
    encoder.emplace(Base64Pipe::Direction::encode, output.fd(), options.base64_one_line, output.display_name());
  }
  const int sink = encoder ? encoder->fd() : output.fd();
  size_t header_bytes_written = 0;
  if (material.write_salt_header) {
    write_all(sink, reinterpret_cast<const uint8_t *>(kSaltMagic), 8, output.display_name());
    write_all(sink, material.salt->data(), material.salt->size(), output.display_name());
    header_bytes_written = 8 + material.salt->size();
  }

  wc_job job;
  wc_job_init(&job);
  ProgressBar progress(progress_wanted(options.progress, options.quiet),
                       std::string(wc_cipher_name(options.cipher)) + (encrypting ? " enc" : " dec"));
  progress.attach(&job);
  const auto run = encrypting ? wc_encrypt_fd : wc_decrypt_fd;
  const wc_status status = run(&lib_options, options.cipher, &job, sink, source, material.key.data(),
                               wc_cipher_key_len(options.cipher), material.iv.data(), wc_cipher_iv_len(options.cipher));
  progress.finish();
  // The text's own failure (not base64) explains a failed decryption best.
  const uint64_t text_bytes = decoder ? decoder->finish() : encoder ? encoder->finish() : 0;
  if (status != WC_OK) {
    const bool startup = wc_status_kind_of(status) == WC_KIND_NO_DEVICE;
    const std::string what = startup ? std::string("cannot run ") + wc_cipher_name(options.cipher) + " " +
                                           direction_word(options.direction) + " on backend " +
                                           wc_backend_name(options.backend)
                             : encrypting ? "encryption failed"
                                          : "decryption failed";
    throw CliError(what + ": " + job.message, wc_status_kind_of(status));
  }
  output.commit();
  warn_about_legacy_kdf(options, material);

  const uint64_t read = decoder ? text_bytes : job.bytes_in + material.header_bytes_read;
  const uint64_t written = encoder ? text_bytes : job.bytes_out + header_bytes_written;
  if (options.verbose) print_byte_counts(read, written);
  if (options.verbose || options.stats) {
    wc_job counted = job;
    counted.bytes_in = read;
    counted.bytes_out = written;
    const std::string what = std::string(wc_cipher_name(options.cipher)) + " " + direction_word(options.direction);
    print_job_stats(what.c_str(), counted);
  }
  if (options.json) print_json_result("enc", read, written, job);
  return 0;
}

}  // namespace

void add_enc_command(CommandLine &command_line) {
  // The command keeps the options alive, through its run function, for as
  // long as the option functions that fill them.
  auto options = std::make_shared<EncOptions>();
  Command &command = command_line.add_command("enc", "encrypt or decrypt, a drop-in for `openssl enc`");
  add_enc_options(command, *options);
  command.set_run([options] { return run_reporting("enc", options->json, [&] { return run_enc(*options); }); });
}

}  // namespace warpcrypt::cli
