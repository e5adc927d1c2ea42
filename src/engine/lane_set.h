// The cipher lanes of one job: CPU lanes and GPU lanes, picked from the
// options, which the lane scheduler (engine/lane_scheduler.h) runs.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "core/backend.h"
#include "engine/job_monitor.h"

namespace warpcrypt::engine {

// The engine's view of wc_options: defaults applied and checked.
struct EngineShape {
  wc_backend backend = WC_BACKEND_AUTO;  // resolved: cpu, gpu or hybrid
  unsigned cpu_lanes = 0;
  unsigned streams = 0;  // GPU lanes per device entry
  std::vector<int> devices;
  size_t chunk_bytes = 0;
};

// Checks the engine fields of `options` (chunk size, streams, device list)
// and applies the defaults. `backend` is the backend to build for, auto
// already resolved by the caller. A refused field is WC_ERR_INVALID_ARGUMENT,
// and fails `monitor`'s job, where given, with the rule in words; a device
// that is not there is WC_ERR_NO_DEVICE (check_devices).
wc_status resolve_shape(EngineShape *shape, const wc_options &options, wc_backend backend,
                        JobMonitor *monitor = nullptr);

// Nothing falls back to the CPU in silence: a device list that names a
// device this machine lacks, and the gpu or hybrid backend without a device,
// are WC_ERR_NO_DEVICE, with a sentence that says how to run on the CPU.
// `backend` as for resolve_shape.
wc_status check_devices(const wc_options &options, wc_backend backend, JobMonitor *monitor = nullptr);

class LaneSet {
 public:
  // Builds the lanes, each with `capacity` bytes of staging: cpu_lanes CPU
  // lanes for cpu and hybrid, `streams` GPU lanes per device entry for gpu
  // and hybrid. Hybrid runs CPU lanes alone for modes the GPU does not
  // run; a device that fails is an error.
  static wc_status create(std::unique_ptr<LaneSet> *out, const EngineShape &shape, const wc_cipher &cipher,
                          wc_direction direction, const KeyMaterial &key, size_t capacity);

  size_t size() const { return lanes_.size(); }
  // Lane `index` of the scheduler's lane numbers, GPU lanes first.
  Lane &operator[](size_t index) { return *lanes_[index]; }

 private:
  std::vector<std::unique_ptr<Lane>> lanes_;
};

}  // namespace warpcrypt::engine
