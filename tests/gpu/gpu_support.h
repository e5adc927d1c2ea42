// Device memory for the GPU tests, with guard bytes around every buffer, and
// how many devices there are.
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

// The CUDA devices this machine has.
int device_count();

// Tests that need `n` devices skip, saying so, on a machine with fewer.
#define WCTEST_REQUIRE_GPUS(n)                                                                      \
  do {                                                                                               \
    WCTEST_REQUIRE_GPU();                                                                            \
    if (::wctest::device_count() < (n)) {                                                            \
      GTEST_SKIP() << "this machine has " << ::wctest::device_count() << " CUDA device(s), the test " \
                   << "needs " << (n) << ": multi-GPU test skipped";                                 \
    }                                                                                                \
  } while (0)

}  // namespace wctest

#endif
