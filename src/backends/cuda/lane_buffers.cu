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

  // Called with the pool's device current. A capacity of 0 is a stream
  // alone (slots that copy straight into their caller's memory), which a
  // pooled buffer is not held idle for.
  wc_status acquire(DeviceLaneBuffers *out, size_t capacity) {
    {
      std::lock_guard lock(mutex_);
      for (auto it = free_.begin(); it != free_.end(); ++it) {
        if (it->capacity >= capacity && (capacity != 0) == (it->capacity != 0)) {
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
        (capacity != 0 && cudaMalloc(&fresh.device, capacity) != cudaSuccess)) {
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

namespace {

class LeasedTransfer final : public TransferBuffers {
 public:
  explicit LeasedTransfer(std::unique_ptr<LeasedBuffers> buffers) : buffers_(std::move(buffers)) {}

  wc_cuda_stream stream() const override { return buffers_->stream(); }
  uint8_t *device() const override { return buffers_->device(); }
  uint8_t *window() const override { return buffers_->pinned(); }

  wc_status upload(uint8_t *device, const uint8_t *host, size_t len) override {
    return copy(device, host, len, cudaMemcpyHostToDevice);
  }
  wc_status download(uint8_t *host, const uint8_t *device, size_t len) override {
    return copy(host, device, len, cudaMemcpyDeviceToHost);
  }
  wc_status wait() override { return buffers_->wait(); }
  void mark_used(size_t device_bytes, size_t window_bytes) override {
    buffers_->mark_device_used(device_bytes);
    buffers_->mark_pinned_used(window_bytes);
  }

 private:
  wc_status copy(void *to, const void *from, size_t len, cudaMemcpyKind kind) const {
    if (len == 0) return WC_OK;
    const CurrentDevice on_device(buffers_->device_ordinal());
    if (on_device.status() != WC_OK) return on_device.status();
    return device_status(cudaMemcpyAsync(to, from, len, kind, buffers_->stream()));
  }

  std::unique_ptr<LeasedBuffers> buffers_;
};

}  // namespace

wc_status lease_transfer(std::unique_ptr<TransferBuffers> *out, int device, size_t device_bytes,
                         size_t window_bytes) {
  std::unique_ptr<LeasedBuffers> buffers;
  const wc_status status = LeasedBuffers::acquire(&buffers, device, device_bytes, window_bytes);
  if (status == WC_OK) *out = std::make_unique<LeasedTransfer>(std::move(buffers));
  return status;
}

}  // namespace warpcrypt::cuda
