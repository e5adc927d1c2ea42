#include "backends/cuda/pinned_pool.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <mutex>

#include "core/secret_bytes.h"
#include "backends/cuda/device_context.h"

namespace warpcrypt::cuda {
namespace {

// Blocks come in sizes of whole 64 KiB, so that windows of nearly the same
// size share them.
constexpr size_t kGrain = size_t{64} << 10;
// What the pool keeps of the blocks given back: more than a hybrid job's
// windows on every lane of this machine (16 lanes of two 8 MiB windows and
// a device lane's staging), and far below what pinning much of the
// machine's memory would cost everyone else on it. What is given back
// beyond it is unpinned.
constexpr size_t kKeptBytes = size_t{1} << 30;
// A block serves a request of at least half its size, so that a small
// request never holds a large window.
constexpr size_t kMostWaste = 2;

class PinnedPool {
 public:
  // Never destroyed: its blocks would be unpinned after the CUDA runtime
  // has gone at exit.
  static PinnedPool &instance() {
    static auto *pool = new PinnedPool;
    return *pool;
  }

  wc_status take(void **block, size_t bytes) {
    const size_t size = (std::max<size_t>(bytes, 1) + kGrain - 1) / kGrain * kGrain;
    {
      const std::lock_guard lock(mutex_);
      // The smallest size that serves, and of its blocks the one given back
      // last, whose pages are the likeliest still in the caches and TLB.
      const auto fits = free_.lower_bound(size);
      if (fits != free_.end() && fits->first <= size * kMostWaste) {
        const auto kept = std::prev(free_.upper_bound(fits->first));
        *block = kept->second;
        kept_bytes_ -= kept->first;
        sizes_[kept->second] = kept->first;
        free_.erase(kept);
        return WC_OK;
      }
    }
    const cudaError_t error = cudaMallocHost(block, size);
    if (error != cudaSuccess) {
      cudaGetLastError();
      *block = nullptr;
      return error == cudaErrorMemoryAllocation ? WC_ERR_OUT_OF_MEMORY : device_status(error);
    }
    const std::lock_guard lock(mutex_);
    sizes_[*block] = size;
    return WC_OK;
  }

  void give(void *block, size_t held) {
    size_t size = 0;
    {
      const std::lock_guard lock(mutex_);
      const auto taken = sizes_.find(block);
      if (taken == sizes_.end()) return;  // not the pool's: nothing to give back
      size = taken->second;
      sizes_.erase(taken);
    }
    secure_wipe(block, std::min(held, size));
    {
      const std::lock_guard lock(mutex_);
      if (kept_bytes_ + size <= kKeptBytes) {
        free_.emplace(size, block);
        kept_bytes_ += size;
        return;
      }
    }
    if (cudaFreeHost(block) != cudaSuccess) cudaGetLastError();
  }

 private:
  std::mutex mutex_;
  std::multimap<size_t, void *> free_;  // by size
  std::map<void *, size_t> sizes_;      // the blocks given out
  size_t kept_bytes_ = 0;
};

}  // namespace

wc_status take_pinned(void **block, size_t bytes) { return PinnedPool::instance().take(block, bytes); }

void give_pinned(void *block, size_t held) { PinnedPool::instance().give(block, held); }

}  // namespace warpcrypt::cuda
