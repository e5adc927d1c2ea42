// The workers of one job: CPU lanes and GPU lanes, picked from the options,
// all taking chunks from one queue. Whoever is free takes the next chunk, so
// fast lanes do more of the work and no static split has to be right.
#pragma once

#include <cstddef>
#include <functional>
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
// already resolved by the caller.
wc_status resolve_shape(EngineShape *shape, const wc_options &options, wc_backend backend);

class LaneSet {
 public:
  // Builds the lanes, each with `capacity` bytes of staging: cpu_lanes CPU
  // lanes for cpu and hybrid, `streams` GPU lanes per device entry for gpu
  // and hybrid. Hybrid falls back to CPU lanes alone for modes the
  // GPU does not run, or without a device.
  static wc_status create(std::unique_ptr<LaneSet> *out, const EngineShape &shape, const wc_cipher &cipher,
                          wc_direction direction, const KeyMaterial &key, size_t capacity);

  // Each lane, on its own thread, calls step(lane, &finished) until a call
  // sets `finished`, `monitor` stops, or a call fails (which stops the job
  // through `monitor`). A step claims one chunk and processes it.
  void run(JobMonitor &monitor, const std::function<wc_status(Lane &, bool *finished)> &step);
  // run() over the chunk indices [0, count), each claimed once.
  void run_indexed(size_t count, JobMonitor &monitor, const std::function<wc_status(Lane &, size_t)> &work);

  size_t size() const { return lanes_.size(); }
  // gpu when any GPU lane took part in the last run, else cpu.
  wc_backend last_backend() const { return last_backend_; }

 private:
  std::vector<std::unique_ptr<Lane>> lanes_;
  wc_backend last_backend_ = WC_BACKEND_CPU;
};

}  // namespace warpcrypt::engine
