// Device memory for the GPU tests, with guard bytes around every buffer.
#ifndef WARPCRYPT_TESTS_GPU_GPU_SUPPORT_H
#define WARPCRYPT_TESTS_GPU_GPU_SUPPORT_H

#include <cstddef>

#include "support/bytes.h"
#include "support/gpu_modes.h"

namespace wctest {

// `len` bytes of device memory with `slack` spare bytes on each side, all
// filled with a marker so a write outside [0, len) shows up.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t len, size_t slack = 64);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  uint8_t *at(size_t offset) { return base_ + slack_ + offset; }
  void upload(const Bytes &bytes, size_t offset = 0);
  Bytes download(size_t len, size_t offset = 0) const;
  // True when nothing outside [0, written) changed.
  bool guard_bytes_intact(size_t written) const;

 private:
  uint8_t *base_ = nullptr;
  size_t len_;
  size_t slack_;
};

void synchronize_device();

}  // namespace wctest

#endif
