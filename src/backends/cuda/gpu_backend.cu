#include "backends/cuda/gpu_backend.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "core/secret_bytes.h"
#include "core/stream_state.h"
#include "backends/cuda/device_context.h"
#include "backends/cuda/gpu_cipher.h"

namespace warpcrypt::cuda {
namespace {

// A lane's CUDA resources: one stream, an event to wait on, and a pinned and
// a device buffer of `capacity` bytes. Pinning memory costs milliseconds, so
// they are pooled per device and reused by later jobs.
struct LaneBuffers {
  cudaStream_t stream = nullptr;
  // Waited on with the thread asleep: a stream synchronisation would spin a
  // core per lane, the cores the hybrid backend's CPU lanes work on.
  cudaEvent_t done = nullptr;
  uint8_t *pinned = nullptr;
  uint8_t *device = nullptr;
  size_t capacity = 0;
};

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

  // Called with `device` current.
  wc_status acquire(LaneBuffers *out, size_t capacity) {
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
    LaneBuffers fresh;
    fresh.capacity = capacity;
    if (cudaStreamCreateWithFlags(&fresh.stream, cudaStreamNonBlocking) != cudaSuccess ||
        cudaEventCreateWithFlags(&fresh.done, cudaEventBlockingSync | cudaEventDisableTiming) != cudaSuccess ||
        cudaMallocHost(&fresh.pinned, capacity) != cudaSuccess || cudaMalloc(&fresh.device, capacity) != cudaSuccess) {
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

// Makes `device` current for a scope and restores the caller's device after:
// lanes run on the caller's thread too, whose current device is its own.
class CurrentDevice {
 public:
  explicit CurrentDevice(int device) {
    if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
    status_ = device_status(cudaSetDevice(device));
  }
  ~CurrentDevice() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }
  CurrentDevice(const CurrentDevice &) = delete;
  CurrentDevice &operator=(const CurrentDevice &) = delete;
  wc_status status() const { return status_; }

 private:
  int previous_ = -1;
  wc_status status_ = WC_OK;
};

// One stream of one device. Each chunk is uploaded, transformed in place in
// device memory and downloaded on the lane's stream; the engine runs several
// lanes per device, so one lane's upload overlaps another's kernel and a
// third's download.
class GpuLane final : public Lane {
 public:
  GpuLane(int device, std::shared_ptr<const KeyedGpuCipher> keyed, const LaneBuffers &buffers)
      : device_(device), keyed_(std::move(keyed)), buffers_(buffers) {}

  ~GpuLane() override {
    // Both buffers held plaintext; wipe what was used before the pool hands
    // them to another job.
    const CurrentDevice on_lane_device(device_);
    if (used_ != 0 && on_lane_device.status() == WC_OK) {
      cudaMemsetAsync(buffers_.device, 0, used_, buffers_.stream);
      cudaStreamSynchronize(buffers_.stream);
    }
    cudaGetLastError();
    secure_wipe(buffers_.pinned, used_);
    LaneBufferPool::for_device(device_).release(buffers_);
  }

  uint8_t *staging() override { return buffers_.pinned; }
  bool reaches(const void *host) const override { return host == buffers_.pinned || page_locked(host); }

  wc_status transform(uint64_t position, const uint8_t chain[16], const uint8_t *in, uint8_t *out,
                      size_t len) override {
    if (len == 0) return WC_OK;
    used_ = std::max(used_, len);
    const CurrentDevice on_lane_device(device_);
    wc_status status = on_lane_device.status();
    cudaStream_t stream = buffers_.stream;
    if (status == WC_OK) {
      status = device_status(cudaMemcpyAsync(buffers_.device, in, len, cudaMemcpyHostToDevice, stream));
    }
    if (status == WC_OK) {
      status = transform_device(*keyed_, position, chain, buffers_.device, buffers_.device, len, stream);
    }
    if (status == WC_OK) {
      status = device_status(cudaMemcpyAsync(out, buffers_.device, len, cudaMemcpyDeviceToHost, stream));
    }
    if (status == WC_OK) status = device_status(cudaEventRecord(buffers_.done, stream));
    if (status == WC_OK) status = device_status(cudaEventSynchronize(buffers_.done));
    // After a failure the stream may still hold work that uses the buffers.
    if (status != WC_OK) cudaStreamSynchronize(stream);
    return status;
  }

  wc_backend backend() const override { return WC_BACKEND_GPU; }

 private:
  int device_;
  std::shared_ptr<const KeyedGpuCipher> keyed_;
  LaneBuffers buffers_;
  size_t used_ = 0;
};

}  // namespace

bool page_locked(const void *host) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, host) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeHost;
}

wc_status make_lanes(std::vector<std::unique_ptr<Lane>> *out, int device, unsigned count, const wc_cipher &cipher,
                     wc_direction direction, const KeyMaterial &key, size_t capacity) {
  const int devices = device_count();
  if (devices == 0) return WC_ERR_NO_DEVICE;
  if (device < 0 || device >= devices) return WC_ERR_INVALID_ARGUMENT;
  if (!gpu_supports(cipher, direction)) return WC_ERR_BACKEND_UNAVAILABLE;
  const CurrentDevice on_device(device);
  wc_status status = on_device.status();
  if (status != WC_OK) return status;
  if (current_device_context() == nullptr) return WC_ERR_DEVICE;
  auto keyed = std::make_shared<const KeyedGpuCipher>(cipher, direction, key, selected_implementation());
  LaneBufferPool &pool = LaneBufferPool::for_device(device);
  for (unsigned i = 0; i < count; ++i) {
    LaneBuffers buffers;
    status = pool.acquire(&buffers, capacity);
    if (status != WC_OK) return status;
    out->push_back(std::make_unique<GpuLane>(device, keyed, buffers));
  }
  return WC_OK;
}

wc_status transform_device_async(const wc_cipher &cipher, wc_direction direction, const KeyMaterial &key,
                                 uint64_t stream_offset, const uint8_t *in, uint8_t *out, size_t len,
                                 wc_cuda_stream stream) {
  if (!gpu_supports(cipher, direction)) return WC_ERR_BACKEND_UNAVAILABLE;
  const KeyedGpuCipher keyed(cipher, direction, key, selected_implementation());
  uint8_t chain[16] = {};
  if (key.iv.size() == 16) std::memcpy(chain, key.iv.data(), 16);
  return transform_device(keyed, stream_offset, chain, in, out, len, static_cast<cudaStream_t>(stream));
}

wc_status batch_encrypt_device_async(const wc_cipher &cipher, std::span<const uint8_t> key, bool padding,
                                     const uint8_t *in, uint8_t *out, std::span<const wc_batch_message> messages,
                                     const uint8_t *ivs, wc_cuda_stream stream) {
  const KeyedGpuCipher keyed(cipher, WC_ENCRYPT, KeyMaterial{key, {}}, Implementation::optimized);
  return batch_encrypt_device(keyed, padding, in, out, messages.data(), messages.size(), ivs,
                              static_cast<cudaStream_t>(stream));
}

}  // namespace warpcrypt::cuda

