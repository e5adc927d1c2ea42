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

// What the lanes' users ask of the device side: a lane's buffers, and
// whether host memory is page-locked (copied straight, not staged). The
// CUDA backend's (transfer_backend()); a test gives stand-ins.
struct TransferBackend {
  LeaseTransfer lease;
  bool (*page_locked)(const void *host);
};
const TransferBackend &cuda_transfer_backend();

class TransferLane {
 public:
  // A lane on `device` whose device buffer holds `device_bytes` and whose
  // window `window_bytes`, and `scratch` page-locked bytes more for the
  // work's own use (descriptors the kernels read); its host copies run on
  // `copy_workers` threads of the pool.
  static wc_status lease(std::unique_ptr<TransferLane> *out, LeaseTransfer lease_buffers, int device,
                         size_t device_bytes, size_t window_bytes, size_t scratch, unsigned copy_workers);

  uint8_t *window() const { return buffers_->window(); }
  uint8_t *device() const { return buffers_->device(); }
  std::span<uint8_t> scratch() const { return {buffers_->window() + window_bytes_, scratch_}; }
  wc_cuda_stream stream() const { return buffers_->stream(); }

  // Copies `len` bytes of host memory into the window at `at`, and back out.
  void stage(size_t at, const uint8_t *host, size_t len);
  void unstage(uint8_t *host, size_t at, size_t len);
  // Queue `len` bytes from page-locked host memory (the window, or the
  // caller's own) up to the device buffer at `at`, and from the device
  // buffer at `at` back to page-locked host memory.
  wc_status upload(size_t at, const uint8_t *from, size_t len);
  wc_status download(uint8_t *to, size_t at, size_t len);
  // Sleeps until the stream has passed everything queued on it.
  wc_status wait() { return buffers_->wait(); }

 private:
  TransferLane(std::unique_ptr<TransferBuffers> buffers, size_t window_bytes, size_t scratch, unsigned copy_workers)
      : buffers_(std::move(buffers)), window_bytes_(window_bytes), scratch_(scratch), copy_workers_(copy_workers) {}

  // Marks what a copy from or to `host` wrote: the device buffer's bytes up
  // to `device_end`, and the window's where `host` lies in it.
  void mark(size_t device_end, const uint8_t *host, size_t len);

  std::unique_ptr<TransferBuffers> buffers_;
  size_t window_bytes_;
  size_t scratch_;
  unsigned copy_workers_;
};

}  // namespace warpcrypt::engine
