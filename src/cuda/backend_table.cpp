// The CUDA backend's table (core/backends.h). Its entries come from the
// CUDA sources, or in a build without CUDA from cuda_absent.cpp and
// aead_absent.cpp, which answer WC_ERR_NO_DEVICE.
#include "core/backends.h"
#include "cuda/aead_gpu.h"
#include "cuda/gpu_backend.h"

namespace warpcrypt {

const CudaBackend kCudaBackend = {
    .make_lanes = cuda::make_lanes,
    .page_locked = cuda::page_locked,
    .make_aead = cuda::make_aead,
};

}  // namespace warpcrypt
