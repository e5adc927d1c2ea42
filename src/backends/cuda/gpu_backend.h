// The GPU backend's entries for its table (core/backend_tables.h): device queries,
// lanes that move host memory through a device, and work on device memory
// queued on the caller's stream.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "core/cipher_backend.h"

namespace warpcrypt::cuda {

// The number of usable devices: 0 without a driver or a GPU.
int device_count();

// Whether device_count answers without starting the driver (see
// CudaBackend::device_count_is_quick).
bool device_count_is_quick();

// `device`'s properties; `device` is a valid ordinal.
wc_status device_info(wc_device_info *info, int device);

// The runtime's version and the driver's (0 without a driver).
wc_status versions(int *runtime, int *driver);

// A plain cipher keyed on CUDA device `device` (see
// CudaBackend::make_device_cipher).
wc_status make_device_cipher(std::unique_ptr<DeviceCipher> *out, int device, const wc_cipher &cipher,
                             wc_direction direction, const KeyMaterial &key);

// Whether this process has set `device` up for work already
// (current_device_context).
bool device_started(int device);

// Whether host memory is page-locked (cudaMallocHost, cudaHostRegister): the
// GPU reaches it at full PCIe speed with no staging copy.
bool page_locked(const void *host);

// Queues the transform of `len` bytes of device memory at stream byte
// `stream_offset` on `stream`, with checked arguments, on the device the
// data and stream live on (WorkDevice); WC_ERR_BACKEND_UNAVAILABLE for modes
// the GPU does not run.
wc_status transform_device_async(const wc_cipher &cipher, wc_direction direction, const KeyMaterial &key,
                                 uint64_t stream_offset, const uint8_t *in, uint8_t *out, size_t len,
                                 wc_cuda_stream stream);

// Queues a CBC/CFB encryption batch on device memory, where it lives;
// `messages` and `ivs` are host memory.
wc_status batch_encrypt_device_async(const wc_cipher &cipher, std::span<const uint8_t> key, bool padding,
                                     const uint8_t *in, uint8_t *out, std::span<const wc_batch_message> messages,
                                     const uint8_t *ivs, wc_cuda_stream stream);

// Device memory and stream order (stream_memory.cu): the entries of
// CudaBackend of the same names, each run with `device` current.
wc_status pointer_device(const void *pointer, int *device);
wc_status stream_wait(int device, wc_cuda_stream consumer, wc_cuda_stream producer);
wc_status alloc_async(int device, void **pointer, size_t bytes, wc_cuda_stream stream);
wc_status free_async(int device, void *pointer, wc_cuda_stream stream);
wc_status clear_async(int device, void *pointer, size_t bytes, wc_cuda_stream stream);
wc_status read_to_host(int device, void *host, const void *pointer, size_t bytes, wc_cuda_stream stream);

}  // namespace warpcrypt::cuda
