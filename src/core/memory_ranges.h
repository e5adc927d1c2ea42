// Which caller buffers may share memory, and which runs of them touch. A
// call may work in place (its output is its input, byte for byte), but no
// output may overlap anything else it reads or writes: the result would
// depend on the order the lanes or the GPU's threads happen to run in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "warpcrypt/warpcrypt.h"

namespace warpcrypt {

// out == in is in-place work and allowed; any other overlap is not.
inline bool overlaps_partially(const uint8_t *out, size_t out_len, const uint8_t *in, size_t in_len) {
  if (out == in || out == nullptr || in == nullptr) return false;
  const auto o = reinterpret_cast<uintptr_t>(out);
  const auto i = reinterpret_cast<uintptr_t>(in);
  return o < i + in_len && i < o + out_len;
}

// The first pair of an AEAD call's buffers that overlap where they must not:
// every output, every tag being sealed and every verdict (`verified`: one
// int32 per message, or null) is disjoint from every other byte the call
// touches, except that a message may be worked in place. O(n log n) in the
// messages.
std::optional<wc_aead_overlap> find_batch_overlap(std::span<const wc_aead_message> messages, size_t tag_len,
                                                  bool seal, const int32_t *verified);

// Equal-length pieces at a fixed stride: piece i is [start + i * stride,
// start + i * stride + len).
struct StridedRange {
  uintptr_t start;
  uint64_t stride;
  uint64_t len;
};

// Whether piece i of `a` and piece j of `b` share a byte for some i, j below
// `count`: exact where the strides are equal (or count is 1), otherwise
// whether the spans from the first piece to the last meet. Every span must
// fit in the address space (the caller checks).
bool strided_ranges_overlap(const StridedRange &a, const StridedRange &b, uint64_t count);

// The overlap rule of find_batch_overlap for a strided batch
// (wc_aead_strided); `verified` is null when sealing.
bool strided_batch_overlaps(const wc_aead_strided &batch, size_t tag_len, bool seal, const int32_t *verified);

// Bytes [begin, end) of host memory.
struct ByteRange {
  const uint8_t *begin;
  const uint8_t *end;
};

// `ranges` in address order, merged where they touch or overlap, empty ones
// dropped: a window of back-to-back chunks is one range. The GPU AEAD
// copies each merged range in one transfer, and the engine asks once per
// merged range whether it is page-locked.
std::vector<ByteRange> merged_ranges(std::vector<ByteRange> ranges);

}  // namespace warpcrypt
