// Key, IV and salt for `warpcrypt enc`, resolved exactly as `openssl enc`
// resolves them: raw -K/-iv, or a passphrase through PBKDF2 or the legacy
// EVP_BytesToKey, with the `Salted__` header.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string>

#include "enc_options.h"
#include "file_io.h"

namespace warpcrypt::cli {

inline constexpr char kSaltMagic[] = "Salted__";

// A passphrase in one fixed buffer, wiped when it goes out of scope. It
// never grows, so no reallocation leaves a freed copy on the heap, and one
// that does not fit is an error, never cut short.
class Passphrase {
 public:
  static constexpr size_t kCapacity = 4096;
  Passphrase() = default;
  Passphrase(const Passphrase &) = delete;
  Passphrase &operator=(const Passphrase &) = delete;
  ~Passphrase();

  // Appends one byte; CliError past kCapacity.
  void push_back(char c);
  std::span<const uint8_t> bytes() const { return {reinterpret_cast<const uint8_t *>(text_.data()), len_}; }
  bool empty() const { return len_ == 0; }

 private:
  std::array<char, kCapacity> text_{};
  size_t len_ = 0;
};

// The -pass argument forms of openssl(1): pass:, env:, file:, fd:, stdin.
// As in openssl, a source that cannot be read or yields no bytes at all
// (a directory, /dev/null, a descriptor at its end) is an error, never the
// empty passphrase; a first line that is empty ("\n") is the empty
// passphrase, which `seal` refuses. Messages name the source, never the
// passphrase. `enc`, `seal` and `open` share it. Standard input that is a
// terminal is read without echo.
void read_passphrase(const std::string &source, Passphrase *out);

// openssl enc's -kfile: the file's first line, with every CR and LF at its
// end removed. openssl reads at most 127 bytes of it and drops the rest in
// silence; a longer line is refused here instead, so that a file encrypted
// with it opens with openssl too.
void read_kfile(const std::string &path, Passphrase *out);

struct KeyMaterialBytes {
  std::array<uint8_t, WC_MAX_KEY_LEN> key{};
  std::array<uint8_t, WC_MAX_IV_LEN> iv{};
  std::optional<std::array<uint8_t, WC_SALT_LEN>> salt;
  bool write_salt_header = false;  // encrypting with a generated salt
  bool used_legacy_kdf = false;    // EVP_BytesToKey: worth a warning once the run succeeds
  size_t header_bytes_read = 0;    // the `Salted__` header consumed from the input
  ~KeyMaterialBytes();
};

// Reads the `Salted__` header from `input` (descriptor `input_fd`, already
// decoded from base64 where -a asks) when decrypting with a passphrase and
// no -S, so it must run before the payload is read. Without -K, -k, -kfile
// or -pass it asks for the passphrase on the terminal, as openssl does.
KeyMaterialBytes resolve_key_material(const EncOptions &options, int input_fd, const std::string &input_name);

// The -p / -P lines: salt=, key=, iv = in uppercase hex.
void print_key_material(const EncOptions &options, const KeyMaterialBytes &material);

}  // namespace warpcrypt::cli
