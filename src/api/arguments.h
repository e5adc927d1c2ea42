// Argument helpers shared by the api layer's source files.
#pragma once

#include <cstdint>

#include "core/backend.h"
#include "core/cipher_registry.h"

namespace warpcrypt {

inline wc_options options_or_default(const wc_options *options) {
  wc_options resolved;
  wc_options_init(&resolved);
  return options != nullptr ? *options : resolved;
}

// The cipher a call runs: as named, or its unpadded twin where the caller's
// options turn padding off (openssl enc -nopad). Every api entry resolves it
// first, so below the api the output's layout follows from the cipher alone.
inline const wc_cipher *layout_cipher(const wc_options *options, const wc_cipher *cipher) {
  if (cipher == nullptr || options == nullptr || options->padding != 0) return cipher;
  return &unpadded(*cipher);
}

inline KeyMaterial key_material(const uint8_t *key, size_t key_len, const uint8_t *iv, size_t iv_len) {
  return KeyMaterial{{key, key_len}, {iv, iv_len}};
}

}  // namespace warpcrypt
