// The C API's Ed25519 signatures: argument checks, then the host-crypto provider.
#include <span>

#include "core/host_crypto.h"
#include "warpcrypt/keys.h"

extern "C" {

wc_status wc_ed25519_public_key(uint8_t public_key[32], const uint8_t seed[32]) {
  if (public_key == nullptr || seed == nullptr) return WC_ERR_INVALID_ARGUMENT;
  return warpcrypt::kHostCrypto.ed25519_public_key(std::span<uint8_t, 32>(public_key, 32),
                                                   std::span<const uint8_t, 32>(seed, 32));
}

wc_status wc_ed25519_sign(uint8_t signature[64], const uint8_t *message, size_t message_len, const uint8_t seed[32]) {
  if (signature == nullptr || seed == nullptr || (message == nullptr && message_len != 0)) {
    return WC_ERR_INVALID_ARGUMENT;
  }
  return warpcrypt::kHostCrypto.ed25519_sign(std::span<uint8_t, 64>(signature, 64), {message, message_len},
                                             std::span<const uint8_t, 32>(seed, 32));
}

wc_status wc_ed25519_verify(const uint8_t signature[64], const uint8_t *message, size_t message_len,
                            const uint8_t public_key[32]) {
  if (signature == nullptr || public_key == nullptr || (message == nullptr && message_len != 0)) {
    return WC_ERR_INVALID_ARGUMENT;
  }
  return warpcrypt::kHostCrypto.ed25519_verify(std::span<const uint8_t, 64>(signature, 64), {message, message_len},
                                               std::span<const uint8_t, 32>(public_key, 32));
}

}  // extern "C"
