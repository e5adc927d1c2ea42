// Device memory, page-locked host memory and stream order for callers that
// link no CUDA runtime of their own (warpcrypt/device.h, from wc_device_of
// on): the Python package's verdicts and its waits on the streams its
// frameworks queue on, and the CLI's `speed` buffers. Every call on a device
// runs with that device current and restores the caller's device.
#include <cuda_runtime.h>

#include "backends/cuda/device_context.h"
#include "backends/cuda/gpu_backend.h"

namespace warpcrypt::cuda {
namespace {

bool is_default_stream(cudaStream_t stream) {
  return stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread;
}

// The device a call names: itself, or for -1 the device of the first stream
// that is no default stream, else the calling thread's current device.
int named_device(int device, std::initializer_list<cudaStream_t> streams) {
  for (cudaStream_t stream : streams) {
    if (device >= 0 || is_default_stream(stream)) continue;
    if (cudaStreamGetDevice(stream, &device) != cudaSuccess) cudaGetLastError();
  }
  if (device < 0 && cudaGetDevice(&device) != cudaSuccess) cudaGetLastError();
  return device;
}

// The call's device made current for one call, and `streams` checked to be
// its own: work queued on another device's stream would run where the
// caller did not say.
class OnDevice {
 public:
  OnDevice(int device, std::initializer_list<cudaStream_t> streams)
      : device_(named_device(device, streams)), current_(device_) {
    status_ = current_.status();
    for (cudaStream_t stream : streams) {
      int owner = -1;
      if (status_ != WC_OK || is_default_stream(stream)) continue;
      if (cudaStreamGetDevice(stream, &owner) != cudaSuccess) {
        cudaGetLastError();
        status_ = WC_ERR_INVALID_ARGUMENT;  // not a stream of this process's devices
      } else if (owner != device_) {
        status_ = WC_ERR_INVALID_ARGUMENT;
      }
    }
  }
  wc_status status() const { return status_; }

 private:
  int device_;
  CurrentDevice current_;
  wc_status status_ = WC_OK;
};

cudaStream_t as_cuda(wc_cuda_stream stream) { return reinterpret_cast<cudaStream_t>(stream); }

}  // namespace

wc_status pointer_device(const void *pointer, int *device) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, pointer) != cudaSuccess) {
    cudaGetLastError();
    return WC_ERR_INVALID_ARGUMENT;
  }
  if (attributes.type != cudaMemoryTypeDevice && attributes.type != cudaMemoryTypeManaged) {
    return WC_ERR_INVALID_ARGUMENT;
  }
  *device = attributes.device;
  return WC_OK;
}

wc_status stream_wait(int device, wc_cuda_stream consumer, wc_cuda_stream producer) {
  const OnDevice on(device, {as_cuda(consumer), as_cuda(producer)});
  if (on.status() != WC_OK) return on.status();
  // An event marks how far the producer has queued; the consumer's later
  // work waits on the device for it, and the host never does.
  cudaEvent_t event = nullptr;
  cudaError_t error = cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
  if (error == cudaSuccess) error = cudaEventRecord(event, as_cuda(producer));
  if (error == cudaSuccess) error = cudaStreamWaitEvent(as_cuda(consumer), event, 0);
  // Destroying a recorded event is safe: the wait holds what it needs.
  if (event != nullptr) cudaEventDestroy(event);
  return device_status(error);
}

wc_status alloc_async(int device, void **pointer, size_t bytes, wc_cuda_stream stream) {
  const OnDevice on(device, {as_cuda(stream)});
  if (on.status() != WC_OK) return on.status();
  const cudaError_t error = cudaMallocAsync(pointer, bytes, as_cuda(stream));
  if (error == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    return WC_ERR_OUT_OF_MEMORY;
  }
  return device_status(error);
}

wc_status free_async(int device, void *pointer, wc_cuda_stream stream) {
  const OnDevice on(device, {as_cuda(stream)});
  if (on.status() != WC_OK) return on.status();
  return device_status(cudaFreeAsync(pointer, as_cuda(stream)));
}

wc_status clear_async(int device, void *pointer, size_t bytes, wc_cuda_stream stream) {
  const OnDevice on(device, {as_cuda(stream)});
  if (on.status() != WC_OK) return on.status();
  return device_status(cudaMemsetAsync(pointer, 0, bytes, as_cuda(stream)));
}

wc_status read_to_host(int device, void *host, const void *pointer, size_t bytes, wc_cuda_stream stream) {
  const OnDevice on(device, {as_cuda(stream)});
  if (on.status() != WC_OK) return on.status();
  cudaError_t error = cudaMemcpyAsync(host, pointer, bytes, cudaMemcpyDeviceToHost, as_cuda(stream));
  if (error == cudaSuccess) error = cudaStreamSynchronize(as_cuda(stream));
  return device_status(error);
}

}  // namespace warpcrypt::cuda
