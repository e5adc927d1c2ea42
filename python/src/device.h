// What the extension asks of the CUDA runtime itself: which device owns a
// pointer, making a device current, and ordering one stream after another.
// The library's device calls run on the current device, and the extension
// links the same static runtime, so a device made current here is the one
// the library sees.
#pragma once

#include <cstdint>

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

}  // namespace wcpy
