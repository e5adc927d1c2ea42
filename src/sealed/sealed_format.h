// The sealed-file format (docs/format.md): a 48-byte header, then the
// plaintext in fixed-size chunks, each sealed with the AEAD under nonce =
// prefix || chunk index || last-chunk flag and the header as associated
// data. Everything here is the format itself; running it over descriptors
// is sealed_job's business.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/host_crypto.h"
#include "engine/aead_stream.h"
#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::sealed {

inline constexpr std::array<uint8_t, 8> kMagic = {'W', 'A', 'R', 'P', 'S', 'E', 'A', 'L'};
inline constexpr uint8_t kVersion = 1;
inline constexpr size_t kHeaderLen = WC_SEAL_HEADER_LEN;
inline constexpr size_t kTagLen = WC_SEAL_TAG_LEN;
inline constexpr size_t kSaltLen = 16;
inline constexpr size_t kNoncePrefixLen = 7;
inline constexpr unsigned kMinChunkLog2 = 12;  // 4 KiB
inline constexpr unsigned kMaxChunkLog2 = 30;  // 1 GiB
static_assert(uint64_t{1} << kMinChunkLog2 == WC_SEAL_MIN_CHUNK_BYTES &&
                  uint64_t{1} << kMaxChunkLog2 == WC_SEAL_MAX_CHUNK_BYTES,
              "the header's chunk limits are the format's");
// A flipped high bit must not make `open` run PBKDF2 for hours.
inline constexpr uint32_t kMaxIterations = WC_SEAL_MAX_ITERATIONS;
// Argon2id's memory is stored in 1 KiB blocks; libsodium runs one lane.
inline constexpr uint64_t kArgon2BlockLen = 1024;
inline constexpr uint32_t kMinArgon2MemoryKib = WC_SEAL_MIN_ARGON2_MEMORY / kArgon2BlockLen;
inline constexpr uint8_t kArgon2Lanes = 1;
static_assert(WC_SEAL_MAX_ARGON2_MEMORY / kArgon2BlockLen == UINT32_MAX, "the header's memory field is 32 bits");
static_assert(kTagLen == engine::kStreamTagLen, "the chunks are the engine's STREAM");

// Argon2id has no digest of the header's choosing: its byte is zero.
enum class Digest : uint8_t { none = 0, sha256 = 1, sha512 = 2 };

struct Header {
  const wc_aead *aead = nullptr;
  unsigned chunk_log2 = 20;
  wc_seal_key_source key_source = WC_SEAL_PASSPHRASE;
  wc_seal_kdf kdf = WC_SEAL_ARGON2ID;  // a passphrase's; unused with a key
  Digest digest = Digest::none;
  uint32_t iterations = 0;   // PBKDF2's; 0 otherwise
  uint32_t argon2_ops = 0;   // Argon2id's passes and memory in KiB; 0 otherwise
  uint32_t argon2_memory_kib = 0;
  std::array<uint8_t, kSaltLen> salt{};
  std::array<uint8_t, kNoncePrefixLen> nonce_prefix{};

  uint64_t chunk_size() const { return uint64_t{1} << chunk_log2; }
  uint64_t sealed_chunk_size() const { return chunk_size() + kTagLen; }
};

// A new file's header from the caller's parameters, with a fresh salt and
// nonce prefix from crypto's random source. WC_ERR_INVALID_ARGUMENT (and
// *detail) for a parameter the format cannot hold.
wc_status make_header(const HostCrypto &crypto, const wc_seal_params &params, Header *header, const char **detail);

std::array<uint8_t, kHeaderLen> encode(const Header &header);
// WC_ERR_FORMAT with *detail naming the first field that is not valid.
wc_status decode(std::span<const uint8_t, kHeaderLen> bytes, Header *header, const char **detail);

// The file's chunks as a STREAM: nonce = prefix || big-endian 32-bit index
// || 1 for the last chunk, else 0, and the header bytes as every chunk's
// associated data (`header_bytes` must outlive the shape).
engine::StreamShape stream_shape(const Header &header, std::span<const uint8_t, kHeaderLen> header_bytes);

// "sha256", "sha512", or nullptr for none.
const char *digest_name(Digest digest);

// WC_ERR_FORMAT (and *detail) when the header asks a reader for more KDF
// work than `params` allow: the header is not authenticated until the KDF
// has run, so its cost is bounded first.
wc_status check_kdf_cost(const Header &header, const wc_open_params &params, const char **detail);

// The file key, wiped on destruction.
struct FileKey {
  std::array<uint8_t, WC_MAX_KEY_LEN> bytes{};
  size_t len = 0;
  ~FileKey();
};

// Argon2id(passphrase, salt, ops, memory), PBKDF2-HMAC(passphrase, salt,
// iterations) or HKDF(key, salt, info), with the header's digest, as long as
// the AEAD's key. A key of the wrong length is WC_ERR_KEY_LEN, and *detail
// says the length the AEAD takes.
wc_status derive_file_key(const HostCrypto &crypto, const Header &header, std::span<const uint8_t> secret,
                          FileKey *key, const char **detail);

// What a body of `body_len` bytes (the file after the header) holds;
// WC_ERR_FORMAT (and *detail) for a body no sealing could have produced.
using Layout = engine::StreamLayout;
wc_status layout_of(const Header &header, uint64_t body_len, Layout *layout, const char **detail);

}  // namespace warpcrypt::sealed
