// Per-device state shared by every cipher on that device: the AES tables in
// device memory and the SM count, set up once per device and process.
#pragma once

#include <cuda_runtime_api.h>

#include "backends/cuda/block_mode_kernels.cuh"
#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::cuda {

struct DeviceContext {
  int device = -1;
  int multiprocessors = 0;
  AesTablesView tables{};
};

// The context of the calling thread's current device; nullptr if it cannot
// be set up (no device, out of memory).
const DeviceContext *current_device_context();

// Maps a CUDA error to WC_ERR_DEVICE, clearing it so later calls start clean.
wc_status device_status(cudaError_t error);

}  // namespace warpcrypt::cuda
