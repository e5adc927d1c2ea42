#include "backends/cpu/chunked_transform.h"

#include <algorithm>
#include <atomic>
#include <vector>

#include "core/thread_pool.h"

namespace warpcrypt::cpu {
namespace {

// Below this a chunk costs more in hand-off than it gains: AES-NI runs about
// 64 KiB in 10-20 microseconds.
constexpr size_t kMinChunk = 64 * 1024;
// More chunks than threads lets fast threads take over from slow ones.
constexpr size_t kChunksPerThread = 4;

size_t round_up(size_t value, size_t multiple) { return (value + multiple - 1) / multiple * multiple; }

}  // namespace

wc_status run_chunked(const wc_cipher &cipher, unsigned threads, uint64_t position,
                      const uint8_t chain[16], const uint8_t *in, uint8_t *out, size_t len,
                      const SegmentFunction &segment) {
  const unsigned workers = threads == 0 ? ThreadPool::hardware_threads() : threads;
  if (workers == 1 || len < 2 * kMinChunk) return segment(position, chain, in, out, len);

  const size_t chunk = std::max(kMinChunk, round_up(len / (workers * kChunksPerThread), 4096));
  const size_t count = (len + chunk - 1) / chunk;

  const std::vector<uint8_t> chains = piece_chains(cipher, chain, in, len, chunk);

  std::atomic<wc_status> first_error{WC_OK};
  ThreadPool::instance().parallel_for(count, workers, [&](size_t i) {
    const size_t begin = i * chunk;
    const size_t piece = std::min(chunk, len - begin);
    const wc_status status = segment(position + begin, &chains[16 * i], in + begin, out + begin, piece);
    if (status != WC_OK) {
      wc_status expected = WC_OK;
      first_error.compare_exchange_strong(expected, status);
    }
  });
  return first_error.load();
}

}  // namespace warpcrypt::cpu
