// Random-access decryption: which ciphertext bytes a plaintext range needs,
// and decrypting just those.
#pragma once

#include <cstdint>

#include "core/cipher_backend.h"

namespace warpcrypt {

struct RangePlan {
  uint64_t window_begin = 0;  // first ciphertext byte needed (chain bytes included)
  uint64_t window_end = 0;
  uint64_t decrypt_begin = 0;  // first ciphertext byte transformed, segment-aligned
  uint64_t range_begin = 0;    // requested plaintext range, clipped to the ciphertext
  uint64_t range_end = 0;
  bool checks_padding = false;  // the window runs to the end and the last block is unpadded
};

wc_status plan_range(RangePlan *plan, const wc_cipher &cipher, uint64_t ciphertext_len, uint64_t offset,
                     uint64_t length);

// `window` holds the ciphertext bytes [plan.window_begin, plan.window_end).
wc_status decrypt_planned_range(RandomAccessCipher &backend, const wc_cipher &cipher,
                                const RangePlan &plan, uint8_t *out, size_t out_cap,
                                size_t *out_len, const uint8_t *iv, const uint8_t *window);

}  // namespace warpcrypt
