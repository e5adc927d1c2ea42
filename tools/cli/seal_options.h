// The options of `warpcrypt seal` and `warpcrypt open`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "arguments.h"
#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::cli {

struct SealOptions {
  bool sealing = true;
  const wc_aead *aead = wc_aead_by_name("aes-256-gcm");
  std::optional<SecretText> pass_source;
  std::optional<std::string> key_file;
  // A passphrase's KDF: --kdf, else PBKDF2 when only -iter is given (as
  // -iter implies -pbkdf2 for openssl enc), else Argon2id.
  std::optional<wc_seal_kdf> kdf;
  std::optional<uint32_t> iterations;
  std::optional<std::string> digest;
  std::optional<uint32_t> argon2_ops;
  std::optional<uint64_t> argon2_memory;
  uint64_t chunk_bytes = WC_SEAL_DEFAULT_CHUNK_BYTES;
  std::optional<std::string> in_path;
  std::optional<std::string> out_path;
  std::optional<uint64_t> offset;
  std::optional<uint64_t> length;
  uint32_t max_iterations = WC_OPEN_DEFAULT_MAX_ITERATIONS;
  uint32_t max_argon2_ops = WC_OPEN_DEFAULT_MAX_ARGON2_OPS;
  uint64_t max_argon2_memory = WC_OPEN_DEFAULT_MAX_ARGON2_MEMORY;
  wc_backend backend = WC_BACKEND_AUTO;
  unsigned threads = 0;
  EngineFlags engine;  // --window is its chunk size
  bool verbose = false;
  bool quiet = false;
  bool progress = false;  // --progress: even when stderr is no terminal
  bool force = false;     // seal -f: binary output to a terminal
  bool json = false;
};

class Command;

// Declares seal's options (options.sealing) or open's on `command`, each
// filling `options` as it is parsed; `options` must outlive the parse.
void add_seal_options(Command &command, SealOptions &options);

}  // namespace warpcrypt::cli
