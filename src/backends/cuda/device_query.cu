// Device queries through the CUDA runtime. A machine without a driver or a
// GPU has zero devices rather than an error: that is the CPU fallback's
// normal case, not a failure.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstring>

#include "backends/cuda/gpu_backend.h"

namespace warpcrypt::cuda {

int device_count() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error for later calls
    return 0;
  }
  return devices;
}

bool driver_present() {
  // The runtime loads the same library by this name when it starts; the
  // handle stays open, as the runtime's does, so loading it costs once.
  static const bool present = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL) != nullptr;
  return present;
}

wc_status device_info(wc_device_info *info, int device) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    cudaGetLastError();
    return WC_ERR_NO_DEVICE;
  }
  std::snprintf(info->name, sizeof info->name, "%s", prop.name);
  info->compute_major = prop.major;
  info->compute_minor = prop.minor;
  info->multiprocessors = prop.multiProcessorCount;
  info->global_memory_bytes = prop.totalGlobalMem;
  if (cudaDeviceGetPCIBusId(info->pci_bus_id, sizeof info->pci_bus_id, device) != cudaSuccess) {
    cudaGetLastError();
    info->pci_bus_id[0] = '\0';
  }
  return WC_OK;
}

wc_status versions(int *runtime, int *driver) {
  if (cudaRuntimeGetVersion(runtime) != cudaSuccess) *runtime = CUDART_VERSION;
  if (cudaDriverGetVersion(driver) != cudaSuccess) {
    cudaGetLastError();
    *driver = 0;
  }
  return WC_OK;
}

}  // namespace warpcrypt::cuda
