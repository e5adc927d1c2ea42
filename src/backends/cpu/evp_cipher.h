// AES and ChaCha20 through OpenSSL's EVP interface.
#pragma once

#include <openssl/evp.h>

#include <memory>

#include "core/cipher_backend.h"

namespace warpcrypt::cpu {

// The cipher OpenSSL knows by `openssl_name` (a static string), fetched once
// per process; nullptr if OpenSSL lacks it.
const EVP_CIPHER *fetch_evp_cipher(const char *openssl_name);

struct CtxDeleter {
  void operator()(EVP_CIPHER_CTX *ctx) const { EVP_CIPHER_CTX_free(ctx); }
};
using CtxPtr = std::unique_ptr<EVP_CIPHER_CTX, CtxDeleter>;

// EVP_CipherUpdate over any length: it counts in int, so it is fed at most
// 1 GiB at a time. A null `out` passes associated data to an AEAD.
bool update_all(EVP_CIPHER_CTX *ctx, const uint8_t *in, uint8_t *out, size_t len);

// Runs each call on the calling thread; nullptr if OpenSSL lacks the cipher.
std::unique_ptr<RandomAccessCipher> make_evp_random_access(const wc_cipher &cipher,
                                                           wc_direction direction,
                                                           const KeyMaterial &key);

// Returns nullptr if OpenSSL refuses the cipher or the key.
std::unique_ptr<SequentialCipher> make_evp_sequential(const wc_cipher &cipher,
                                                      wc_direction direction,
                                                      const KeyMaterial &key);

}  // namespace warpcrypt::cpu
