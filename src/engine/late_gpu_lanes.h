// The GPU lanes of a job that asked for hybrid, which join it late, on
// trial (engine/lane_scheduler.h), whatever they run: a plain cipher's
// chunks (LaneSet) or an AEAD stream's windows (engine/aead_stream.cpp).
// Decided here, once for both: the devices they run on and how many lanes,
// the CPU lanes they displace, what starting them costs, and the verdicts
// of earlier trials on the same kind of work. What a lane is stays with
// the caller, which builds them when a job first starts them.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/lane_scheduler.h"
#include "engine/placement.h"

namespace warpcrypt::engine {

class LateGpuLanes {
 public:
  // Builds `streams` lanes on each of `devices`, numbered from the first
  // late lane on: called once, by the first job that starts them.
  using Build = std::function<wc_status(const std::vector<int> &devices, unsigned streams)>;

  // `shape` is a hybrid job's whose GPU lanes join late
  // (Placement::gpu_lanes_late); `first` is the first late lane's number,
  // after the lanes that start with the job; `claim_units` the units a late
  // lane claims at once where units are claimed by index. `kind` names the
  // work for the verdicts: what runs and in which direction.
  LateGpuLanes(const Placement &shape, size_t first, size_t claim_units, std::string kind, Build build);
  LateGpuLanes(const LateGpuLanes &) = delete;
  LateGpuLanes &operator=(const LateGpuLanes &) = delete;

  // The lanes for the scheduler, judged by the verdicts of earlier trials on
  // this kind of work with the data `staged` or not: whether it reaches the
  // lanes through their staging buffers (files, pipes, pageable memory).
  LateLanes *late(bool staged);

 private:
  // Sets the devices, the lanes' count and the CPU lanes they displace.
  void place(const std::vector<int> &devices, unsigned displaces);
  // LateLanes::counted, where the devices are counted beside the job.
  bool take_device_count();
  // Nothing once started, or where their devices are (kCudaBackend.device_started).
  double start_seconds() const;
  wc_status start();

  const Placement shape_;  // the job's plan, as resolved
  // The devices the lanes run on: the plan's, or, where the plan counts them
  // beside the job's work, the check's once it is done (empty until then).
  std::vector<int> devices_;
  std::string kind_;
  Build build_;
  LateLanes late_;
  std::mutex mutex_;  // guards the placing (devices_) and the start
  std::optional<wc_status> started_;  // the start's outcome, once tried
};

}  // namespace warpcrypt::engine
