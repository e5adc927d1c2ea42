// `warpcrypt enc`: a drop-in for `openssl enc` on the shared ciphers.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "cli_error.h"
#include "commands.h"
#include "enc_options.h"
#include "file_io.h"
#include "key_setup.h"

namespace warpcrypt::cli {
namespace {

// Large enough that one update keeps every core busy (the CPU backend splits
// it into 64 KiB+ chunks), small enough to stream files of any size.
constexpr size_t kIoChunk = 16 << 20;

struct CtxDeleter {
  void operator()(wc_ctx *ctx) const { wc_ctx_free(ctx); }
};

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

}  // namespace

int run_enc(const std::vector<std::string> &args) {
  const EncOptions options = parse_enc_options(args);
  if (options.help) {
    std::fputs(kEncUsage, stdout);
    return 0;
  }
  if (options.list_ciphers) {
    list_ciphers();
    return 0;
  }
  if (options.cipher == nullptr) throw CliError("no cipher given: use -<cipher> or -c <cipher> (see -list)");

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
  lib_options.padding = options.padding ? 1 : 0;

  wc_ctx *raw_ctx = nullptr;
  const wc_status created =
      wc_ctx_new(&raw_ctx, &lib_options, options.cipher, options.direction, material.key.data(),
                 wc_cipher_key_len(options.cipher), material.iv.data(),
                 wc_cipher_iv_len(options.cipher));
  check(created, std::string("cannot start ") + wc_cipher_name(options.cipher) + " " +
                     direction_word(options.direction) + " on backend " +
                     wc_backend_name(options.backend));
  const std::unique_ptr<wc_ctx, CtxDeleter> ctx(raw_ctx);

  OutputFile output(options.out_path, input);
  uint64_t bytes_in = material.header_bytes_read;
  uint64_t bytes_out = 0;
  if (material.write_salt_header) {
    output.write(reinterpret_cast<const uint8_t *>(kSaltMagic), 8);
    output.write(material.salt->data(), material.salt->size());
    bytes_out += 8 + material.salt->size();
  }

  const auto started = std::chrono::steady_clock::now();
  std::vector<uint8_t> in_buf(kIoChunk);
  std::vector<uint8_t> out_buf(kIoChunk + WC_MAX_BLOCK_LEN);
  const char *failure = options.direction == WC_ENCRYPT ? "encryption failed" : "decryption failed";
  for (;;) {
    const size_t got = input.read_up_to(in_buf.data(), in_buf.size());
    size_t produced = 0;
    check(wc_ctx_update(ctx.get(), out_buf.data(), out_buf.size(), &produced, in_buf.data(), got),
          failure);
    output.write(out_buf.data(), produced);
    bytes_in += got;
    bytes_out += produced;
    if (got < in_buf.size()) break;
  }
  size_t produced = 0;
  check(wc_ctx_final(ctx.get(), out_buf.data(), out_buf.size(), &produced), failure);
  output.write(out_buf.data(), produced);
  bytes_out += produced;
  output.commit();
  wc_memzero(out_buf.data(), out_buf.size());
  wc_memzero(in_buf.data(), in_buf.size());
  warn_about_legacy_kdf(options, material);

  if (options.verbose) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::fprintf(stderr,
                 "warpcrypt: %s %s on %s: %llu bytes read, %llu bytes written, %.3f s, %.2f GB/s\n",
                 wc_cipher_name(options.cipher), direction_word(options.direction),
                 wc_backend_name(wc_ctx_backend(ctx.get())),
                 static_cast<unsigned long long>(bytes_in), static_cast<unsigned long long>(bytes_out),
                 seconds, seconds > 0 ? static_cast<double>(bytes_in) / seconds / 1e9 : 0.0);
  }
  return 0;
}

}  // namespace warpcrypt::cli
