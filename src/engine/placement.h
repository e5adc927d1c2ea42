// Where work runs, decided here and nowhere else: which backend a job or a
// call runs on (auto resolved by the measured break-even sizes), the devices
// and how many lanes of each kind, the chunk size, whether a hybrid job's GPU
// lanes join late, and the device checks. This is the one file that reads
// wc_options' placement fields (scripts/check-includes.py holds it to that);
// the layers below take a Placement. Every primitive has one table entry per
// backend {cpu, cuda}; the builders here pick one, and callers can ask which
// ran.
#pragma once

#include <cstddef>
#include <cstdint>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "core/aead_backend.h"
#include "core/cipher_backend.h"
#include "core/stream_state.h"
#include "engine/job_monitor.h"

namespace warpcrypt::engine {

// A job's device check (check_devices), run on a thread of its own beside
// the job's first work where the count must start the CUDA driver
// (CUDA_VISIBLE_DEVICES set, a GPU split into MIG instances: see
// CudaBackend::device_count_is_quick): on the H100 machine (2026-11-27)
// 0.18-0.22 s, nearly all of it system time, longer than a 4 GiB file in
// the page cache takes on every core. A descriptor job whose GPU lanes join
// late needs the count only when they start, and the check's verdict only
// before it keeps its output. Elsewhere the driver's list answers at the
// job's entry, in microseconds.
class DeviceCheck {
 public:
  // Runs check(&devices, &spare_cpu_lanes): the devices the GPU lanes may
  // use and the CPU lanes they displace (Placement), or a failure, which
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

// A job's plan: the engine's view of wc_options, defaults applied and
// checked, for one job's work. Only the planner (placement.cpp: the plan_*
// calls, describe_placement, and the builders below) makes one, once, at
// the job's entry; everything below reads it and none rewrites it (the late
// GPU lanes keep the devices a count beside the job finds apart).
class Placement {
 public:
  // What a plan holds, as the planner fills it in.
  struct Fields {
    wc_backend backend = WC_BACKEND_AUTO;  // resolved: cpu, gpu or hybrid
    unsigned cpu_lanes = 0;
    unsigned streams = 0;  // GPU lanes per device entry
    std::vector<int> devices;
    size_t chunk_bytes = 0;
    // The GPU lanes of a job that asked for hybrid, plain-cipher (LaneSet)
    // and AEAD stream lanes alike, join late, on trial
    // (engine/late_gpu_lanes.h), unless the environment sets
    // WARPCRYPT_HYBRID_GPU=always; those of auto's hybrid jobs (from the
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

  wc_backend backend() const { return fields_.backend; }
  unsigned cpu_lanes() const { return fields_.cpu_lanes; }
  unsigned streams() const { return fields_.streams; }
  const std::vector<int> &devices() const { return fields_.devices; }
  size_t chunk_bytes() const { return fields_.chunk_bytes; }
  bool gpu_lanes_late() const { return fields_.gpu_lanes_late; }
  size_t unit_bytes() const { return fields_.unit_bytes; }
  size_t gpu_claim_units() const { return fields_.gpu_claim_units; }
  unsigned spare_cpu_lanes() const { return fields_.spare_cpu_lanes; }
  DeviceCheck *device_check() const { return fields_.device_check.get(); }

