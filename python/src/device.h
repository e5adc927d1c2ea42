// What the extension asks of the CUDA runtime itself: which device owns a
// pointer, making a device current, and ordering one stream after another.
// The library works device memory on the device that holds it, whatever is
// current; the extension's own CUDA calls (events that order streams, the
// verdicts' memory, clearing) need that device current, which DeviceScope
// makes it for the length of a call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace wcpy {

// The ordinal of the device that owns `pointer`. Raises NoDevice without a
// usable device, InvalidArgument where `pointer` is not GPU memory.
int device_of(const void *pointer);

// Makes `device` current for one scope, then restores the previous device.
// A negative device leaves the current one.
class DeviceScope {
 public:
  explicit DeviceScope(int device);
  ~DeviceScope();
  DeviceScope(const DeviceScope &) = delete;
  DeviceScope &operator=(const DeviceScope &) = delete;

 private:
  int previous_ = -1;
};

// Makes work queued later on `consumer` wait for the work queued so far on
// `producer` (both cudaStream_t values), without blocking the host.
void order_after(uintptr_t consumer, uintptr_t producer);

// Queues zeros over `bytes` bytes of device memory at `pointer` on `stream`.
void clear_async(void *pointer, size_t bytes, uintptr_t stream);

// int32 values in device memory, from the stream-ordered allocator, that
// work queued on `stream` writes (the verdicts of an AEAD open on the GPU).
// Allocated and freed in stream order, so no other stream waits for them.
// Make it where the stream's device is current.
class DeviceInts {
 public:
  DeviceInts(size_t count, uintptr_t stream);
  ~DeviceInts();
  DeviceInts(const DeviceInts &) = delete;
  DeviceInts &operator=(const DeviceInts &) = delete;

  int32_t *data() const { return data_; }
  // Waits until the stream has passed the work queued so far, then returns
  // the values; call it without the GIL.
  std::vector<int32_t> read() const;

 private:
  int32_t *data_ = nullptr;
  size_t count_ = 0;
  uintptr_t stream_ = 0;
};

}  // namespace wcpy
