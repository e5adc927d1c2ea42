// Device queries through the CUDA runtime. A machine without a driver or a
// GPU has zero devices rather than an error: that is the CPU fallback's
// normal case, not a failure.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "backends/cuda/gpu_backend.h"

namespace warpcrypt::cuda {

namespace {

// The driver's library, or null without one. The runtime loads the same
// library by this name when it starts; the handle stays open, as the
// runtime's does, so loading it costs once.
void *driver_library() {
  static void *const library = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  return library;
}

// The driver's CUDA version, read from its library without starting it (the
// runtime's cudaDriverGetVersion starts the driver first); 0 without one.
int driver_version() {
  using DriverGetVersion = int (*)(int *);
  void *library = driver_library();
  auto get = library != nullptr ? reinterpret_cast<DriverGetVersion>(dlsym(library, "cuDriverGetVersion")) : nullptr;
  int version = 0;
  if (get == nullptr || get(&version) != 0) return 0;
  return version;
}

int cuda_device_count() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error for later calls
    return 0;
  }
  return devices;
}

// The devices as NVML counts them, or nullopt where that count need not be
// CUDA's. NVML reads the driver's device list in about 10 ms; CUDA counts
// only by starting the driver, 0.18-0.43 s on the H100 and H200 machines,
// which a hybrid job that ends on its CPU lanes first would otherwise
// wait for. The two agree where CUDA shows every GPU the driver has: no
// CUDA_VISIBLE_DEVICES (which hides, reorders or names devices), no GPU in
// MIG mode (CUDA shows its instances instead), and a driver at least as new
// as the runtime (an older one leaves CUDA with none). Anywhere else, and
// wherever NVML fails, CUDA counts. The NVML calls are declared here, as
// its ABI has them, rather than built against its header, which the CUDA
// toolkit does not always carry; NVML_SUCCESS is 0 and
// NVML_ERROR_NOT_SUPPORTED (no MIG on this GPU) 3.
std::optional<int> nvml_device_count() {
  if (std::getenv("CUDA_VISIBLE_DEVICES") != nullptr || driver_version() < CUDART_VERSION) return std::nullopt;
  void *library = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (library == nullptr) return std::nullopt;
  using Device = void *;
  auto init = reinterpret_cast<int (*)()>(dlsym(library, "nvmlInit_v2"));
  auto shutdown = reinterpret_cast<int (*)()>(dlsym(library, "nvmlShutdown"));
  auto count = reinterpret_cast<int (*)(unsigned *)>(dlsym(library, "nvmlDeviceGetCount_v2"));
  auto handle = reinterpret_cast<int (*)(unsigned, Device *)>(dlsym(library, "nvmlDeviceGetHandleByIndex_v2"));
  auto mig_mode = reinterpret_cast<int (*)(Device, unsigned *, unsigned *)>(dlsym(library, "nvmlDeviceGetMigMode"));
  std::optional<int> devices;
  if (init != nullptr && shutdown != nullptr && count != nullptr && handle != nullptr && mig_mode != nullptr &&
      init() == 0) {
    unsigned found = 0;
    bool agrees = count(&found) == 0;
    for (unsigned i = 0; agrees && i < found; ++i) {
      Device device = nullptr;
      unsigned current = 0;
      unsigned pending = 0;
      const int mig = handle(i, &device) == 0 ? mig_mode(device, &current, &pending) : -1;
      agrees = mig == 3 || (mig == 0 && current == 0);
    }
    if (agrees) devices = static_cast<int>(found);
    shutdown();
  }
  dlclose(library);
  return devices;
}

}  // namespace

int device_count() {
  // Counted once: CUDA fixes its device list when the driver starts, and
  // the answer is asked for on every job.
  static const int devices = [] {
    const std::optional<int> counted = nvml_device_count();
    return counted ? *counted : cuda_device_count();
  }();
  return devices;
}

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
  *driver = driver_version();
  return WC_OK;
}

}  // namespace warpcrypt::cuda
