// The CUDA backend's table (core/backend_tables.h). A build without CUDA links
// absent_table.cpp in its place.
#include "core/backend_tables.h"
#include "backends/cuda/aead_gpu.h"
#include "backends/cuda/gpu_backend.h"
#include "backends/cuda/lane_buffers.h"
#include "backends/cuda/pinned_pool.h"

namespace warpcrypt {

const CudaBackend kCudaBackend = {
    .compiled_in = true,
    .device_count = cuda::device_count,
    .device_count_is_quick = cuda::device_count_is_quick,
    .device_info = cuda::device_info,
    .versions = cuda::versions,
    .make_device_cipher = cuda::make_device_cipher,
    .device_started = cuda::device_started,
    .page_locked = cuda::page_locked,
    .make_aead = cuda::make_aead,
    .lease_transfer = cuda::lease_transfer,
    .transform_device_async = cuda::transform_device_async,
    .batch_encrypt_device_async = cuda::batch_encrypt_device_async,
    .pointer_device = cuda::pointer_device,
    .stream_wait = cuda::stream_wait,
    .alloc_async = cuda::alloc_async,
    .free_async = cuda::free_async,
    .clear_async = cuda::clear_async,
    .read_to_host = cuda::read_to_host,
    .alloc_pinned = cuda::take_pinned,
    .free_pinned = cuda::give_pinned,
};

}  // namespace warpcrypt
