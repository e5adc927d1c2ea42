// How the CPU AEAD cuts one long message into segments for several workers
// (evp_aead.cpp decides when; each construction decides the granularity).
#pragma once

#include <cstddef>
#include <cstdint>

namespace warpcrypt::cpu {

// The one message a segmented AEAD seals or opens, as its workers share it.
struct SegmentedMessage {
  const uint8_t *nonce;
  const uint8_t *aad;
  size_t aad_len;
  const uint8_t *in;
  uint8_t *out;
  size_t len;
};

// A message's text cut into `count` segments of `segment_len` bytes, a
// multiple of kGranularity so every segment but the last ends on a whole
// step of the construction's block code; the last holds the rest.
template <size_t kGranularity>
struct MessageSegments {
  size_t segment_len;
  size_t count;

  MessageSegments(size_t len, unsigned workers) {
    const size_t share = (len + workers - 1) / workers;
    segment_len = share < kGranularity ? kGranularity : (share + kGranularity - 1) / kGranularity * kGranularity;
    count = (len + segment_len - 1) / segment_len;
  }
  size_t offset(size_t j) const { return j * segment_len; }
  size_t length(size_t j, size_t len) const { return j + 1 < count ? segment_len : len - offset(j); }
};

}  // namespace warpcrypt::cpu
