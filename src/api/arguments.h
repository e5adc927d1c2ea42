// Argument helpers shared by the api layer's source files.
#pragma once

#include <cstdint>

#include "core/cipher_backend.h"

namespace warpcrypt {

inline wc_options options_or_default(const wc_options *options) {
  wc_options resolved;
  wc_options_init(&resolved);
  return options != nullptr ? *options : resolved;
}

inline KeyMaterial key_material(const uint8_t *key, size_t key_len, const uint8_t *iv, size_t iv_len) {
  return KeyMaterial{{key, key_len}, {iv, iv_len}};
}

}  // namespace warpcrypt
