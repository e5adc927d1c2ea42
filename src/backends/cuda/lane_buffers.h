// What moves host memory through a device: a stream with an event to wait
// on, and a pinned and a device buffer. The plain-cipher lanes
// (gpu_backend.cu) and host-memory AEAD (aead_gpu.cu) lease them: streams,
// events and device buffers from a pool per device, because making them
// costs milliseconds; the pinned buffer from the process's one pool of
// page-locked memory (pinned_pool.h).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/transfer_buffers.h"
#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::cuda {

struct DeviceLaneBuffers {
  cudaStream_t stream = nullptr;
  // Waited on with the thread asleep: a stream synchronisation would spin a
  // core per lane, the cores the hybrid backend's CPU lanes work on.
  cudaEvent_t done = nullptr;
  uint8_t *device = nullptr;
  size_t capacity = 0;  // the device buffer's
};

// A device buffer of at least `capacity` bytes on `device` and a pinned one
// of at least `pinned_capacity` (all of `capacity` for work staged through
// it; less for work whose host memory is page-locked already, which needs
// the pinned buffer only for results such as verdicts), leased for the
// lifetime of this object. Both buffers hold plaintext at times, so what
// was used (mark_device_used, mark_pinned_used) is wiped before the pools
// hand them to another job.
class LeasedBuffers {
 public:
  static wc_status acquire(std::unique_ptr<LeasedBuffers> *out, int device, size_t capacity,
                           size_t pinned_capacity);
  ~LeasedBuffers();
  LeasedBuffers(const LeasedBuffers &) = delete;
  LeasedBuffers &operator=(const LeasedBuffers &) = delete;

  int device_ordinal() const { return device_; }
  cudaStream_t stream() const { return buffers_.stream; }
  uint8_t *pinned() const { return pinned_; }
  uint8_t *device() const { return buffers_.device; }
  size_t capacity() const { return buffers_.capacity; }
  // How much of each buffer held data: the lease wipes that much.
  void mark_device_used(size_t bytes) { device_used_ = bytes > device_used_ ? bytes : device_used_; }
  void mark_pinned_used(size_t bytes) { pinned_used_ = bytes > pinned_used_ ? bytes : pinned_used_; }

  // Records the event on the stream and sleeps until the stream reaches it.
  wc_status wait() const;
  // Work queued on this stream from now on waits for what is queued on
  // `other`'s so far.
  wc_status order_after(const LeasedBuffers &other) const;

 private:
  LeasedBuffers(int device, const DeviceLaneBuffers &buffers, uint8_t *pinned)
      : device_(device), buffers_(buffers), pinned_(pinned) {}

  int device_;
  DeviceLaneBuffers buffers_;
  uint8_t *pinned_;
  size_t device_used_ = 0;
  size_t pinned_used_ = 0;
};

// LeasedBuffers behind the engine's transfer lanes (CudaBackend's
// lease_transfer): the window is the pinned buffer.
wc_status lease_transfer(std::unique_ptr<TransferBuffers> *out, int device, size_t device_bytes,
                         size_t window_bytes);

}  // namespace warpcrypt::cuda
