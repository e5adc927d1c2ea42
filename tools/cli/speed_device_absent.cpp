// `warpcrypt speed` in a build without CUDA: host memory only.
#include "cli_error.h"
#include "speed_workload.h"

namespace warpcrypt::cli {

std::unique_ptr<Workload> make_device_workload(const WorkloadSpec &) {
  throw CliError("--resident device needs a build with CUDA", WC_KIND_NO_DEVICE);
}

bool can_pin_memory() { return false; }

std::shared_ptr<uint8_t> allocate_pinned_buffer(size_t) {
  throw CliError("--memory pinned needs a build with CUDA; use --memory pageable", WC_KIND_NO_DEVICE);
}

std::string device_description(wc_backend, const EngineFlags &) { return "cpu"; }

}  // namespace warpcrypt::cli
