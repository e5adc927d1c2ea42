// Ed25519 signatures (RFC 8032) through libsodium, for the formats that sign
// their headers (CryptoTensors' safetensors files).
#pragma once

#include <cstdint>
#include <span>

#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::cpu {

wc_status ed25519_public_key(std::span<uint8_t, 32> public_key, std::span<const uint8_t, 32> seed);
wc_status ed25519_sign(std::span<uint8_t, 64> signature, std::span<const uint8_t> message,
                       std::span<const uint8_t, 32> seed);
// WC_ERR_AUTH unless `signature` is a valid, canonical signature of `message`
// under `public_key`.
wc_status ed25519_verify(std::span<const uint8_t, 64> signature, std::span<const uint8_t> message,
                         std::span<const uint8_t, 32> public_key);

}  // namespace warpcrypt::cpu
