#include "key_setup.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "cli_error.h"

namespace warpcrypt::cli {
namespace {

std::string first_line_of_fd(int fd, const std::string &source_name) {
  std::string line;
  char c = 0;
  for (;;) {
    const ssize_t n = read(fd, &c, 1);
    if (n == 0 || (n == 1 && c == '\n')) break;
    if (n < 0) throw CliError("cannot read passphrase from " + source_name);
    line.push_back(c);
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

}  // namespace

Passphrase::~Passphrase() { wc_memzero(text.data(), text.size()); }

void read_passphrase(const std::string &source, Passphrase *out) {
  auto starts = [&](const char *prefix) { return source.rfind(prefix, 0) == 0; };
  if (starts("pass:")) {
    out->text = source.substr(5);
  } else if (starts("env:")) {
    const char *value = std::getenv(source.c_str() + 4);
    if (value == nullptr) throw CliError("-pass env: variable '" + source.substr(4) + "' is not set");
    out->text = value;
  } else if (starts("file:")) {
    const std::string path = source.substr(5);
    std::ifstream file(path);
    if (!file) throw CliError("-pass file: cannot open '" + path + "'");
    std::getline(file, out->text);
    if (!out->text.empty() && out->text.back() == '\r') out->text.pop_back();
  } else if (starts("fd:")) {
    char *end = nullptr;
    const long fd = std::strtol(source.c_str() + 3, &end, 10);
    if (*end != '\0' || fd < 0 || fd > INT32_MAX) throw CliError("-pass fd: expects a descriptor number");
    out->text = first_line_of_fd(static_cast<int>(fd), "fd:" + source.substr(3));
  } else if (source == "stdin") {
    out->text = first_line_of_fd(STDIN_FILENO, "stdin");
  } else {
    throw CliError("-pass expects pass:, env:, file:, fd: or stdin");
  }
}

namespace {

// Decodes a hex flag of an exact length; the message names the flag, never
// its value.
template <size_t N>
void decode_exact(std::array<uint8_t, N> &out, size_t expected, const std::string &hex,
                  const char *flag, const char *what) {
  size_t decoded = 0;
  const wc_status status = wc_hex_decode(out.data(), out.size(), &decoded, hex.data(), hex.size());
  if (status == WC_ERR_INVALID_ARGUMENT) {
    throw CliError(std::string(flag) + ": not a valid hex string (digits 0-9, a-f, even count)");
  }
  if (status != WC_OK || decoded != expected) {
    throw CliError(std::string(flag) + ": " + what + " must be exactly " + std::to_string(expected) +
                   " bytes (" + std::to_string(2 * expected) + " hex digits), got " +
                   std::to_string(hex.size()) + " hex digits");
  }
}

void print_hex_line(const char *label, const uint8_t *bytes, size_t len) {
  std::printf("%s", label);
  for (size_t i = 0; i < len; ++i) std::printf("%02X", bytes[i]);
  std::printf("\n");
}

}  // namespace

KeyMaterialBytes::~KeyMaterialBytes() {
  wc_memzero(key.data(), key.size());
  wc_memzero(iv.data(), iv.size());
}

KeyMaterialBytes resolve_key_material(const EncOptions &options, InputFile &input) {
  const wc_cipher *cipher = options.cipher;
  const size_t key_len = wc_cipher_key_len(cipher);
  const size_t iv_len = wc_cipher_iv_len(cipher);
  KeyMaterialBytes m;

  if (options.pass_source) {
    Passphrase passphrase;
    read_passphrase(*options.pass_source, &passphrase);
    if (options.use_salt) {
      std::array<uint8_t, WC_SALT_LEN> salt{};
      if (options.salt_hex) {
        decode_exact(salt, WC_SALT_LEN, *options.salt_hex, "-S", "the salt");
      } else if (options.direction == WC_ENCRYPT) {
        check(wc_random_bytes(salt.data(), salt.size()), "cannot generate a salt");
        m.write_salt_header = true;
      } else {
        std::array<uint8_t, 16> header{};
        if (input.read_up_to(header.data(), header.size()) != header.size() ||
            std::memcmp(header.data(), kSaltMagic, 8) != 0) {
          throw CliError("bad magic number: input has no 'Salted__' header "
                         "(not encrypted with -pass, or encrypted with -nosalt or -S)");
        }
        std::memcpy(salt.data(), header.data() + 8, WC_SALT_LEN);
        m.header_bytes_read = header.size();
      }
      m.salt = salt;
    }
    const wc_kdf kdf = options.pbkdf2 ? WC_KDF_PBKDF2 : WC_KDF_LEGACY;
    const uint32_t iterations =
        options.iterations != 0 ? options.iterations : (options.pbkdf2 ? WC_PBKDF2_DEFAULT_ITERATIONS : 1);
    m.used_legacy_kdf = !options.pbkdf2;
    const uint8_t *salt_bytes = m.salt ? m.salt->data() : nullptr;
    const wc_status status = wc_derive_key_iv(
        cipher, m.key.data(), key_len, m.iv.data(), iv_len, kdf, options.digest.c_str(), iterations,
        reinterpret_cast<const uint8_t *>(passphrase.text.data()), passphrase.text.size(),
        salt_bytes, m.salt ? WC_SALT_LEN : 0);
    if (status == WC_ERR_DIGEST) throw CliError("-md: unknown digest '" + options.digest + "'");
    check(status, "key derivation failed");
  } else if (!options.key_hex) {
    throw CliError("no key given: use -K <hex> or -pass <source>");
  }

  // Raw -K and -iv override what the passphrase produced, as in openssl enc.
  if (options.key_hex) decode_exact(m.key, key_len, *options.key_hex, "-K", "the key");
  if (options.iv_hex) {
    if (iv_len == 0) {
      if (!options.quiet) std::fprintf(stderr, "warpcrypt: warning: -iv ignored, %s takes no IV\n",
                                       wc_cipher_name(cipher));
    } else {
      decode_exact(m.iv, iv_len, *options.iv_hex, "-iv", "the IV");
    }
  } else if (!options.pass_source && iv_len != 0) {
    throw CliError(std::string("missing IV: ") + wc_cipher_name(cipher) + " needs -iv with " +
                   std::to_string(2 * iv_len) + " hex digits");
  }
  return m;
}

void print_key_material(const EncOptions &options, const KeyMaterialBytes &material) {
  if (material.salt) print_hex_line("salt=", material.salt->data(), material.salt->size());
  print_hex_line("key=", material.key.data(), wc_cipher_key_len(options.cipher));
  const size_t iv_len = wc_cipher_iv_len(options.cipher);
  if (iv_len != 0) print_hex_line("iv =", material.iv.data(), iv_len);
  std::fflush(stdout);
}

}  // namespace warpcrypt::cli
