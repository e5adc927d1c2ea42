#include "core/memory_ranges.h"

#include <algorithm>
#include <vector>

namespace warpcrypt {
namespace {

enum class Part { in, out, other };

struct Range {
  uintptr_t start, end;  // [start, end), never empty
  size_t message;
  Part part;
};

void add(std::vector<Range> &ranges, const void *start, size_t len, size_t message, Part part) {
  if (start == nullptr || len == 0) return;
  const auto at = reinterpret_cast<uintptr_t>(start);
  ranges.push_back({at, at + len, message, part});
}

}  // namespace

bool batch_overlaps(std::span<const wc_aead_message> messages, size_t tag_len, bool seal) {
  std::vector<Range> written;
  std::vector<Range> read;
  for (size_t i = 0; i < messages.size(); ++i) {
    const wc_aead_message &m = messages[i];
    add(written, m.out, m.len, i, Part::out);
    add(seal ? written : read, m.tag, tag_len, i, Part::other);
    add(read, m.in, m.len, i, Part::in);
    add(read, m.nonce, m.nonce_len, i, Part::other);
    add(read, m.aad, m.aad_len, i, Part::other);
  }
  std::sort(written.begin(), written.end(), [](const Range &a, const Range &b) { return a.start < b.start; });
  for (size_t i = 1; i < written.size(); ++i) {
    if (written[i - 1].end > written[i].start) return true;
  }
  // Disjoint and sorted by start, the written ranges are sorted by end too:
  // the first one ending after a read range starts is the only candidate.
  for (const Range &r : read) {
    const auto hit = std::lower_bound(written.begin(), written.end(), r.start,
                                      [](const Range &w, uintptr_t at) { return w.end <= at; });
    if (hit == written.end() || hit->start >= r.end) continue;
    // A message's input and output are the same length, so meeting
    // exactly they cover the same bytes and nothing else.
    const bool in_place = r.part == Part::in && hit->part == Part::out && hit->message == r.message &&
                          hit->start == r.start;
    if (!in_place) return true;
  }
  return false;
}

}  // namespace warpcrypt
