// Whether the NVIDIA kernel driver can run this library's CUDA runtime, read
// from the driver's version file (/proc/driver/nvidia/version) rather than
// from its user-space library: loading libcuda took 1-2 ms of a 55 ms hybrid
// job on the H200 machine, which only needed to know whether CUDA's device
// list is the driver's (device_query.cu). Plain C++, built with and without
// CUDA, so that its tests run where there is no GPU.
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace warpcrypt::cuda {

// A driver's version, 580.95.05 as {580, 95, 5}; a part it does not name is 0.
using DriverVersion = std::array<int, 3>;

// The driver's version from the first line of its version file; nullopt
// where that line names none.
std::optional<DriverVersion> kernel_driver_version(std::string_view version_file);

// The oldest driver that runs every CUDA runtime of this major version
// (CUDA's minor version compatibility, from 11 on); nullopt for a major
// version this library does not know, where the caller must ask CUDA.
std::optional<DriverVersion> oldest_driver(int runtime_major);

// Whether a driver with this version file runs a runtime of `runtime_version`
// (CUDART_VERSION's form, 13000 for 13.0). False where either is unknown.
bool driver_runs_runtime(std::string_view version_file, int runtime_version);

}  // namespace warpcrypt::cuda
