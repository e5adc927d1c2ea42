#include "backends/cuda/lane_buffers.h"

#include <map>
#include <mutex>
#include <vector>

#include "backends/cuda/device_context.h"
#include "backends/cuda/pinned_pool.h"

namespace warpcrypt::cuda {
namespace {

// Streams, events and device buffers of one device, kept for the process.
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
  wc_status acquire(DeviceLaneBuffers *out, size_t capacity) {
    {
      std::lock_guard lock(mutex_);
      for (auto it = free_.begin(); it != free_.end(); ++it) {
        if (it->capacity >= capacity) {
          *out = *it;
          free_.erase(it);
          return WC_OK;
        }
      }
    }
    DeviceLaneBuffers fresh;
    fresh.capacity = capacity;
    if (cudaStreamCreateWithFlags(&fresh.stream, cudaStreamNonBlocking) != cudaSuccess ||
        cudaEventCreateWithFlags(&fresh.done, cudaEventBlockingSync | cudaEventDisableTiming) != cudaSuccess ||
        cudaMalloc(&fresh.device, capacity) != cudaSuccess) {
      release_memory(fresh);
      return device_status(cudaErrorMemoryAllocation);
    }
    *out = fresh;
    return WC_OK;
  }

  void release(const DeviceLaneBuffers &buffers) {
    std::lock_guard lock(mutex_);
    free_.push_back(buffers);
  }

 private:
  static void release_memory(const DeviceLaneBuffers &buffers) {
    if (buffers.device != nullptr) cudaFree(buffers.device);
    if (buffers.done != nullptr) cudaEventDestroy(buffers.done);
    if (buffers.stream != nullptr) cudaStreamDestroy(buffers.stream);
    cudaGetLastError();
  }

  std::mutex mutex_;
  std::vector<DeviceLaneBuffers> free_;
};

}  // namespace

wc_status LeasedBuffers::acquire(std::unique_ptr<LeasedBuffers> *out, int device, size_t capacity,
                                 size_t pinned_capacity) {
  const CurrentDevice on_device(device);
  if (on_device.status() != WC_OK) return on_device.status();
  void *pinned = nullptr;
  wc_status status = take_pinned(&pinned, pinned_capacity);
  if (status != WC_OK) return status;
  DeviceLaneBuffers buffers;
  status = LaneBufferPool::for_device(device).acquire(&buffers, capacity);
  if (status != WC_OK) {
    give_pinned(pinned, 0);
    return status;
  }
  out->reset(new LeasedBuffers(device, buffers, static_cast<uint8_t *>(pinned)));
  return WC_OK;
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
  give_pinned(pinned_, pinned_used_);
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
