// The GPU backend's entries for the engine: lanes that move host memory
// through a device.
#pragma once

#include <memory>
#include <vector>

#include "core/backend.h"

namespace warpcrypt::cuda {

// Appends `count` lanes on CUDA device `device`, each a stream with a pinned
// and a device buffer of `capacity` bytes (pooled per device, wiped when the
// lane is destroyed). `backend` is gpu or gpu-ref (the reference kernels).
// Fails with WC_ERR_NO_DEVICE without a usable device, WC_ERR_INVALID_ARGUMENT
// for an ordinal out of range and WC_ERR_BACKEND_UNAVAILABLE for modes the GPU
// does not run.
wc_status make_lanes(std::vector<std::unique_ptr<Lane>> *out, int device, unsigned count, wc_backend backend,
                     const wc_cipher &cipher, wc_direction direction, const KeyMaterial &key, size_t capacity);

// Whether host memory is page-locked (cudaMallocHost, cudaHostRegister): the
// GPU reaches it at full PCIe speed with no staging copy.
bool page_locked(const void *host);

}  // namespace warpcrypt::cuda
