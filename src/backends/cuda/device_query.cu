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

namespace {

// The driver's library, or null without one. The runtime loads the same
// library by this name when it starts; the handle stays open, as the
// runtime's does, so loading it costs once.
void *driver_library() {
  static void *const library = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  return library;
}

}  // namespace

bool driver_present() { return driver_library() != nullptr; }

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
  // From the driver's library itself: the runtime's cudaDriverGetVersion
  // starts the driver first, a fifth of a second on the H100 machine, which
  // `warpcrypt --version` paid.
  using DriverGetVersion = int (*)(int *);
  void *library = driver_library();
  auto driver_get_version =
      library != nullptr ? reinterpret_cast<DriverGetVersion>(dlsym(library, "cuDriverGetVersion")) : nullptr;
  if (driver_get_version == nullptr || driver_get_version(driver) != 0) *driver = 0;
  return WC_OK;
}

}  // namespace warpcrypt::cuda
