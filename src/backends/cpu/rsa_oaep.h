// RSA-OAEP through OpenSSL, for age's ssh-rsa stanzas: keys arrive as the
// big-endian integers an SSH key file holds, and live in OpenSSL only for
// one call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/host_crypto.h"

namespace warpcrypt::cpu {

wc_status rsa_oaep_encrypt(std::vector<uint8_t> *out, const RsaPublicKey &key, const char *digest,
                           std::span<const uint8_t> label, std::span<const uint8_t> message);
wc_status rsa_oaep_decrypt(std::span<uint8_t> out, size_t *out_len, const RsaPrivateKey &key, const char *digest,
                           std::span<const uint8_t> label, std::span<const uint8_t> ciphertext);

}  // namespace warpcrypt::cpu
