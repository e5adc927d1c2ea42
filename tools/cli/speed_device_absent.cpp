// `warpcrypt speed` in a build without CUDA: host memory only.
#include "cli_error.h"
#include "speed_workload.h"

namespace warpcrypt::cli {

std::unique_ptr<Workload> make_device_workload(const WorkloadSpec &) {
  throw CliError("--resident device needs a build with CUDA", WC_KIND_NO_DEVICE);
}

std::shared_ptr<uint8_t> allocate_host_buffer(size_t bytes, bool) { return allocate_pageable_buffer(bytes); }

std::string device_description(wc_backend, const EngineFlags &) { return "cpu"; }

}  // namespace warpcrypt::cli
