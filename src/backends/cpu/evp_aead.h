// AES-GCM and ChaCha20-Poly1305 through OpenSSL's EVP interface, keyed once
// per key: one message per thread, a batch spread over the thread pool.
#pragma once

#include <memory>
#include <span>

#include "core/aead_backend.h"

namespace warpcrypt::cpu {

// nullptr if OpenSSL lacks the cipher.
std::unique_ptr<AeadCipher> make_evp_aead(const wc_aead &aead, std::span<const uint8_t> key, unsigned threads);

// nullptr if OpenSSL lacks the cipher or refuses the key or nonce.
std::unique_ptr<AeadStream> make_evp_aead_stream(const wc_aead &aead, wc_direction direction,
                                                 std::span<const uint8_t> key, std::span<const uint8_t> nonce);

}  // namespace warpcrypt::cpu
