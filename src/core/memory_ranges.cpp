#include "core/memory_ranges.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <memory_resource>
#include <vector>

#include "core/aead_registry.h"

namespace warpcrypt {
namespace {

struct Range {
  uintptr_t start, end;  // [start, end); empty where the message has no such buffer
  size_t message;
  wc_aead_buffer buffer;
};

// The buffers a call writes and those it only reads.
constexpr wc_aead_buffer kWrittenWhenSealing[] = {WC_AEAD_BUFFER_OUT, WC_AEAD_BUFFER_TAG, WC_AEAD_BUFFER_VERIFIED};
constexpr wc_aead_buffer kReadWhenSealing[] = {WC_AEAD_BUFFER_IN, WC_AEAD_BUFFER_NONCE, WC_AEAD_BUFFER_AAD};
constexpr wc_aead_buffer kWrittenWhenOpening[] = {WC_AEAD_BUFFER_OUT, WC_AEAD_BUFFER_VERIFIED};
constexpr wc_aead_buffer kReadWhenOpening[] = {WC_AEAD_BUFFER_IN, WC_AEAD_BUFFER_NONCE, WC_AEAD_BUFFER_AAD,
                                               WC_AEAD_BUFFER_TAG};

class Batch {
 public:
  Batch(std::span<const wc_aead_message> messages, size_t tag_len, const int32_t *verified)
      : messages_(messages), tag_len_(tag_len), verified_(verified) {}

  size_t size() const { return messages_.size(); }

  // Message i's buffer; an empty range (start == end) when it has none.
  Range range(size_t i, wc_aead_buffer buffer) const {
    const wc_aead_message &m = messages_[i];
    const void *start = nullptr;
    size_t len = 0;
    switch (buffer) {
      case WC_AEAD_BUFFER_IN: start = m.in, len = m.len; break;
      case WC_AEAD_BUFFER_OUT: start = m.out, len = m.len; break;
      case WC_AEAD_BUFFER_TAG: start = m.tag, len = tag_len_; break;
      case WC_AEAD_BUFFER_NONCE: start = m.nonce, len = m.nonce_len; break;
      case WC_AEAD_BUFFER_AAD: start = m.aad, len = m.aad_len; break;
      case WC_AEAD_BUFFER_VERIFIED: start = verified_ == nullptr ? nullptr : verified_ + i, len = sizeof(int32_t); break;
    }
    if (start == nullptr || len == 0) return {0, 0, i, buffer};
    const auto at = reinterpret_cast<uintptr_t>(start);
    return {at, at + len, i, buffer};
  }

  // Whether every message's `buffer` starts at or after the previous one's.
  bool in_order(wc_aead_buffer buffer) const {
    uintptr_t last = 0;
    for (size_t i = 0; i < messages_.size(); ++i) {
      const Range r = range(i, buffer);
      if (r.start == r.end) continue;
      if (r.start < last) return false;
      last = r.start;
    }
    return true;
  }

 private:
  std::span<const wc_aead_message> messages_;
  size_t tag_len_;
  const int32_t *verified_;
};

// The ranges of some kinds of buffer in order of start, read straight from
// the messages: each kind is in message order already (Batch::in_order),
// so this is a merge of at most four sorted runs and allocates nothing.
class MergedRanges {
 public:
  MergedRanges(const Batch &batch, std::span<const wc_aead_buffer> kinds) : batch_(batch), kinds_(kinds) {
    for (size_t k = 0; k < kinds_.size(); ++k) advance(k, 0);
  }

  // The next range in order of start; false when none is left.
  bool next(Range *out) {
    size_t best = kinds_.size();
    for (size_t k = 0; k < kinds_.size(); ++k) {
      if (heads_[k].start == heads_[k].end) continue;
      if (best == kinds_.size() || heads_[k].start < heads_[best].start) best = k;
    }
    if (best == kinds_.size()) return false;
    *out = heads_[best];
    advance(best, heads_[best].message + 1);
    return true;
  }

 private:
  // Kind k's first range from message i on, or an empty one at the end.
  void advance(size_t k, size_t i) {
    for (; i < batch_.size(); ++i) {
      heads_[k] = batch_.range(i, kinds_[k]);
      if (heads_[k].start != heads_[k].end) return;
    }
    heads_[k] = Range{};
  }

