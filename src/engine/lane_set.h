// The cipher lanes of one job: CPU lanes and GPU lanes, picked from the
// options, which the lane scheduler (engine/lane_scheduler.h) runs.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "core/cipher_backend.h"
#include "core/secret_bytes.h"
#include "engine/job_monitor.h"
#include "engine/late_gpu_lanes.h"
#include "engine/lane_scheduler.h"
#include "engine/placement.h"

namespace warpcrypt::engine {

class LaneSet {
 public:
  // Builds the lanes, each with staging for its claim (shape.unit_bytes(),
  // times gpu_claim_units for late GPU lanes) and `slack` bytes more:
  // cpu_lanes (plus spare_cpu_lanes) CPU lanes for cpu and hybrid, `streams`
  // GPU lanes per device entry for gpu and hybrid. Where the GPU lanes join
  // late (shape.gpu_lanes_late()) they are built when a job first starts them
  // (late()), on the devices shape.device_check() finds where it is set.
  // Hybrid runs on the CPU lanes alone for modes the GPU does not run; a
  // device that fails is an error.
  static wc_status create(std::unique_ptr<LaneSet> *out, const Placement &shape, const wc_cipher &cipher,
                          wc_direction direction, const KeyMaterial &key, size_t slack);

  // The lanes that start with a job, numbered from 0.
  size_t size() const { return ready_; }
  // The late GPU lanes, numbered after the others, for the scheduler to
  // start and try (LateGpuLanes::late); nullptr where no lanes join late.
  LateLanes *late(bool staged);
  bool has_late() const { return late_ != nullptr; }
  Lane &operator[](size_t index) { return index < ready_ ? *lanes_[index] : *late_lanes_[index - ready_]; }

 private:
  explicit LaneSet(const KeyMaterial &key) : key_(key.key), iv_(key.iv) {}
  wc_status build_gpu_lanes(const std::vector<int> &devices, unsigned streams, const wc_cipher &cipher,
                            wc_direction direction, size_t capacity);

  // The ready lanes, and the late ones once started: the other lanes run
  // while the late ones are placed and built.
  std::vector<std::unique_ptr<Lane>> lanes_;
  size_t ready_ = 0;
  std::vector<std::unique_ptr<Lane>> late_lanes_;
  SecretBytes key_;
  SecretBytes iv_;
  std::unique_ptr<LateGpuLanes> late_;  // last: its start builds into late_lanes_
};

}  // namespace warpcrypt::engine
