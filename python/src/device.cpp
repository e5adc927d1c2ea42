#include "device.h"

#include <nanobind/nanobind.h>

#include "errors.h"
#include "warpcrypt/warpcrypt.h"

namespace nb = nanobind;

namespace wcpy {
namespace {

wc_cuda_stream as_stream(uintptr_t handle) { return reinterpret_cast<wc_cuda_stream>(handle); }

void check(wc_status status) {
  if (status != WC_OK) fail(status);
}

}  // namespace

int device_of(const void *pointer) {
  int device = -1;
  const wc_status status = wc_device_of(pointer, &device);
  if (status == WC_ERR_INVALID_ARGUMENT) {
    throw Failure(status, "the __cuda_array_interface__ pointer is not CUDA device memory");
  }
  check(status);
  return device;
}

void order_after(int device, uintptr_t consumer, uintptr_t producer) {
  if (consumer != producer) check(wc_cuda_stream_wait(device, as_stream(consumer), as_stream(producer)));
}

void clear_async(int device, void *pointer, size_t bytes, uintptr_t stream) {
  check(wc_device_clear_async(device, pointer, bytes, as_stream(stream)));
}

void read_files_to_device(const std::vector<std::tuple<int, uint64_t, uint64_t, uintptr_t>> &ranges) {
  std::vector<wc_file_range> listed;
  listed.reserve(ranges.size());
  for (const auto &[fd, offset, len, memory] : ranges) {
    listed.push_back({fd, offset, len, reinterpret_cast<void *>(memory)});
  }
  wc_status status;
  {
    const nb::gil_scoped_release released;
    status = wc_read_files_to_device(listed.data(), listed.size());
  }
  if (status == WC_ERR_FORMAT) throw Failure(status, "truncated: a file ended while its bytes were read");
  check(status);
}

DeviceInts::DeviceInts(int device, size_t count, uintptr_t stream) : device_(device), count_(count), stream_(stream) {
  void *memory = nullptr;
  check(wc_device_alloc_async(device, &memory, sizeof(int32_t) * (count == 0 ? 1 : count), as_stream(stream)));
  data_ = static_cast<int32_t *>(memory);
}

DeviceInts::~DeviceInts() { (void)wc_device_free_async(device_, data_, as_stream(stream_)); }

std::vector<int32_t> DeviceInts::read() const {
  std::vector<int32_t> values(count_);
  check(wc_device_read(device_, values.data(), data_, sizeof(int32_t) * count_, as_stream(stream_)));
  return values;
}

}  // namespace wcpy
