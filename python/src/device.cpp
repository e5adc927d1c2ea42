#include "device.h"

#include "errors.h"

#if WARPCRYPT_PY_CUDA
#include <cuda_runtime.h>
#endif

namespace wcpy {

#if WARPCRYPT_PY_CUDA

namespace {

[[noreturn]] void device_failure(cudaError_t error) {
  cudaGetLastError();  // clear it, as the library does, so later calls start clean
  throw Failure(WC_ERR_DEVICE, std::string("CUDA: ") + cudaGetErrorString(error));
}

}  // namespace

int device_of(const void *pointer) {
  int count = 0;
  if (wc_device_count(&count) != WC_OK || count == 0) fail(WC_ERR_NO_DEVICE);
  cudaPointerAttributes attributes{};
  const cudaError_t error = cudaPointerGetAttributes(&attributes, pointer);
  if (error != cudaSuccess) device_failure(error);
  if (attributes.type != cudaMemoryTypeDevice && attributes.type != cudaMemoryTypeManaged) {
    throw Failure(WC_ERR_INVALID_ARGUMENT, "the __cuda_array_interface__ pointer is not CUDA device memory");
  }
  return attributes.device;
}

DeviceScope::DeviceScope(int device) {
  if (device < 0) return;
  int current = 0;
  cudaError_t error = cudaGetDevice(&current);
  if (error == cudaSuccess && current != device) error = cudaSetDevice(device);
  if (error != cudaSuccess) device_failure(error);
  if (current != device) previous_ = current;
}

DeviceScope::~DeviceScope() {
  if (previous_ >= 0 && cudaSetDevice(previous_) != cudaSuccess) cudaGetLastError();
}

void order_after(uintptr_t consumer, uintptr_t producer) {
  if (consumer == producer) return;
  cudaEvent_t event = nullptr;
  cudaError_t error = cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
  if (error == cudaSuccess) error = cudaEventRecord(event, reinterpret_cast<cudaStream_t>(producer));
  if (error == cudaSuccess) error = cudaStreamWaitEvent(reinterpret_cast<cudaStream_t>(consumer), event, 0);
  // Destroying a recorded event is safe: the runtime frees it once it fires.
  if (event != nullptr) cudaEventDestroy(event);
  if (error != cudaSuccess) device_failure(error);
}

void clear_async(void *pointer, size_t bytes, uintptr_t stream) {
  const cudaError_t error = cudaMemsetAsync(pointer, 0, bytes, reinterpret_cast<cudaStream_t>(stream));
  if (error != cudaSuccess) device_failure(error);
}

DeviceInts::DeviceInts(size_t count, uintptr_t stream) : count_(count), stream_(stream) {
  void *memory = nullptr;
  const cudaError_t error = cudaMallocAsync(&memory, sizeof(int32_t) * (count == 0 ? 1 : count),
                                            reinterpret_cast<cudaStream_t>(stream));
  if (error != cudaSuccess) device_failure(error);
  data_ = static_cast<int32_t *>(memory);
}

DeviceInts::~DeviceInts() {
  if (cudaFreeAsync(data_, reinterpret_cast<cudaStream_t>(stream_)) != cudaSuccess) cudaGetLastError();
}

std::vector<int32_t> DeviceInts::read() const {
  // A copy into pageable memory returns once it is done, which is once the
  // stream has run everything queued before it.
  std::vector<int32_t> values(count_);
  const cudaError_t error = cudaMemcpyAsync(values.data(), data_, sizeof(int32_t) * count_, cudaMemcpyDeviceToHost,
                                            reinterpret_cast<cudaStream_t>(stream_));
  if (error != cudaSuccess) device_failure(error);
  return values;
}

#else  // a build without the CUDA backend has no devices

int device_of(const void *) { fail(WC_ERR_NO_DEVICE); }

DeviceScope::DeviceScope(int) {}

DeviceScope::~DeviceScope() = default;

void order_after(uintptr_t, uintptr_t) {}

void clear_async(void *, size_t, uintptr_t) { fail(WC_ERR_NO_DEVICE); }

DeviceInts::DeviceInts(size_t, uintptr_t) { fail(WC_ERR_NO_DEVICE); }

DeviceInts::~DeviceInts() = default;

std::vector<int32_t> DeviceInts::read() const { fail(WC_ERR_NO_DEVICE); }

#endif

}  // namespace wcpy
