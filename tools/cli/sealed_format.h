// The sealed-file format of `warpcrypt seal` and `open` (docs/format.md): a
// 48-byte header, then the plaintext in fixed-size chunks, each sealed with
// the AEAD under nonce = prefix || chunk index || last-chunk flag and the
// header as associated data. Everything here is the format itself; reading,
// writing and running the AEAD are the commands' business.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::cli::sealed {

inline constexpr std::array<uint8_t, 8> kMagic = {'W', 'A', 'R', 'P', 'S', 'E', 'A', 'L'};
inline constexpr uint8_t kVersion = 1;
inline constexpr size_t kHeaderLen = 48;
inline constexpr size_t kTagLen = 16;
inline constexpr size_t kSaltLen = 16;
inline constexpr size_t kNoncePrefixLen = 7;
inline constexpr unsigned kMinChunkLog2 = 12;  // 4 KiB
inline constexpr unsigned kMaxChunkLog2 = 30;  // 1 GiB
inline constexpr unsigned kDefaultChunkLog2 = 20;
inline constexpr uint32_t kDefaultIterations = 600000;
// Above this a header's iteration count is taken for damage, not a choice:
// a flipped high bit must not make `open` run PBKDF2 for hours.
inline constexpr uint32_t kMaxIterations = 100000000;
// The chunk index is 32 bits.
inline constexpr uint64_t kMaxChunks = uint64_t{1} << 32;

enum class KeySource : uint8_t { passphrase = 1, key_file = 2 };
enum class Digest : uint8_t { sha256 = 1, sha512 = 2 };

struct Header {
  const wc_aead *aead = nullptr;
  unsigned chunk_log2 = kDefaultChunkLog2;
  KeySource key_source = KeySource::passphrase;
  Digest digest = Digest::sha256;
  uint32_t iterations = 0;  // PBKDF2's; 0 with a key file
  std::array<uint8_t, kSaltLen> salt{};
  std::array<uint8_t, kNoncePrefixLen> nonce_prefix{};

  uint64_t chunk_size() const { return uint64_t{1} << chunk_log2; }
};

// The sealing AEADs and their ids in the header.
const wc_aead *aead_for_id(uint8_t id);
uint8_t id_for_aead(const wc_aead *aead);
// sha256 or sha512; throws CliError for anything else.
Digest parse_digest(const std::string &name);

std::array<uint8_t, kHeaderLen> encode(const Header &header);
// Throws CliError naming the first field that is not valid.
Header decode(std::span<const uint8_t, kHeaderLen> bytes);

// prefix || big-endian 32-bit index || 1 for the last chunk, else 0.
std::array<uint8_t, 12> chunk_nonce(const Header &header, uint64_t index, bool last);

// The file key, wiped on destruction.
struct FileKey {
  std::array<uint8_t, WC_MAX_KEY_LEN> bytes{};
  size_t len = 0;
  ~FileKey();
};

// PBKDF2-HMAC(passphrase, salt, iterations) or HKDF(key file, salt, info),
// with the header's digest, as long as the AEAD's key.
void derive_file_key(const Header &header, std::span<const uint8_t> secret, FileKey *key);

// What a body of `body_len` bytes (the file after the header) holds: every
// chunk but the last is chunk_size + 16 bytes; the last is the rest, at
// least a tag. Throws CliError for a body no sealing could have produced.
struct Layout {
  uint64_t chunks = 0;
  uint64_t last_chunk_len = 0;  // plaintext bytes in the last chunk
  uint64_t plaintext_len = 0;
};
Layout layout_of(const Header &header, uint64_t body_len);

}  // namespace warpcrypt::cli::sealed
