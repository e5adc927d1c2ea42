// What the extension asks of the devices, all through the library's C API
// (warpcrypt/device.h), so that the extension links no CUDA runtime of its
// own: which device holds a pointer, ordering one stream after another, and
// int32 verdicts in device memory. Each call runs on the device it is
// given, whatever the calling thread has current.
#pragma once

#include <cstddef>
#include <cstdint>
#include <tuple>
#include <vector>

namespace wcpy {

// The ordinal of the device that owns `pointer`. Raises NoDevice without a
// usable device, InvalidArgument where `pointer` is not GPU memory.
int device_of(const void *pointer);

// Each `device` below is where the call runs, -1 for its stream's device
// (the calling thread's current device for a default stream), as the C API
// has it.

// Makes work queued later on `consumer` wait for the work queued so far on
// `producer` (both streams of `device`, as cudaStream_t values), without
// blocking the host.
void order_after(int device, uintptr_t consumer, uintptr_t producer);

// Queues zeros over `bytes` bytes of `device`'s memory at `pointer` on
// `stream`.
void clear_async(int device, void *pointer, size_t bytes, uintptr_t stream);

// Reads each (fd, offset, length, device pointer) range of open files into
// device memory (wc_read_files_to_device), the GIL released; returns once
// every byte is there. Raises FormatError where a file ends early.
void read_files_to_device(const std::vector<std::tuple<int, uint64_t, uint64_t, uintptr_t>> &ranges);

// int32 values in `device`'s memory, from the stream-ordered allocator,
// that work queued on `stream` writes (the verdicts of an AEAD open on the
// GPU). Allocated and freed in stream order, so no other stream waits for
// them.
class DeviceInts {
 public:
  DeviceInts(int device, size_t count, uintptr_t stream);
  ~DeviceInts();
  DeviceInts(const DeviceInts &) = delete;
  DeviceInts &operator=(const DeviceInts &) = delete;

  int32_t *data() const { return data_; }
  // Waits until the stream has passed the work queued so far, then returns
  // the values; call it without the GIL.
  std::vector<int32_t> read() const;

 private:
  int device_;
  int32_t *data_ = nullptr;
  size_t count_ = 0;
  uintptr_t stream_ = 0;
};

}  // namespace wcpy
