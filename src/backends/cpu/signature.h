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

// The Montgomery form of an Ed25519 public key; WC_ERR_FORMAT where
// libsodium refuses the point (not on the curve, or of small order).
wc_status ed25519_to_x25519(std::span<uint8_t, 32> out, std::span<const uint8_t, 32> ed25519_public_key);

}  // namespace warpcrypt::cpu
