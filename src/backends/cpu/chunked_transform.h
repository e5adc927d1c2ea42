// Splits one random-access transform into chunks for the thread pool.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "core/backend.h"

namespace warpcrypt::cpu {

// Transforms one contiguous piece; the same shape as
// RandomAccessCipher::transform_at.
using SegmentFunction = std::function<wc_status(uint64_t position, const uint8_t chain[16],
                                                const uint8_t *in, uint8_t *out, size_t len)>;

// Runs `segment` over [position, position + len) in chunks on up to `threads`
// threads (0: every core). Chunk boundaries are multiples of 64 bytes from
// `position`, which keeps every mode's blocks whole; each chunk gets its
// chain bytes from piece_chains.
wc_status run_chunked(const wc_cipher &cipher, unsigned threads, uint64_t position,
                      const uint8_t chain[16], const uint8_t *in, uint8_t *out, size_t len,
                      const SegmentFunction &segment);

}  // namespace warpcrypt::cpu
