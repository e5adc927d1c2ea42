// Per-device state shared by every cipher on that device (the AES tables in
// device memory and the SM count, set up once per device and process), and
// which device a piece of work runs on.
#pragma once

#include <cuda_runtime_api.h>

#include <initializer_list>
#include <optional>

#include "backends/cuda/block_mode_kernels.cuh"
#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::cuda {

struct DeviceContext {
  int device = -1;
  int multiprocessors = 0;
  // mma with .b1 operands and AND (sm_80 on): GCM's bulk kernel hashes on
  // the tensor cores (gf_mma_absorb).
  bool binary_tensor_cores = false;
  AesTablesView tables{};
};

// The context of the calling thread's current device; nullptr if it cannot
// be set up (no device, out of memory).
const DeviceContext *current_device_context();

// Whether current_device_context has set `device` up, without touching the
// driver.
bool device_context_ready(int device);

// Maps a CUDA error to WC_ERR_DEVICE, clearing it so later calls start clean.
wc_status device_status(cudaError_t error);

// Makes `device` current for a scope and restores the caller's device after:
// lanes run on the caller's thread too, whose current device is its own.
class CurrentDevice {
 public:
  explicit CurrentDevice(int device);
  ~CurrentDevice();
  CurrentDevice(const CurrentDevice &) = delete;
  CurrentDevice &operator=(const CurrentDevice &) = delete;
  wc_status status() const { return status_; }

 private:
  int previous_ = -1;
  wc_status status_ = WC_OK;
};

// Device-pointer work runs where its data lives, whatever device the
// caller's thread has current: on the device of `stream`, or, for a default
// stream (null, cudaStreamLegacy, cudaStreamPerThread), on the device whose
// memory holds the first of `buffers` that is device memory, else on the
// current device. Managed and page-locked host memory reach every device.
// Device memory of another device than the one chosen is
// WC_ERR_INVALID_ARGUMENT: a kernel would reach it only through peer access,
// which the library does not switch on behind the caller's back. The chosen
// device is current while this object lives.
class WorkDevice {
 public:
  WorkDevice(cudaStream_t stream, std::initializer_list<const void *> buffers);
  WorkDevice(const WorkDevice &) = delete;
  WorkDevice &operator=(const WorkDevice &) = delete;
  wc_status status() const { return status_; }

 private:
  std::optional<CurrentDevice> current_;
  wc_status status_ = WC_OK;
};

}  // namespace warpcrypt::cuda
