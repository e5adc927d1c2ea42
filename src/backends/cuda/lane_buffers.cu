#include "backends/cuda/lane_buffers.h"

#include <map>
#include <mutex>
#include <vector>

#include "core/secret_bytes.h"
#include "backends/cuda/device_context.h"

namespace warpcrypt::cuda {
namespace {

class LaneBufferPool {
 public:
  // The pools live until exit and are never destroyed: the CUDA runtime may be
  // torn down before static destructors run.
  static LaneBufferPool &for_device(int device) {
    static std::mutex mutex;
    static std::map<int, LaneBufferPool *> pools;
    std::lock_guard lock(mutex);
    LaneBufferPool *&pool = pools[device];
    if (pool == nullptr) pool = new LaneBufferPool;
    return *pool;
  }

  // Called with the pool's device current.
  wc_status acquire(LaneBuffers *out, size_t capacity, size_t pinned_capacity) {
    {
      std::lock_guard lock(mutex_);
      for (auto it = free_.begin(); it != free_.end(); ++it) {
        if (it->capacity >= capacity && it->pinned_capacity >= pinned_capacity) {
          *out = *it;
          free_.erase(it);
          return WC_OK;
        }
      }
    }
    LaneBuffers fresh;
    fresh.capacity = capacity;
    fresh.pinned_capacity = pinned_capacity;
    if (cudaStreamCreateWithFlags(&fresh.stream, cudaStreamNonBlocking) != cudaSuccess ||
        cudaEventCreateWithFlags(&fresh.done, cudaEventBlockingSync | cudaEventDisableTiming) != cudaSuccess ||
        cudaMallocHost(&fresh.pinned, pinned_capacity) != cudaSuccess ||
        cudaMalloc(&fresh.device, capacity) != cudaSuccess) {
      release_memory(fresh);
      return device_status(cudaErrorMemoryAllocation);
    }
    *out = fresh;
    return WC_OK;
  }

  void release(const LaneBuffers &buffers) {
    std::lock_guard lock(mutex_);
    free_.push_back(buffers);
  }

 private:
  static void release_memory(const LaneBuffers &buffers) {
    if (buffers.device != nullptr) cudaFree(buffers.device);
    if (buffers.pinned != nullptr) cudaFreeHost(buffers.pinned);
    if (buffers.done != nullptr) cudaEventDestroy(buffers.done);
    if (buffers.stream != nullptr) cudaStreamDestroy(buffers.stream);
    cudaGetLastError();
  }

  std::mutex mutex_;
  std::vector<LaneBuffers> free_;
};

}  // namespace

wc_status LeasedBuffers::acquire(std::unique_ptr<LeasedBuffers> *out, int device, size_t capacity,
                                 size_t pinned_capacity) {
  const CurrentDevice on_device(device);
  if (on_device.status() != WC_OK) return on_device.status();
  LaneBuffers buffers;
  const wc_status status = LaneBufferPool::for_device(device).acquire(&buffers, capacity, pinned_capacity);
  if (status == WC_OK) out->reset(new LeasedBuffers(device, buffers));
  return status;
}

LeasedBuffers::~LeasedBuffers() {
  const CurrentDevice on_device(device_);
  if (on_device.status() == WC_OK) {
    // Whatever is still queued uses the buffers: let it finish first.
    cudaStreamSynchronize(buffers_.stream);
    if (device_used_ != 0) {
      cudaMemsetAsync(buffers_.device, 0, device_used_, buffers_.stream);
      cudaStreamSynchronize(buffers_.stream);
    }
  }
  cudaGetLastError();
  secure_wipe(buffers_.pinned, pinned_used_);
  LaneBufferPool::for_device(device_).release(buffers_);
}

wc_status LeasedBuffers::wait() const {
  wc_status status = device_status(cudaEventRecord(buffers_.done, buffers_.stream));
  if (status == WC_OK) status = device_status(cudaEventSynchronize(buffers_.done));
  // After a failure the stream may still hold work that uses the buffers.
  if (status != WC_OK) cudaStreamSynchronize(buffers_.stream);
  return status;
}

wc_status LeasedBuffers::order_after(const LeasedBuffers &other) const {
  wc_status status = device_status(cudaEventRecord(other.buffers_.done, other.buffers_.stream));
  if (status == WC_OK) status = device_status(cudaStreamWaitEvent(buffers_.stream, other.buffers_.done, 0));
  return status;
}

}  // namespace warpcrypt::cuda
