// The CPU backend: OpenSSL EVP for AES and ChaCha20, libsodium for Salsa20.
// Each call runs on the calling thread; the engine's lanes spread the
// parallel modes over threads.
#pragma once

#include <memory>

#include "core/cipher_backend.h"

namespace warpcrypt::cpu {

wc_status make_cipher(BackendCipher *out, const wc_cipher &cipher, wc_direction direction, const KeyMaterial &key);

// One engine lane on the calling thread, for the parallel modes, with a
// staging buffer of `capacity` bytes. nullptr if OpenSSL refuses the key.
std::unique_ptr<Lane> make_lane(const wc_cipher &cipher, wc_direction direction, const KeyMaterial &key,
                                size_t capacity);

// "OpenSSL 3.0.13 30 Jan 2024": the library loaded, not the headers built against.
const char *openssl_version();

}  // namespace warpcrypt::cpu
