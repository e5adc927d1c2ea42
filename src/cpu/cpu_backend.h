// The CPU backend: OpenSSL EVP for AES and ChaCha20, libsodium for Salsa20,
// the parallel modes spread over a thread pool.
#pragma once

#include "core/backend.h"

namespace warpcrypt::cpu {

wc_status make_cipher(BackendCipher *out, const wc_options &options, const wc_cipher &cipher,
                      wc_direction direction, const KeyMaterial &key);

}  // namespace warpcrypt::cpu