  const Batch &batch_;
  std::span<const wc_aead_buffer> kinds_;
  std::array<Range, 4> heads_{};
};

wc_aead_overlap pair(const Range &written, const Range &other) {
  return {written.message, written.buffer, other.message, other.buffer};
}

// A message's input and output are the same length, so meeting exactly
// they cover the same bytes and nothing else: in-place work.
bool in_place(const Range &written, const Range &read) {
  return read.buffer == WC_AEAD_BUFFER_IN && written.buffer == WC_AEAD_BUFFER_OUT &&
         written.message == read.message && written.start == read.start;
}

// The check on ranges in order of start, from two sources with next(Range*):
// the written ranges must be disjoint; then, disjoint and sorted by start,
// they are sorted by end too, so the first one ending after a read range
// starts is the only candidate to overlap it, and with the read ranges in
// order of start that candidate only moves forward.
template <class Written, class WrittenAgain, class Read>
std::optional<wc_aead_overlap> sweep(Written written, WrittenAgain candidates, Read read) {
  Range previous{}, current{};
  for (bool first = true; written.next(&current); first = false, previous = current) {
    if (!first && previous.end > current.start) return pair(previous, current);
  }
  Range candidate{};
  bool have_candidate = candidates.next(&candidate);
  Range r{};
  while (read.next(&r)) {
    while (have_candidate && candidate.end <= r.start) have_candidate = candidates.next(&candidate);
    if (!have_candidate) break;
    if (candidate.start < r.end && !in_place(candidate, r)) return pair(candidate, r);
  }
  return std::nullopt;
}

// The same for a batch in any order: the ranges copied and sorted.
class SortedRanges {
 public:
  SortedRanges(const Batch &batch, std::span<const wc_aead_buffer> kinds, std::pmr::memory_resource *memory)
      : ranges_(memory) {
    for (size_t i = 0; i < batch.size(); ++i) {
      for (wc_aead_buffer kind : kinds) {
        const Range r = batch.range(i, kind);
        if (r.start != r.end) ranges_.push_back(r);
      }
    }
    std::sort(ranges_.begin(), ranges_.end(), [](const Range &a, const Range &b) { return a.start < b.start; });
  }
  bool next(Range *out) {
    if (at_ == ranges_.size()) return false;
    *out = ranges_[at_++];
    return true;
  }

