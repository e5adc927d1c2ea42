// The options of `warpcrypt enc`, spelled as `openssl enc` spells them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "arguments.h"
#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::cli {

enum class KeyPrint { none, print_and_run, print_and_exit };  // -p, -P

// openssl enc's buffer size, which -v reports; -bufsize changes only that.
inline constexpr uint64_t kOpensslBufferSize = 8192;

struct EncOptions {
  const wc_cipher *cipher = nullptr;
  bool no_cipher = false;  // -none: without a cipher, copy (or only base64 with -a)
  wc_direction direction = WC_ENCRYPT;
  std::optional<SecretText> key_hex;      // -K
  std::optional<SecretText> iv_hex;       // -iv
  std::optional<std::string> salt_hex;    // -S
  std::optional<SecretText> pass_source;  // -pass
  std::optional<SecretText> k_text;       // -k; it and -kfile go before -pass, as in openssl
  std::optional<std::string> kfile_path;  // -kfile
  bool base64 = false;                    // -a, -base64
  bool base64_one_line = false;           // -A
  uint64_t bufsize = kOpensslBufferSize;  // -bufsize
  std::optional<std::string> in_path;
  std::optional<std::string> out_path;
  bool padding = true;
  bool use_salt = true;
  bool pbkdf2 = false;
  uint32_t iterations = 0;  // 0: the KDF's default
  std::string digest = "sha256";
  KeyPrint key_print = KeyPrint::none;
  wc_backend backend = WC_BACKEND_AUTO;
  unsigned threads = 0;
  EngineFlags engine;
  std::optional<uint64_t> range_offset;  // --offset: random-access decryption
  std::optional<uint64_t> range_length;  // --length
  bool progress = false;                 // --progress, even when stderr is not a terminal
  bool stats = false;
  bool json = false;
  bool verbose = false;
  bool quiet = false;
  bool list_ciphers = false;
};

class Command;

// Declares enc's options on `command`, each filling `options` as it is
// parsed; `options` must outlive the parse.
void add_enc_options(Command &command, EncOptions &options);

}  // namespace warpcrypt::cli
