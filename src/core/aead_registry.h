// The AEAD table and the limits that follow from each construction. Kept
// apart from the cipher table: `enc` lists and runs those, while an AEAD has
// a tag, associated data and its own nonce rules.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "warpcrypt/warpcrypt.h"

namespace warpcrypt {

enum class AeadKind : uint8_t {
  gcm,                // AES in GCM, any key size
  chacha20_poly1305,  // RFC 8439
};

}  // namespace warpcrypt

// The public opaque type, defined here so the table can be static.
struct wc_aead {
  const char *name;
  warpcrypt::AeadKind kind;
  uint8_t key_len;
  const char *openssl_name;  // for EVP_CIPHER_fetch
};

namespace warpcrypt {

// The nonce length both constructions are built around (and the only one
// ChaCha20-Poly1305 takes).
inline constexpr size_t kAeadNonceLen = 12;

const wc_aead *find_aead(const char *name);

// Every AEAD, in the order the CLI lists them.
std::span<const wc_aead> all_aeads();

inline bool aead_nonce_len_valid(const wc_aead &aead, size_t nonce_len) {
  if (aead.kind == AeadKind::chacha20_poly1305) return nonce_len == kAeadNonceLen;
  return nonce_len >= 1 && nonce_len <= WC_AEAD_MAX_NONCE_LEN;
}

inline bool aead_tag_len_valid(size_t tag_len) {
  return tag_len >= WC_AEAD_MIN_TAG_LEN && tag_len <= WC_AEAD_MAX_TAG_LEN;
}

// GCM counts blocks in 32 bits and spends two counter values on the tag mask
// and the first block (SP 800-38D: at most 2^39 - 256 bits); ChaCha20 in RFC
// 8439 has a 32-bit block counter of which block 0 makes the Poly1305 key.
inline uint64_t aead_max_message_len(const wc_aead &aead) {
  return aead.kind == AeadKind::gcm ? (uint64_t{1} << 36) - 32 : ((uint64_t{1} << 32) - 1) * 64;
}

// WC_ERR_KEY_LEN for a wrong length, WC_ERR_INVALID_ARGUMENT for no key.
wc_status check_aead_key(const wc_aead &aead, const uint8_t *key, size_t key_len);

// Everything about one message but the key: nonce length (WC_ERR_IV_LEN),
// tag length, missing pointers and partly overlapping buffers
// (WC_ERR_INVALID_ARGUMENT), and the message length (WC_ERR_RANGE).
wc_status check_aead_message(const wc_aead &aead, const wc_aead_message &message, size_t tag_len);

// Everything about a strided batch but the key (wc_aead_strided): missing
// pointers, strides, the address space, the message count and overlaps
// (WC_ERR_INVALID_ARGUMENT), the message length (WC_ERR_RANGE).
wc_status check_strided_batch(const wc_aead &aead, const wc_aead_strided &batch, size_t tag_len, bool seal,
                              const int32_t *verified);

}  // namespace warpcrypt
