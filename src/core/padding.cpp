#include "core/padding.h"

namespace warpcrypt {

void pkcs7_pad(uint8_t block[16], size_t filled) {
  const auto pad = static_cast<uint8_t>(16 - filled);
  for (size_t i = filled; i < 16; ++i) block[i] = pad;
}

bool pkcs7_unpad(const uint8_t block[16], size_t *data_len) {
  const unsigned pad = block[15];
  // bad stays 0 only if 1 <= pad <= 16 and the last `pad` bytes all equal pad.
  unsigned bad = ((pad - 1u) >> 8) | ((16u - pad) >> 8);  // pad == 0 or pad > 16
  for (unsigned i = 0; i < 16; ++i) {
    // in_pad is all-ones when position i lies inside the claimed padding.
    const unsigned in_pad = 0u - (((15u - i) - pad) >> 31 & 1u);
    bad |= in_pad & (block[i] ^ pad);
  }
  const bool ok = bad == 0;
  *data_len = ok ? 16 - pad : 0;
  return ok;
}

}  // namespace warpcrypt
