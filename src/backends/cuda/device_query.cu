// Device queries through the CUDA runtime. A machine without a driver or a
// GPU has zero devices rather than an error: that is the CPU fallback's
// normal case, not a failure.
#include <cuda_runtime.h>
#include <dirent.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/cuda/driver_version.h"
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

// Whether the kernel driver runs this library's runtime, from its version
// file, without loading the driver's library; false without the file.
bool listed_driver_runs_runtime() {
  std::ifstream file("/proc/driver/nvidia/version");
  std::string first_line;
  return std::getline(file, first_line) && driver_runs_runtime(first_line, CUDART_VERSION);
}

int cuda_device_count() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error for later calls
    return 0;
  }
  return devices;
}

// The names in folder `path` but "." and "..", or nullopt where it cannot
// be read.
std::optional<std::vector<std::string>> folder_entries(const std::string &path) {
  DIR *folder = opendir(path.c_str());
  if (folder == nullptr) return std::nullopt;
  std::vector<std::string> names;
  while (const dirent *entry = readdir(folder)) {
    const std::string_view name = entry->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  closedir(folder);
  return names;
}

// Whether a GPU is split into MIG instances: the driver lists each GPU
// instance's capability (/proc/driver/nvidia/capabilities/gpuN/mig/giM).
bool mig_instances_listed() {
  const std::string capabilities = "/proc/driver/nvidia/capabilities/";
  for (const std::string &gpu : folder_entries(capabilities).value_or(std::vector<std::string>{})) {
    if (!gpu.starts_with("gpu")) continue;
    for (const std::string &entry : folder_entries(capabilities + gpu + "/mig").value_or(std::vector<std::string>{})) {
      if (entry.starts_with("gi")) return true;
    }
  }
  return false;
}

// The GPUs as the kernel driver lists them, a folder each under
// /proc/driver/nvidia/gpus, read in microseconds; nullopt where that list
// need not be CUDA's device list: CUDA_VISIBLE_DEVICES set (it hides,
// reorders or names devices), a GPU split into MIG instances (CUDA shows
// the instances), a driver that cannot run this runtime or whose version
// file does not say (CUDA gets none, or may), or no list to read (no
// driver, or one that keeps no such list). There CUDA counts, which starts
// the driver: 0.18-0.43 s on the H100 and H200 machines. NVML counted here
// before, in about 20 ms, but loading it and attaching its devices slowed
// the lanes of the job it ran beside by up to 6 %
// (docs/lab-notes/performance-history.md). A container lists only the GPUs
// it was given (the NVIDIA container toolkit masks the rest of the folder).
// One case the list cannot see: a GPU in MIG mode with no instance yet,
// which CUDA does not show. GPU lanes placed on it fail to start, and the
// job with them; a hybrid job that ends before its late lanes start runs
// on its CPU lanes there, as it does where a GPU would not pay.
std::optional<int> listed_device_count() {
  if (std::getenv("CUDA_VISIBLE_DEVICES") != nullptr || !listed_driver_runs_runtime()) return std::nullopt;
  if (mig_instances_listed()) return std::nullopt;
  const std::optional<std::vector<std::string>> gpus = folder_entries("/proc/driver/nvidia/gpus");
  if (!gpus) return std::nullopt;
  return static_cast<int>(gpus->size());
}

// Counted once: CUDA fixes its device list when the driver starts, and the
// answer is asked for on every job.
const std::optional<int> &listed_devices() {
  static const std::optional<int> listed = listed_device_count();
  return listed;
}

}  // namespace

int device_count() {
  static const int devices = listed_devices() ? *listed_devices() : cuda_device_count();
  return devices;
}

// The list first: where it answers, the driver's library is not loaded.
bool device_count_is_quick() { return listed_devices().has_value() || driver_library() == nullptr; }

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