 private:
  std::pmr::vector<Range> ranges_;
  size_t at_ = 0;
};

// Whether two non-empty ranges share a byte.
bool meet(const Range &a, const Range &b) {
  return a.start != a.end && b.start != b.end && a.start < b.end && b.start < a.end;
}

// The rule for a lone message, every written buffer against every other
// buffer: at most three against five, cheaper than setting up the sweep,
// which cost a one-shot call of 64 bytes some 80-100 ns on the 2-core
// machine (more than AES-GCM's own work there). It only answers whether the
// rule is broken; the sweep then names the pair, so both paths name the same.
bool lone_message_breaks_rule(const Batch &batch, std::span<const wc_aead_buffer> written,
                              std::span<const wc_aead_buffer> read) {
  for (size_t w = 0; w < written.size(); ++w) {
    const Range out = batch.range(0, written[w]);
    for (size_t other = w + 1; other < written.size(); ++other) {
      if (meet(out, batch.range(0, written[other]))) return true;
    }
    for (wc_aead_buffer kind : read) {
      const Range in = batch.range(0, kind);
      if (meet(out, in) && !in_place(out, in)) return true;
    }
  }
  return false;
}

}  // namespace

std::optional<wc_aead_overlap> find_batch_overlap(std::span<const wc_aead_message> messages, size_t tag_len,
                                                  bool seal, const int32_t *verified) {
  const Batch batch(messages, tag_len, verified);
  const std::span<const wc_aead_buffer> written =
      seal ? std::span<const wc_aead_buffer>(kWrittenWhenSealing) : std::span<const wc_aead_buffer>(kWrittenWhenOpening);
  const std::span<const wc_aead_buffer> read =
      seal ? std::span<const wc_aead_buffer>(kReadWhenSealing) : std::span<const wc_aead_buffer>(kReadWhenOpening);
  if (messages.size() == 1 && !lone_message_breaks_rule(batch, written, read)) return std::nullopt;
  bool ordered = true;
  for (const auto *kinds : {&written, &read}) {
    for (wc_aead_buffer kind : *kinds) ordered = ordered && batch.in_order(kind);
  }
  if (ordered) return sweep(MergedRanges(batch, written), MergedRanges(batch, written), MergedRanges(batch, read));
  // One-shot calls have ordered batches of one; a batch out of order pays
  // for its copy and sort.
  std::pmr::monotonic_buffer_resource memory;
  SortedRanges sorted_written(batch, written, &memory);
  SortedRanges again = sorted_written;
  return sweep(sorted_written, again, SortedRanges(batch, read, &memory));
}

namespace {

// 128 bits: a difference of two addresses plus a length cannot wrap.
__extension__ typedef __int128 Wide;

// Floor and ceiling of x / d for d > 0.
Wide floor_div(Wide x, Wide d) { return x / d - (x % d != 0 && x < 0 ? 1 : 0); }
Wide ceil_div(Wide x, Wide d) { return -floor_div(-x, d); }

}  // namespace

bool strided_ranges_overlap(const StridedRange &a, const StridedRange &b, uint64_t count) {
  if (count == 0 || a.len == 0 || b.len == 0) return false;
  const Wide last = static_cast<Wide>(count - 1);
  if (a.stride != b.stride || count == 1) {
    const Wide a_end = static_cast<Wide>(a.start) + last * a.stride + a.len;
    const Wide b_end = static_cast<Wide>(b.start) + last * b.stride + b.len;
    return static_cast<Wide>(a.start) < b_end && static_cast<Wide>(b.start) < a_end;
  }
  // Piece i of a meets piece j of b iff -b.len < d + k * stride < a.len,
  // with d = b.start - a.start and k = j - i, which takes every value from
  // -(count - 1) to count - 1.
  const Wide d = static_cast<Wide>(b.start) - static_cast<Wide>(a.start);
  const Wide s = a.stride;
  if (s == 0) return -static_cast<Wide>(b.len) < d && d < static_cast<Wide>(a.len);
  const Wide k_low = std::max(-last, floor_div(-static_cast<Wide>(b.len) - d, s) + 1);
  const Wide k_high = std::min(last, ceil_div(static_cast<Wide>(a.len) - d, s) - 1);
  return k_low <= k_high;
}

bool strided_batch_overlaps(const wc_aead_strided &batch, size_t tag_len, bool seal, const int32_t *verified) {
  auto at = [](const void *p) { return reinterpret_cast<uintptr_t>(p); };
  const StridedRange in{at(batch.in), batch.stride, batch.len};
  const StridedRange out{at(batch.out), batch.stride, batch.len};
  const StridedRange nonces{at(batch.nonces), batch.nonce_stride, kAeadNonceLen};
  const StridedRange tags{at(batch.tags), batch.tag_stride, tag_len};
  const StridedRange verdicts{at(verified), sizeof(int32_t), verified != nullptr ? sizeof(int32_t) : 0};
  // Every output against every other buffer; a message's output meets its
  // own input only when worked in place, which is allowed.
  std::array<const StridedRange *, 5> all{&in, &out, &nonces, &tags, &verdicts};
  std::array<const StridedRange *, 2> outputs{&out, seal ? &tags : &verdicts};
  for (const StridedRange *output : outputs) {
    for (const StridedRange *other : all) {
      if (other == output || (output == &out && other == &in && batch.out == batch.in)) continue;
      if (strided_ranges_overlap(*output, *other, batch.count)) return true;
    }
  }
  return false;
}

std::vector<ByteRange> merged_ranges(std::vector<ByteRange> ranges) {
  std::sort(ranges.begin(), ranges.end(), [](const ByteRange &a, const ByteRange &b) { return a.begin < b.begin; });
  std::vector<ByteRange> merged;
  for (const ByteRange &range : ranges) {
    if (range.begin == range.end) continue;
    if (!merged.empty() && range.begin <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, range.end);
    } else {
      merged.push_back(range);
    }
  }
  return merged;
}

}  // namespace warpcrypt
