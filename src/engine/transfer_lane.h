// The engine's way of moving host memory through a device: a transfer lane
// holds a page-locked window and a device buffer on a stream of one device
// (core/transfer_buffers.h, leased from the backend's pools and given back,
// wiped, when the lane goes). Its user stages host memory into the window on
// the lane's share of the cores, queues the window up to the device, queues
// its own kernels on the lane's stream, queues the results back and waits:
// the lane moves the data, the backend only queues copies and kernels.
// Users: the GPU AEAD's host-memory calls (engine/staged_aead.h) and the
// plain ciphers' GPU lanes (engine/lane_set.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "core/transfer_buffers.h"

namespace warpcrypt::engine {

// Where a lane's buffers come from: the CUDA backend's pools
// (CudaBackend::lease_transfer); a test gives host memory that stands for a
// device's.
using LeaseTransfer = wc_status (*)(std::unique_ptr<TransferBuffers> *out, int device, size_t device_bytes,
                                    size_t window_bytes);

class TransferLane {
 public:
  // A lane on `device` whose window and device buffer hold `bytes`, and
  // whose window holds `scratch` page-locked bytes more for the work's own
  // use (descriptors the kernels read); its host copies run on
  // `copy_workers` threads of the pool.
  static wc_status lease(std::unique_ptr<TransferLane> *out, LeaseTransfer lease_buffers, int device, size_t bytes,
                         size_t scratch, unsigned copy_workers);

  uint8_t *window() const { return buffers_->window(); }
  uint8_t *device() const { return buffers_->device(); }
  std::span<uint8_t> scratch() const { return {buffers_->window() + bytes_, scratch_}; }
  wc_cuda_stream stream() const { return buffers_->stream(); }

  // Copies `len` bytes of host memory into the window at `at`, and back out.
  void stage(size_t at, const uint8_t *host, size_t len);
  void unstage(uint8_t *host, size_t at, size_t len);
  // Queues the window's bytes [0, len) up to the device buffer, and the
  // device buffer's [0, len) back into the window.
  wc_status upload(size_t len) { return upload_from(window(), len); }
  wc_status download(size_t len) { return download_to(window(), len); }
  // The same between the device buffer and `host`: the window, or
  // page-locked memory of the caller's, which the copies reach as they are.
  wc_status upload_from(const uint8_t *host, size_t len);
  wc_status download_to(uint8_t *host, size_t len);
  // Sleeps until the stream has passed everything queued on it.
  wc_status wait() { return buffers_->wait(); }

 private:
  TransferLane(std::unique_ptr<TransferBuffers> buffers, size_t bytes, size_t scratch, unsigned copy_workers)
      : buffers_(std::move(buffers)), bytes_(bytes), scratch_(scratch), copy_workers_(copy_workers) {}

  std::unique_ptr<TransferBuffers> buffers_;
  size_t bytes_;
  size_t scratch_;
  unsigned copy_workers_;
};

}  // namespace warpcrypt::engine
