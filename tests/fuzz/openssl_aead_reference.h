// The AEAD fuzz targets' independent reference: OpenSSL's EVP sealing of one
// message, with a 12-byte nonce, as the ciphertext followed by its tag.
#pragma once

#include <openssl/evp.h>

#include <cstdint>
#include <span>
#include <vector>

#include "fuzz_support.h"

namespace warpcrypt::fuzz {

// `cipher_name` as EVP_CIPHER_fetch knows it ("AES-256-GCM",
// "ChaCha20-Poly1305").
inline std::vector<uint8_t> openssl_aead_seal(const char *cipher_name, const uint8_t *key, const uint8_t *nonce,
                                              std::span<const uint8_t> aad, std::span<const uint8_t> plaintext,
                                              size_t tag_len) {
  EVP_CIPHER *cipher = EVP_CIPHER_fetch(nullptr, cipher_name, nullptr);
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
  std::vector<uint8_t> out(plaintext.size() + tag_len);
  int n = 0;
  require(cipher != nullptr && ctx != nullptr && EVP_EncryptInit_ex2(ctx, cipher, key, nonce, nullptr) == 1 &&
              EVP_EncryptUpdate(ctx, nullptr, &n, aad.data(), static_cast<int>(aad.size())) == 1 &&
              EVP_EncryptUpdate(ctx, out.data(), &n, plaintext.data(), static_cast<int>(plaintext.size())) == 1 &&
              EVP_EncryptFinal_ex(ctx, out.data(), &n) == 1 &&
              EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, static_cast<int>(tag_len),
                                  out.data() + plaintext.size()) == 1,
          "OpenSSL sealing failed");
  EVP_CIPHER_CTX_free(ctx);
  EVP_CIPHER_free(cipher);
  return out;
}

}  // namespace warpcrypt::fuzz