 private:
  friend class Planner;  // placement.cpp
  explicit Placement(Fields fields) : fields_(std::move(fields)) {}
  Fields fields_;
};

// Nothing falls back to the CPU in silence: a device list that names a
// device this machine lacks, and the gpu or hybrid backend without a device,
// are WC_ERR_NO_DEVICE, with a sentence that says how to run on the CPU.
// `backend` is the backend the job runs on, auto resolved.
wc_status check_devices(const wc_options &options, wc_backend backend, JobMonitor *monitor = nullptr);

// Whether a placement on `backend` has CPU lanes, and GPU lanes.
bool uses_cpu_lanes(wc_backend backend);
bool uses_gpu_lanes(wc_backend backend);

// A stream job's plan (a sealed or age file): its backend (as asked; auto
// on the CPU, as for every descriptor job, since no AEAD break-even size
// has been measured) and its placement, the devices counted beside its first
// work where they can be (DeviceCheck). Made once, at the API's entry,
// before any KDF, header or plugin runs; the format and the engine's lanes
// take it as it is. A refused field is WC_ERR_INVALID_ARGUMENT, a device
// that is not there WC_ERR_NO_DEVICE (check_devices), and either fails
// `monitor`'s job with the rule in words.
wc_status plan_stream_job(std::optional<Placement> *plan, const wc_options &options, JobMonitor &monitor);

// A plain-cipher job's plan, made once at the API's entry, before any file
// is opened: on host buffers (wc_*_buffer) and on descriptors (wc_*_fd,
// wc_*_file). The backend is the job rule's: as asked, and under auto
// hybrid where input and output are page-locked host memory, a device runs
// the mode and the input reaches its break-even size; else cpu. Input that
// must be staged (files, pipes, pageable buffers) stays on the CPU: copying
// it into pinned memory costs the CPU as much as the cipher does, and the
// GPU lanes measured slower there (docs/lab-notes/performance-history.md).
// A descriptor job's lanes count the devices beside their first work. A
// mode that does not split runs on one CPU stream in chunk-sized steps,
// devices counted before it starts, and the plan says so: cpu, one lane, no
// devices; the gpu backend, whose lanes cannot run it, is
// WC_ERR_BACKEND_UNAVAILABLE. Refusals fail `monitor` as plan_stream_job's do.
wc_status plan_buffer_job(std::optional<Placement> *plan, const wc_options &options, const wc_cipher &cipher,
                          wc_direction direction, const uint8_t *in, size_t in_len, const uint8_t *out,
                          JobMonitor &monitor);
wc_status plan_descriptor_job(std::optional<Placement> *plan, const wc_options &options, const wc_cipher &cipher,
                              wc_direction direction, JobMonitor &monitor);

// Below this many bytes per call the CPU wins even for page-locked host
// memory; SIZE_MAX where it always wins. See wc_auto_gpu_min_bytes.
size_t auto_gpu_min_bytes(const wc_cipher &cipher, wc_direction direction);

// What a job of `work` runs on with `options` (wc_plan_describe), and why:
// a plain cipher's plan, as its job makes it; for an AEAD the backend its
// job picks (a stream job's, or a call's by resolve_aead_spec; device memory
// where it lives, check_device_memory) placed as a job places it. The
// devices are counted now. Work the job would refuse is refused with the
// job's status, and fails `monitor` with the job's detail.
wc_status describe_placement(std::optional<Placement> *placement, wc_plan_reason *reason, const wc_options &options,
                             const wc_work &work, JobMonitor *monitor);

// Device memory runs where it lives: WC_ERR_NO_DEVICE without a device,
// WC_ERR_BACKEND_UNAVAILABLE for the cpu backend, whose AEAD keys never
// leave the CPU (key_has_device_aead); auto, gpu and hybrid reach it.
bool reaches_device_memory(const wc_options &options);
wc_status check_device_memory(bool reaches);
inline wc_status check_device_memory(const wc_options &options) {
  return check_device_memory(reaches_device_memory(options));
}

// Builds the cipher for options.backend:
//  - cpu: always available;
//  - gpu: WC_ERR_NO_DEVICE without a device and
//    WC_ERR_BACKEND_UNAVAILABLE for modes the GPU does not run; never a
//    silent fallback;
//  - auto: the CPU, plus the GPU for calls on page-locked memory of at least
//    auto_gpu_min_bytes where a device can run the mode.
wc_status make_backend_cipher(BackendCipher *out, const wc_options &options, const wc_cipher &cipher,
                              wc_direction direction, const KeyMaterial &key);

// A stream (wc_ctx, the one-shot calls) on the cipher
// make_backend_cipher builds for `options`.
wc_status make_stream_state(std::unique_ptr<StreamState> *out, const wc_options &options, const wc_cipher &cipher,
                            wc_direction direction, const KeyMaterial &key);

// Whether a wc_aead_key made with `options` also runs device memory, on a
// GPU AEAD of its own: auto and hybrid keep host memory on the CPU, but
// device memory can only be worked where it lives. The key makes that AEAD
// at its first device call, where it also finds whether there is a device:
// counting them can start the CUDA driver (CudaBackend::device_count), which
// a key used on host memory alone must not pay. (The gpu backend's key is the GPU's already; the cpu
// backend's never leaves the CPU.)
bool key_has_device_aead(const wc_options &options);

// A wc_aead_ctx (one message piece by piece) runs on the CPU: the GPU's
// kernels take whole messages. WC_ERR_BACKEND_UNAVAILABLE for the gpu
// backend, WC_ERR_INVALID_ARGUMENT for one that does not exist.
wc_status check_piecewise_aead(const wc_options &options);

// What one lane's AEAD is built from, taken once from a job's Placement or a
// call's options at its entry (resolve_aead_spec): no lane reads wc_options.
struct LaneSpec {
  wc_backend backend = WC_BACKEND_CPU;  // cpu or gpu: the backend table that builds it
  unsigned threads = 1;  // cpu: the threads a batch spreads over (0: every core, 1: the caller's)
  std::vector<int> devices;  // gpu: the devices it runs on, one for a job's lane
  unsigned streams = WC_DEFAULT_STREAMS;  // gpu: GPU lanes per device, its staging lanes no fewer
};

// The spec of a call's AEAD on host memory (wc_aead_*, a wc_sealed_stream):
// cpu, auto and hybrid keep the messages on the CPU, on options.threads
// threads (no AEAD break-even size has been measured yet); gpu runs them on
// the device list (every device where there is none), WC_ERR_NO_DEVICE
// without one. The device list is checked whatever the backend.
wc_status resolve_aead_spec(LaneSpec *spec, const wc_options &options);

// The AEAD bound to `key` that `spec` places; a GPU AEAD stages pageable
// memory on lanes of its own (engine/staged_aead.h).
wc_status make_aead(std::unique_ptr<AeadCipher> *out, const LaneSpec &spec, const wc_aead &aead,
                    std::span<const uint8_t> key);

}  // namespace warpcrypt::engine
