// What moves host memory through one device: a stream, a device buffer and
// a page-locked window, leased from the backend's pools
// (CudaBackend::lease_transfer) and given back, wiped where they held data,
// when destroyed. The engine's transfer lanes (engine/transfer_lane.h) stage
// data in the window and queue the copies; the backend only queues them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "warpcrypt/warpcrypt.h"

namespace warpcrypt {

class TransferBuffers {
 public:
  virtual ~TransferBuffers() = default;

  virtual wc_cuda_stream stream() const = 0;
  // At least the sizes leased.
  virtual uint8_t *device() const = 0;
  virtual uint8_t *window() const = 0;

  // Copies queued on the stream, between host memory (the window, or any
  // page-locked memory, moves at the bus's rate) and the device buffer.
  virtual wc_status upload(uint8_t *device, const uint8_t *host, size_t len) = 0;
  virtual wc_status download(uint8_t *host, const uint8_t *device, size_t len) = 0;
  // Sleeps until the stream has passed everything queued on it.
  virtual wc_status wait() = 0;
  // How much of each buffer held data, at most: wiped before reuse.
  virtual void mark_used(size_t device_bytes, size_t window_bytes) = 0;
};

}  // namespace warpcrypt
