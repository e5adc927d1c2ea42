#include "key_setup.h"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cli_error.h"
#include "file_io.h"
#include "terminal.h"

namespace warpcrypt::cli {
namespace {

[[noreturn]] void unreadable(const std::string &source_name) {
  // openssl's words for the same failure, so scripts that match them work.
  throw CliError("error reading passphrase from " + source_name + ": it gave no passphrase", WC_KIND_IO);
}

// The first line of `fd` without its LF, read a byte at a time so that
// nothing after it is consumed (stdin may carry the data next). A CR stays:
// openssl keeps it too. No bytes at all, or a read error, fails: the empty
// passphrase must never stand in for a missing one.
void read_first_line(int fd, const std::string &source_name, Passphrase *out) {
  note_file_read(fd);
  bool any = false;
  for (;;) {
    char c = 0;
    const ssize_t n = read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      throw CliError("cannot read passphrase from " + source_name + ": " + std::strerror(error), WC_KIND_IO);
    }
    if (n == 0 && !any) unreadable(source_name);
    if (n == 0 || c == '\n') return;
    any = true;
    out->push_back(c);
  }
}

void copy_text(const char *text, Passphrase *out) {
  for (; *text != '\0'; ++text) out->push_back(*text);
}

}  // namespace

Passphrase::~Passphrase() { wc_memzero(text_.data(), text_.size()); }

void Passphrase::push_back(char c) {
  if (len_ == kCapacity) {
    throw CliError("passphrase longer than " + std::to_string(kCapacity) + " bytes");
  }
  text_[len_++] = c;
}

void read_passphrase(const std::string &source, Passphrase *out) {
  auto starts = [&](const char *prefix) { return source.rfind(prefix, 0) == 0; };
  if (starts("pass:")) {
    copy_text(source.c_str() + 5, out);
  } else if (starts("env:")) {
    const char *value = std::getenv(source.c_str() + 4);
    if (value == nullptr) throw CliError("-pass env: variable '" + source.substr(4) + "' is not set");
    copy_text(value, out);
  } else if (starts("file:")) {
    const std::string path = source.substr(5);
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) throw_system_error("-pass file: cannot open", path);
    try {
      read_first_line(fd, "file '" + path + "'", out);
    } catch (...) {
      close(fd);
      throw;
    }
    close(fd);
  } else if (starts("fd:")) {
    // Digits only: strtol would also take " 3" and "+3".
    const std::string digits = source.substr(3);
    const bool number = !digits.empty() && digits.size() <= 9 &&
                        digits.find_first_not_of("0123456789") == std::string::npos;
    if (!number) throw CliError("-pass fd: expects a descriptor number");
    read_first_line(std::stoi(digits), "fd:" + digits, out);
  } else if (source == "stdin" && isatty(STDIN_FILENO)) {
    ask_passphrase("passphrase:", false, "use another -pass source", out);
  } else if (source == "stdin") {
    read_first_line(STDIN_FILENO, "stdin", out);
  } else {
    throw CliError("-pass expects pass:, env:, file:, fd: or stdin");
  }
}

void read_kfile(const std::string &path, Passphrase *out) {
  // openssl's BIO_gets into a 128-byte buffer: 127 bytes and a NUL.
  constexpr size_t kOpensslLine = 127;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw_system_error("-kfile: cannot open", path);
  Passphrase line;
  try {
    read_first_line(fd, "-kfile '" + path + "'", &line);
  } catch (...) {
    close(fd);
    throw;
  }
  close(fd);
  std::span<const uint8_t> bytes = line.bytes();
  while (!bytes.empty() && (bytes.back() == '\r' || bytes.back() == '\n')) bytes = bytes.first(bytes.size() - 1);
  if (bytes.empty()) throw CliError("-kfile '" + path + "': zero length password");
  if (bytes.size() > kOpensslLine) {
    throw CliError("-kfile '" + path + "': a passphrase longer than 127 bytes, which openssl would cut short (-pass "
                   "file: reads it whole)");
  }
  for (const uint8_t byte : bytes) out->push_back(static_cast<char>(byte));
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

namespace {

// The passphrase from where openssl enc takes it: -k or -kfile (whichever
// came last) before -pass, and the terminal where none is given.
void passphrase_for(const EncOptions &options, Passphrase *out) {
  if (options.k_text) {
    copy_text(options.k_text->value.c_str(), out);
  } else if (options.kfile_path) {
    read_kfile(*options.kfile_path, out);
  } else if (options.pass_source) {
    read_passphrase(options.pass_source->value, out);
  } else {
    std::string name = wc_cipher_name(options.cipher);
    for (char &c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const bool encrypting = options.direction == WC_ENCRYPT;
    ask_passphrase("enter " + name + (encrypting ? " encryption" : " decryption") + " password:", encrypting,
                   "use -pass, -k, -kfile or -K", out);
  }
}

}  // namespace

KeyMaterialBytes resolve_key_material(const EncOptions &options, int input_fd, const std::string &input_name) {
  const wc_cipher *cipher = options.cipher;
  const size_t key_len = wc_cipher_key_len(cipher);
  const size_t iv_len = wc_cipher_iv_len(cipher);
  KeyMaterialBytes m;

  const bool from_passphrase = options.k_text || options.kfile_path || options.pass_source || !options.key_hex;
  if (from_passphrase) {
    Passphrase passphrase;
    passphrase_for(options, &passphrase);
    if (options.use_salt) {
      std::array<uint8_t, WC_SALT_LEN> salt{};
      if (options.salt_hex) {
        decode_exact(salt, WC_SALT_LEN, *options.salt_hex, "-S", "the salt");
      } else if (options.direction == WC_ENCRYPT) {
        check(wc_random_bytes(salt.data(), salt.size()), "cannot generate a salt");
        m.write_salt_header = true;
      } else {
        std::array<uint8_t, 16> header{};
        if (read_up_to(input_fd, header.data(), header.size(), input_name) != header.size() ||
            std::memcmp(header.data(), kSaltMagic, 8) != 0) {
          throw CliError("bad magic number: input has no 'Salted__' header "
                         "(not encrypted with -pass, -k or -kfile, or encrypted with -nosalt or -S)",
                         WC_KIND_AUTH);
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
        passphrase.bytes().data(), passphrase.bytes().size(), salt_bytes, m.salt ? WC_SALT_LEN : 0);
    if (status == WC_ERR_DIGEST) throw CliError("-md: unknown digest '" + options.digest + "'");
    check(status, "key derivation failed");
  }

  // Raw -K and -iv override what the passphrase produced, as in openssl enc.
  if (options.key_hex) decode_exact(m.key, key_len, options.key_hex->value, "-K", "the key");
  if (options.iv_hex) {
    if (iv_len == 0) {
      if (!options.quiet) std::fprintf(stderr, "warpcrypt: warning: -iv ignored, %s takes no IV\n",
                                       wc_cipher_name(cipher));
    } else {
      decode_exact(m.iv, iv_len, options.iv_hex->value, "-iv", "the IV");
    }
  } else if (!from_passphrase && iv_len != 0) {
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
