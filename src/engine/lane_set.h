// The cipher lanes of one job: CPU lanes and GPU lanes, picked from the
// options, which the lane scheduler (engine/lane_scheduler.h) runs.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "core/cipher_backend.h"
#include "core/secret_bytes.h"
#include "engine/job_monitor.h"
#include "engine/lane_scheduler.h"

namespace warpcrypt::engine {

// A job's device check (check_devices), run on a thread of its own beside
// the job's first work. Counting the devices starts the CUDA driver: on the
// H100 machine (2026-11-27) 0.18-0.22 s, nearly all of it system time,
// longer than a 4 GiB file in the page cache takes on every core. A
// descriptor job whose GPU lanes join late needs the count only when they
// start, and the check's verdict only before it keeps its output.
class DeviceCheck {
 public:
  // Runs check(&devices, &spare_cpu_lanes): the devices the GPU lanes may
  // use and the CPU lanes they displace (EngineShape), or a failure, which
  // the check reports through the job's monitor itself.
  using Check = std::function<wc_status(std::vector<int> *devices, unsigned *spare_cpu_lanes)>;
  explicit DeviceCheck(Check check);
  ~DeviceCheck();  // waits for the check
  DeviceCheck(const DeviceCheck &) = delete;
  DeviceCheck &operator=(const DeviceCheck &) = delete;

  bool done() const { return done_.load(std::memory_order_acquire); }
  // Waits for the check and returns its status; on one thread only.
  wc_status wait();
  // Once done(): its status, and where it passed, what it found.
  wc_status status() const { return status_; }
  const std::vector<int> &devices() const { return devices_; }
  unsigned spare_cpu_lanes() const { return spare_cpu_lanes_; }

 private:
  std::vector<int> devices_;
  unsigned spare_cpu_lanes_ = 0;
  wc_status status_ = WC_OK;
  std::atomic<bool> done_{false};
  std::thread thread_;  // last: it starts once the rest is there
};

// When a job counts its devices: before its work, or beside it, where it
// can (DeviceCheck): a descriptor job whose GPU lanes join late, on a
// machine whose CUDA driver loads. Without a driver there is nothing to
// wait for, and the job is refused before it writes anything.
enum class DeviceCount { before_work, beside_work };

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
  // Set where the devices are counted beside the job's work: devices stays
  // empty, and cpu_lanes are all the CPU lanes, until the check is done.
  std::shared_ptr<DeviceCheck> device_check;
};

// Checks the engine fields of `options` (chunk size, streams, device list)
// and applies the defaults. `backend` is the backend to build for, auto
// already resolved by the caller. A refused field is WC_ERR_INVALID_ARGUMENT,
// and fails `monitor`'s job, where given, with the rule in words; a device
// that is not there is WC_ERR_NO_DEVICE (check_devices).
wc_status resolve_shape(EngineShape *shape, const wc_options &options, wc_backend backend,
                        JobMonitor *monitor = nullptr, DeviceCount count = DeviceCount::before_work);

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
  // (late()), on the devices shape.device_check finds where it is set.
  // Hybrid runs on the CPU lanes alone for modes the GPU does not run; a
  // device that fails is an error.
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
  Lane &operator[](size_t index) { return index < ready_ ? *lanes_[index] : *late_lanes_[index - ready_]; }

 private:
  explicit LaneSet(const KeyMaterial &key) : key_(key.key), iv_(key.iv) {}
  // Sets the late lanes' devices, their count and the CPU lanes they displace.
  void place_late_lanes(const std::vector<int> &devices, unsigned displaces);
  // LateLanes::counted, where the devices are counted beside the job.
  bool take_device_count();
  // What starting the late lanes costs: nothing once started, or where
  // their devices are (kCudaBackend.device_started).
  double start_seconds() const;
  wc_status start_gpu_lanes();

  // The ready lanes, and the late ones once started: the other lanes run
  // while the late ones are placed and built.
  std::vector<std::unique_ptr<Lane>> lanes_;
  size_t ready_ = 0;
  std::vector<std::unique_ptr<Lane>> late_lanes_;
  std::optional<LateLanes> late_;
  // What the GPU lanes are built from.
  EngineShape shape_;
  const wc_cipher *cipher_ = nullptr;
  wc_direction direction_ = WC_ENCRYPT;
  SecretBytes key_;
  SecretBytes iv_;
  size_t gpu_capacity_ = 0;
  std::mutex start_mutex_;  // guards the placing (shape_.devices) and the start
  std::optional<wc_status> started_;  // the start's outcome, once tried
};

}  // namespace warpcrypt::engine
