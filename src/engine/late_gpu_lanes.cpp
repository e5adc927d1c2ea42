#include "engine/late_gpu_lanes.h"

#include <algorithm>
#include <map>
#include <utility>

#include "core/backend_tables.h"

namespace warpcrypt::engine {
namespace {

// What starting a device for a hybrid job's GPU lanes costs after the
// driver has counted the devices (which the job's checks already paid): the
// context, the lanes' pinned buffers and the kernels' module, and tearing
// them down when the process ends. On the H100 machine (2026-11-27) the
// context took 93-167 ms and the pinned buffers with the first call 39-88
// ms more (bench/gpu/start_bench.cu); `enc --backend gpu` on an empty file
// took 0.32 s longer than `warpcrypt devices`, which only counts. A device
// this process has started already costs next to nothing: buffers are
// pooled.
constexpr double kColdDeviceStartSeconds = 0.3;

// The verdicts of the late lanes' trials in this process, by kind of work
// and whether its data is staged.
std::atomic<LateVerdict> &verdict_for(const std::string &kind, bool staged) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, bool>, std::atomic<LateVerdict>> verdicts;
  std::lock_guard lock(mutex);
  return verdicts.try_emplace({kind, staged}, LateVerdict::untried).first->second;
}

}  // namespace

LateGpuLanes::LateGpuLanes(const Placement &shape, size_t first, size_t claim_units, std::string kind, Build build)
    : shape_(shape), kind_(std::move(kind)), build_(std::move(build)) {
  late_.first = first;
  late_.claim_units = claim_units;
  late_.start = [this] { return start(); };
  if (shape_.device_check()) {
    late_.counted = [this] { return take_device_count(); };
  } else {
    place(shape_.devices(), shape_.spare_cpu_lanes());
  }
}

void LateGpuLanes::place(const std::vector<int> &devices, unsigned displaces) {
  devices_ = devices;
  late_.count = shape_.streams() * devices.size();
  late_.displaces = displaces;
  late_.start_seconds = start_seconds();
}

double LateGpuLanes::start_seconds() const {
  // Devices not yet counted are not started.
  const bool warm = !devices_.empty() &&
                    std::all_of(devices_.begin(), devices_.end(),
                                [](int device) { return kCudaBackend.device_started(device); });
  return started_ || warm ? 0 : kColdDeviceStartSeconds;
}

bool LateGpuLanes::take_device_count() {
  std::lock_guard lock(mutex_);
  const DeviceCheck &check = *shape_.device_check();
  const bool placed = !devices_.empty();
  if (placed || !check.done()) return placed;
  // A check that found no device has failed the job: the late lanes stay
  // unplaced, and the job stops.
  if (check.status() != WC_OK) return true;
  place(check.devices(), check.spare_cpu_lanes());
  return true;
}

LateLanes *LateGpuLanes::late(bool staged) {
  std::lock_guard lock(mutex_);
  late_.start_seconds = start_seconds();
  std::atomic<LateVerdict> *verdict = &verdict_for(kind_, staged);
  // The earlier calls staged their data and this one does not, or the other
  // way round: their rate says nothing of this call's.
  if (late_.verdict != verdict) late_.calls = {};
  late_.verdict = verdict;
  return &late_;
}

wc_status LateGpuLanes::start() {
  std::lock_guard lock(mutex_);
  if (!started_) started_ = build_(devices_, shape_.streams());
  return *started_;
}

}  // namespace warpcrypt::engine
