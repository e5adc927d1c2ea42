#include "cpu/chunked_transform.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "cpu/thread_pool.h"

namespace warpcrypt::cpu {
namespace {

// Below this a chunk costs more in hand-off than it gains: AES-NI runs about
// 64 KiB in 10-20 microseconds.
constexpr size_t kMinChunk = 64 * 1024;
// More chunks than threads lets fast threads take over from slow ones.
constexpr size_t kChunksPerThread = 4;

size_t round_up(size_t value, size_t multiple) { return (value + multiple - 1) / multiple * multiple; }

}  // namespace

wc_status run_chunked(unsigned threads, bool needs_chain, uint64_t position,
                      const uint8_t chain[16], const uint8_t *in, uint8_t *out, size_t len,
                      const SegmentFunction &segment) {
  const unsigned workers = threads == 0 ? ThreadPool::hardware_threads() : threads;
  if (workers == 1 || len < 2 * kMinChunk) return segment(position, chain, in, out, len);

  const size_t chunk = std::max(kMinChunk, round_up(len / (workers * kChunksPerThread), 4096));
  const size_t count = (len + chunk - 1) / chunk;

  std::vector<uint8_t> chains;
  if (needs_chain) {
    chains.resize(16 * count);
    std::memcpy(chains.data(), chain, 16);
    for (size_t i = 1; i < count; ++i) std::memcpy(&chains[16 * i], in + i * chunk - 16, 16);
  }

  std::atomic<wc_status> first_error{WC_OK};
  ThreadPool::instance().parallel_for(count, workers, [&](size_t i) {
    const size_t begin = i * chunk;
    const size_t piece = std::min(chunk, len - begin);
    const uint8_t *piece_chain = needs_chain ? &chains[16 * i] : chain;
    const wc_status status = segment(position + begin, piece_chain, in + begin, out + begin, piece);
    if (status != WC_OK) {
      wc_status expected = WC_OK;
      first_error.compare_exchange_strong(expected, status);
    }
  });
  return first_error.load();
}

}  // namespace warpcrypt::cpu
