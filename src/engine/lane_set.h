// The cipher lanes of one job: CPU lanes and GPU lanes, picked from the
// options, which the lane scheduler (engine/lane_scheduler.h) runs.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "core/backend.h"
#include "core/secret_bytes.h"
#include "engine/job_monitor.h"
#include "engine/lane_scheduler.h"

namespace warpcrypt::engine {

// The engine's view of wc_options: defaults applied and checked.
struct EngineShape {
  wc_backend backend = WC_BACKEND_AUTO;  // resolved: cpu, gpu or hybrid
  unsigned cpu_lanes = 0;
  unsigned streams = 0;  // GPU lanes per device entry
  std::vector<int> devices;
  size_t chunk_bytes = 0;
  // The plain-cipher GPU lanes (LaneSet) of a job that asked for hybrid
  // join late, on trial (engine/lane_scheduler.h), unless the environment
  // sets WARPCRYPT_HYBRID_GPU=always; those of auto's hybrid jobs (from the
  // measured break-even sizes on) take part from the start, as the gpu
  // backend's do.
  bool gpu_lanes_late = false;
  // The plain-cipher lanes claim units of unit_bytes: chunk_bytes, except
  // where GPU lanes join late and no chunk size was set: the CPU lanes then
  // claim WC_DEFAULT_CPU_CHUNK_BYTES units, as the cpu backend's do, and the
  // GPU lanes gpu_claim_units of them at once (WC_DEFAULT_CHUNK_BYTES).
  size_t unit_bytes = 0;
  size_t gpu_claim_units = 1;
  // Where GPU lanes join late and the threads were not set, the CPU lanes
  // beyond cpu_lanes: they run while the GPU lanes, which take their cores,
  // do not.
  unsigned spare_cpu_lanes = 0;
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
  // Builds the lanes, each with staging for its claim (shape.unit_bytes,
  // times gpu_claim_units for late GPU lanes) and `slack` bytes more:
  // cpu_lanes (plus spare_cpu_lanes) CPU lanes for cpu and hybrid, `streams`
  // GPU lanes per device entry for gpu and hybrid. Where the GPU lanes join
  // late (shape.gpu_lanes_late) they are built when a job first starts them
  // (late()). Hybrid runs on the CPU lanes alone for modes the GPU does not
  // run; a device that fails is an error.
  static wc_status create(std::unique_ptr<LaneSet> *out, const EngineShape &shape, const wc_cipher &cipher,
                          wc_direction direction, const KeyMaterial &key, size_t slack);

  // The lanes that start with a job, numbered from 0.
  size_t size() const { return ready_; }
  // The late GPU lanes, numbered after the others, for the scheduler to
  // start and try; `staged` says whether this job's data reaches them
  // through their staging buffers (files, pipes, pageable memory), which
  // picks the verdict of earlier trials. nullptr where no lanes join late.
  LateLanes *late(bool staged);
  bool has_late() const { return late_.has_value(); }
  Lane &operator[](size_t index) { return *lanes_[index]; }

 private:
  explicit LaneSet(const KeyMaterial &key) : key_(key.key), iv_(key.iv) {}
  wc_status start_gpu_lanes();

  // The ready lanes, then the slots of the late ones, filled when they start.
  std::vector<std::unique_ptr<Lane>> lanes_;
  size_t ready_ = 0;
  std::optional<LateLanes> late_;
  // What the GPU lanes are built from.
  EngineShape shape_;
  const wc_cipher *cipher_ = nullptr;
  wc_direction direction_ = WC_ENCRYPT;
  SecretBytes key_;
  SecretBytes iv_;
  size_t gpu_capacity_ = 0;
  std::mutex start_mutex_;
  std::optional<wc_status> started_;  // the start's outcome, once tried
};

}  // namespace warpcrypt::engine
