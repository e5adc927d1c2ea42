// Device queries through the CUDA runtime. A machine without a driver or a
// GPU reports zero devices rather than an error: that is the CPU fallback's
// normal case, not a failure.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

#include "warpcrypt/warpcrypt.h"

extern "C" {

wc_status wc_device_count(int *count) {
  if (count == nullptr) return WC_ERR_INVALID_ARGUMENT;
  *count = 0;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error for later calls
    return WC_OK;
  }
  *count = devices;
  return WC_OK;
}

wc_status wc_device_info_get(wc_device_info *info, int device) {
  if (info == nullptr) return WC_ERR_INVALID_ARGUMENT;
  std::memset(info, 0, sizeof *info);
  int devices = 0;
  wc_device_count(&devices);
  if (device < 0 || device >= devices) return WC_ERR_NO_DEVICE;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) return WC_ERR_NO_DEVICE;
  std::snprintf(info->name, sizeof info->name, "%s", prop.name);
  info->compute_major = prop.major;
  info->compute_minor = prop.minor;
  info->multiprocessors = prop.multiProcessorCount;
  info->global_memory_bytes = prop.totalGlobalMem;
  if (cudaDeviceGetPCIBusId(info->pci_bus_id, sizeof info->pci_bus_id, device) != cudaSuccess) {
    info->pci_bus_id[0] = '\0';
  }
  return WC_OK;
}

int wc_built_with_cuda(void) { return 1; }

}  // extern "C"
