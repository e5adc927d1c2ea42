// Argument helpers shared by the C API's source files.
#pragma once

#include <cstdint>

#include "core/backend.h"

namespace warpcrypt {

inline wc_options options_or_default(const wc_options *options) {
  wc_options resolved;
  wc_options_init(&resolved);
  return options != nullptr ? *options : resolved;
}

// out == in is in-place work and allowed; any other overlap is not.
inline bool overlaps_partially(const uint8_t *out, size_t out_len, const uint8_t *in, size_t in_len) {
  if (out == in || out == nullptr || in == nullptr) return false;
  const auto o = reinterpret_cast<uintptr_t>(out);
  const auto i = reinterpret_cast<uintptr_t>(in);
  return o < i + in_len && i < o + out_len;
}

inline KeyMaterial key_material(const uint8_t *key, size_t key_len, const uint8_t *iv, size_t iv_len) {
  return KeyMaterial{{key, key_len}, {iv, iv_len}};
}

}  // namespace warpcrypt
