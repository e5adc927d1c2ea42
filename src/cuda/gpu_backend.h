// The GPU backend's entry for the backend table: host-pointer work copied
// through the GPU.
#pragma once

#include "core/backend.h"

namespace warpcrypt::cuda {

// Fails with WC_ERR_NO_DEVICE without a usable device and with
// WC_ERR_BACKEND_UNAVAILABLE for modes the GPU does not run.
wc_status make_cipher(BackendCipher *out, wc_backend backend, const wc_cipher &cipher,
                      wc_direction direction, const KeyMaterial &key);

// Whether host memory is page-locked (cudaMallocHost, cudaHostRegister): the
// GPU reaches it at full PCIe speed with no staging copy.
bool page_locked(const void *host);

}  // namespace warpcrypt::cuda
