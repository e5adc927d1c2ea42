// age v1 files (C2SP age.md, "age-encryption.org/v1") as pure functions of
// bytes: the textual header with its recipient stanzas and MAC, the keys
// derived from the file key, and the payload's STREAM shape. Every rule the
// specification gives readers is checked here, and a refusal names it.
// Running the payload over descriptors is age_job's business, the recipient
// types age_recipients'.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/host_crypto.h"
#include "engine/aead_stream.h"
#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::age {

inline constexpr std::string_view kVersionLine = "age-encryption.org/v1";
inline constexpr size_t kFileKeyLen = 16;
inline constexpr size_t kNonceLen = 16;
inline constexpr size_t kMacLen = 32;
inline constexpr uint64_t kChunkSize = 64 * 1024;
inline constexpr size_t kColumnsPerLine = 64;
// The longest header this library reads, and so the longest it writes:
// whatever warpcrypt writes, it reads back. 16 MiB holds about 170,000
// X25519 recipients (98 bytes each), far past what age or rage users write,
// while a reader still never buffers more than this much of a header it
// has not authenticated. age and rage set no limit of their own.
inline constexpr size_t kMaxHeaderLen = size_t{16} << 20;
inline constexpr const char *kHeaderTooLong = "age header too long: over 16 MiB without its closing line";
inline constexpr const char *kTooManyRecipients =
    "too many recipients: their age header would be over 16 MiB, more than a reader accepts";

// The file key, wiped on destruction.
struct FileKey {
  std::array<uint8_t, kFileKeyLen> bytes{};
  FileKey() = default;
  FileKey(const FileKey &) = delete;
  FileKey &operator=(const FileKey &) = delete;
  ~FileKey();
};

// A 32-byte key derived from the file key (the header's MAC key, the
// payload key), wiped on destruction.
struct DerivedKey {
  std::array<uint8_t, 32> bytes{};
  DerivedKey() = default;
  DerivedKey(const DerivedKey &) = delete;
  DerivedKey &operator=(const DerivedKey &) = delete;
  ~DerivedKey();
};

// A label or a line of the format as the bytes the primitives take.
inline std::span<const uint8_t> bytes_of(std::string_view text) {
  return {reinterpret_cast<const uint8_t *>(text.data()), text.size()};
}

// ---- base64 ---------------------------------------------------------------

// Standard base64 (RFC 4648 section 4) without padding, as the header uses
// it.
std::string encode_base64(std::span<const uint8_t> bytes);
// Decodes canonical unpadded base64: no padding, no whitespace, and the
// unused bits of the last character zero, so every byte string has exactly
// one encoding. nullopt otherwise.
std::optional<std::vector<uint8_t>> decode_base64(std::string_view text);

// ---- header ---------------------------------------------------------------

// One recipient stanza: "-> type arg...", then the body in base64.
struct Stanza {
  std::string type;
  std::vector<std::string> args;  // after the type
  std::vector<uint8_t> body;
};

struct Header {
  std::vector<Stanza> stanzas;
  std::array<uint8_t, kMacLen> mac{};
  // The header's bytes the MAC covers: from the version line through "---".
  std::string mac_input;
  // The whole header's length, through the MAC line's newline.
  size_t encoded_len = 0;
};

// The header for `stanzas`, its MAC under `file_key`, as it is written.
// WC_ERR_INVALID_ARGUMENT (and *detail) when it would be longer than
// kMaxHeaderLen, which no reader of this library would accept.
wc_status encode_header(const HostCrypto &crypto, const std::vector<Stanza> &stanzas, const FileKey &file_key,
                        std::string *out, const char **detail);

// Parses a header from the start of `bytes`. WC_OK with *header when it is
// complete and valid; WC_ERR_FORMAT with *detail naming the broken rule;
// *need_more set (and WC_ERR_FORMAT) when `bytes` ends before the header
// does and more input could complete it. The MAC is not checked here: that
// needs the file key (check_mac).
wc_status parse_header(std::string_view bytes, Header *header, bool *need_more, const char **detail);

// The MAC the header should carry under `file_key`.
wc_status header_mac(const HostCrypto &crypto, std::string_view mac_input, const FileKey &file_key,
                     std::array<uint8_t, kMacLen> *mac);
// WC_ERR_AUTH (and *detail) unless the header's MAC is the file key's.
wc_status check_mac(const HostCrypto &crypto, const Header &header, const FileKey &file_key, const char **detail);

// ---- payload --------------------------------------------------------------

// HKDF-SHA-256(file key, salt = nonce, info = "payload").
wc_status payload_key(const HostCrypto &crypto, const FileKey &file_key, std::span<const uint8_t, kNonceLen> nonce,
                      DerivedKey *key);

// The payload as the engine's STREAM: ChaCha20-Poly1305, 64 KiB chunks,
// nonce = 11-byte big-endian counter || last flag, no associated data,
// starting at `body_offset` of the file.
engine::StreamShape payload_shape(uint64_t body_offset);

// What a payload of `payload_len` bytes (the nonce and every chunk, all that
// follows the header) holds if it decrypts: its chunks and plaintext
// length. Only one plaintext length fits a payload length: every chunk but
// the last holds 64 KiB, and the last holds 1 byte to 64 KiB (0 only where
// it is the only chunk). WC_ERR_FORMAT (and *detail) for a length no
// payload has.
struct PayloadSize {
  uint64_t chunks = 0;
  uint64_t plaintext = 0;
  uint64_t overhead = 0;  // the nonce and one tag per chunk
};
wc_status payload_size(uint64_t payload_len, PayloadSize *size, const char **detail);
// The payload length of `plaintext_len` bytes: payload_size's inverse.
uint64_t payload_len(uint64_t plaintext_len);

// What a stanza of any native type takes in a header at most, its lines
// and newlines: the largest, an mlkem768p256tag stanza's, is about 1.6 KiB.
inline constexpr uint64_t kStanzaRoom = 4096;
// The most a file of `plaintext_len` bytes to `recipients` native
// recipients takes, armored or not; UINT64_MAX where that overflows.
uint64_t encrypted_len_bound(uint64_t recipients, uint64_t plaintext_len, bool armor);

// Whether the recipient stanza types of a file say its file key is safe
// from a quantum computer: "no" where any stanza is a classical key's
// (X25519, SSH keys, P-256 tags), "yes" where every stanza is a
// post-quantum key's or a passphrase's, "unknown" where the types say
// neither (plugins, types this library does not know), as age-inspect 1.3
// reports it.
enum class PostQuantum { unknown, no, yes };
PostQuantum postquantum_of(const std::vector<Stanza> &stanzas);

}  // namespace warpcrypt::age
