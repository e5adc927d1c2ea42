// ChaCha20-Poly1305 (RFC 8439) for one long message cut into segments that
// run on several workers. OpenSSL's EVP runs a message on one core and keeps
// Poly1305's state to itself, so this file hashes with its own Poly1305 and
// takes only the ChaCha20 keystream from OpenSSL. The CPU AEAD
// (evp_aead.cpp) decides which messages come here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "core/secret_bytes.h"
#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::cpu {

inline constexpr size_t kPoly1305KeyLen = 32;
inline constexpr size_t kPoly1305TagLen = 16;

// Poly1305 (RFC 8439 §2.5) of `message` under a one-time key (r || s), in
// constant time for the key and the message bytes.
void poly1305(const uint8_t key[kPoly1305KeyLen], const uint8_t *message, size_t len, uint8_t tag[kPoly1305TagLen]);

// A ChaCha20-Poly1305 key (32 bytes), wiped on destruction. Const calls may
// run from many threads.
class ChaCha20Poly1305Key {
 public:
  // nullptr unless the key is 32 bytes.
  static std::unique_ptr<ChaCha20Poly1305Key> make(std::span<const uint8_t> key);

  // As the API checked it: `nonce` is 12 bytes, len at most
  // aead_max_message_len (so the 32-bit block counter never wraps), out
  // equals in or does not overlap it, tag_len at most 16. The message is cut
  // into up to `workers` segments of whole 64-byte ChaCha20 blocks (the last
  // takes the rest) that run on the thread pool: each runs ChaCha20 from its
  // own block counter and hashes its ciphertext from a zero accumulator, and
  // the accumulators are combined with powers of r. The output equals RFC
  // 8439's for the whole message. WC_ERR_CRYPTO_LIBRARY if OpenSSL fails.
  // Not from inside a ThreadPool::parallel_for task.
  wc_status seal_segmented(const uint8_t *nonce, const uint8_t *aad, size_t aad_len, const uint8_t *in, uint8_t *out,
                           size_t len, uint8_t *tag, size_t tag_len, unsigned workers) const;

  // Decrypts into `out` and compares the tag in constant time once every
  // segment is done: WC_OK, or WC_ERR_AUTH with `out` holding the
  // unauthenticated plaintext, which the caller zeroes.
  wc_status open_segmented(const uint8_t *nonce, const uint8_t *aad, size_t aad_len, const uint8_t *in, uint8_t *out,
                           size_t len, const uint8_t *tag, size_t tag_len, unsigned workers) const;

 private:
  explicit ChaCha20Poly1305Key(std::span<const uint8_t> key) : key_(key) {}

  SecretBytes key_;
};

}  // namespace warpcrypt::cpu
