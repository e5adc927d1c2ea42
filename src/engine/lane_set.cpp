#include "engine/lane_set.h"

#include <pthread.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <tuple>

#include "core/backend_tables.h"
#include "core/cpu_budget.h"

namespace warpcrypt::engine {
namespace {

// Chunks are cut at multiples of 4 KiB (every mode's blocks stay whole, and
// reads and writes stay page-aligned) and are at most 1 GiB.
constexpr size_t kChunkAlign = 4096;
constexpr size_t kMaxChunk = size_t{1} << 30;
constexpr unsigned kMaxStreams = 64;

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

bool uses_cpu_lanes(wc_backend backend) { return backend == WC_BACKEND_CPU || backend == WC_BACKEND_HYBRID; }
bool uses_gpu_lanes(wc_backend backend) { return backend != WC_BACKEND_CPU; }

// WARPCRYPT_HYBRID_GPU=always (EngineShape::gpu_lanes_late).
bool hybrid_gpu_always() {
  const char *value = std::getenv("WARPCRYPT_HYBRID_GPU");
  return value != nullptr && std::strcmp(value, "always") == 0;
}

// The verdicts of the GPU lanes' trials in this process, by kind of work:
// the cipher, the direction, and whether the data is staged.
std::atomic<LateVerdict> &verdict_for(const wc_cipher &cipher, wc_direction direction, bool staged) {
  static std::mutex mutex;
  static std::map<std::tuple<std::string, wc_direction, bool>, std::atomic<LateVerdict>> verdicts;
  std::lock_guard lock(mutex);
  return verdicts.try_emplace({cipher.name, direction, staged}, LateVerdict::untried).first->second;
}

}  // namespace

wc_status check_devices(const wc_options &options, wc_backend backend, JobMonitor *monitor) {
  auto refuse = [monitor](const char *sentence) {
    if (monitor != nullptr) monitor->fail_with_detail(WC_ERR_NO_DEVICE, sentence);
    return WC_ERR_NO_DEVICE;
  };
  const bool lists_devices = options.devices != nullptr && options.device_count != 0;
  const bool needs_device = backend == WC_BACKEND_GPU || backend == WC_BACKEND_HYBRID;
  // Counting the devices starts the CUDA driver, which costs a tenth of a
  // second or more on a GPU machine: a job that will not use one must not
  // pay it.
  if (!lists_devices && !needs_device) return WC_OK;
  const int count = kCudaBackend.device_count();
  for (size_t i = 0; lists_devices && i < options.device_count; ++i) {
    if (options.devices[i] < 0 || options.devices[i] >= count) {
      return refuse(count == 0 ? "the device list names a CUDA device, and there is none; run on the CPU with "
                                 "backend cpu and no device list"
                               : "the device list names a CUDA device that does not exist; list the devices, or "
                                 "run on the CPU with backend cpu and no device list");
    }
  }
  if (needs_device && count == 0) {
    return refuse(kCudaBackend.compiled_in
                      ? "the gpu and hybrid backends need a CUDA device, and none is usable; run on the CPU with "
                        "backend cpu or auto"
                      : "the gpu and hybrid backends need CUDA, and this build has none; run on the CPU with "
                        "backend cpu or auto");
  }
  return WC_OK;
}

namespace {

// The devices the GPU lanes run on: the list, or every device.
void place_devices(EngineShape *shape, const wc_options &options) {
  if (options.devices != nullptr) {
    shape->devices.assign(options.devices, options.devices + options.device_count);
  } else if (uses_gpu_lanes(shape->backend)) {
    const int count = kCudaBackend.device_count();
    for (int device = 0; device < count; ++device) shape->devices.push_back(device);
  }
}

// The CPU lanes beside the GPU lanes of shape->devices: each GPU lane keeps
// a thread busy with staging copies and file I/O, so the CPU lanes take the
// cores that are left, unless told how many to use.
void place_cpu_lanes(EngineShape *shape, const wc_options &options) {
  const unsigned cores = usable_cpus();
  const unsigned gpu_lanes =
      uses_gpu_lanes(shape->backend) ? shape->streams * static_cast<unsigned>(shape->devices.size()) : 0;
  shape->cpu_lanes = options.threads != 0 ? options.threads : std::max(1u, cores - std::min(cores - 1, gpu_lanes));
  shape->spare_cpu_lanes = shape->gpu_lanes_late && options.threads == 0 ? cores - shape->cpu_lanes : 0;
}

}  // namespace

DeviceCheck::DeviceCheck(Check check)
    : thread_([this, check = std::move(check)] {
        // Named, as the pool's threads are (core/thread_pool.h).
        pthread_setname_np(pthread_self(), "warpcrypt-check");
        status_ = check(&devices_, &spare_cpu_lanes_);
        done_.store(true, std::memory_order_release);
      }) {}

DeviceCheck::~DeviceCheck() {
  if (thread_.joinable()) thread_.join();
}

wc_status DeviceCheck::wait() {
  if (thread_.joinable()) thread_.join();
  return status_;
}

wc_status resolve_shape(EngineShape *shape, const wc_options &options, wc_backend backend, JobMonitor *monitor,
                        DeviceCount count) {
  auto refuse = [monitor](const char *rule) {
    if (monitor != nullptr) monitor->fail_with_detail(WC_ERR_INVALID_ARGUMENT, rule);
    return WC_ERR_INVALID_ARGUMENT;
  };
  // Auto picks hybrid from the break-even sizes, which measured the GPU
  // lanes taking part from the start; a caller who asks for hybrid gets the
  // trial.
  shape->gpu_lanes_late = backend == WC_BACKEND_HYBRID && options.backend == WC_BACKEND_HYBRID && !hybrid_gpu_always();
  const bool count_beside =
      count == DeviceCount::beside_work && shape->gpu_lanes_late && kCudaBackend.driver_present();
  if (!count_beside) {
    if (const wc_status status = check_devices(options, backend, monitor); status != WC_OK) return status;
  }
  shape->backend = backend;
  // On the H100 host, enc -aes-256-ctr on a page-cached 4 GiB file ran at
  // 26 GB/s with 1 MiB CPU chunks and 16 GB/s with 8 MiB ones.
  const size_t default_chunk = backend == WC_BACKEND_CPU ? WC_DEFAULT_CPU_CHUNK_BYTES : WC_DEFAULT_CHUNK_BYTES;
  shape->chunk_bytes = options.chunk_bytes != 0 ? options.chunk_bytes : default_chunk;
  if (shape->chunk_bytes % kChunkAlign != 0 || shape->chunk_bytes > kMaxChunk) {
    return refuse("the engine's chunk size must be a multiple of 4 KiB, at most 1 GiB");
  }
  shape->unit_bytes = shape->chunk_bytes;
  if (shape->gpu_lanes_late && options.chunk_bytes == 0) {
    shape->unit_bytes = WC_DEFAULT_CPU_CHUNK_BYTES;
    shape->gpu_claim_units = WC_DEFAULT_CHUNK_BYTES / WC_DEFAULT_CPU_CHUNK_BYTES;
  }
  shape->streams = options.streams != 0 ? options.streams : WC_DEFAULT_STREAMS;
  if (shape->streams > kMaxStreams) return refuse("at most 64 streams per device");
  if ((options.devices != nullptr) != (options.device_count != 0)) {
    return refuse("a device list needs both its devices and their count");
  }
  if (!count_beside) place_devices(shape, options);
  // Until a check beside the work is done: no device, and every CPU lane.
  place_cpu_lanes(shape, options);
  if (!count_beside) return WC_OK;
  shape->device_check = std::make_shared<DeviceCheck>(
      [options, monitor, placed = *shape](std::vector<int> *devices, unsigned *spare_cpu_lanes) mutable {
        const wc_status status = check_devices(options, placed.backend, monitor);
        if (status != WC_OK) return status;
        place_devices(&placed, options);
        place_cpu_lanes(&placed, options);
        *devices = placed.devices;
        *spare_cpu_lanes = placed.spare_cpu_lanes;
        return WC_OK;
      });
  return WC_OK;
}

wc_status LaneSet::create(std::unique_ptr<LaneSet> *out, const EngineShape &shape, const wc_cipher &cipher,
                          wc_direction direction, const KeyMaterial &key, size_t slack) {
  std::unique_ptr<LaneSet> set(new LaneSet(key));
  if (uses_gpu_lanes(shape.backend) && !shape.gpu_lanes_late) {
    if (shape.devices.empty()) return WC_ERR_NO_DEVICE;
    for (int device : shape.devices) {
      const wc_status status =
          kCudaBackend.make_lanes(&set->lanes_, device, shape.streams, cipher, direction, key, shape.unit_bytes + slack);
      if (status == WC_OK) continue;
      // Hybrid runs on the CPU alone for a mode the GPU does not run; a
      // device that is missing or failing is an error.
      if (shape.backend != WC_BACKEND_HYBRID || status != WC_ERR_BACKEND_UNAVAILABLE) return status;
      set->lanes_.clear();
      break;
    }
  }
  if (uses_cpu_lanes(shape.backend)) {
    for (unsigned i = 0; i < shape.cpu_lanes + shape.spare_cpu_lanes; ++i) {
      std::unique_ptr<Lane> lane = kCpuBackend.make_lane(cipher, direction, key, shape.unit_bytes + slack);
      if (!lane) return WC_ERR_CRYPTO_LIBRARY;  // OpenSSL refused the key
      set->lanes_.push_back(std::move(lane));
    }
  }
  set->ready_ = set->lanes_.size();
  if (shape.gpu_lanes_late) {
    if (shape.devices.empty() && !shape.device_check) return WC_ERR_NO_DEVICE;
    LateLanes &late = set->late_.emplace();
    late.first = set->ready_;
    late.claim_units = shape.gpu_claim_units;
    late.start = [raw = set.get()] { return raw->start_gpu_lanes(); };
    set->shape_ = shape;
    set->cipher_ = &cipher;
    set->direction_ = direction;
    set->gpu_capacity_ = shape.unit_bytes * shape.gpu_claim_units + slack;
    if (shape.device_check) {
      late.counted = [raw = set.get()] { return raw->take_device_count(); };
    } else {
      set->place_late_lanes(shape.devices, shape.spare_cpu_lanes);
    }
  }
  *out = std::move(set);
  return WC_OK;
}

void LaneSet::place_late_lanes(const std::vector<int> &devices, unsigned displaces) {
  shape_.devices = devices;
  late_->count = shape_.streams * devices.size();
  late_->displaces = displaces;
  late_->start_seconds = start_seconds();
}

double LaneSet::start_seconds() const {
  // Devices not yet counted are not started.
  const bool warm = !shape_.devices.empty() &&
                    std::all_of(shape_.devices.begin(), shape_.devices.end(),
                                [](int device) { return kCudaBackend.device_started(device); });
  return started_ || warm ? 0 : kColdDeviceStartSeconds;
}

bool LaneSet::take_device_count() {
  std::lock_guard lock(start_mutex_);
  const DeviceCheck &check = *shape_.device_check;
  const bool placed = !shape_.devices.empty();
  if (placed || !check.done()) return placed;
  // A check that found no device has failed the job: its late lanes stay
  // unplaced, and the job stops.
  if (check.status() != WC_OK) return true;
  place_late_lanes(check.devices(), check.spare_cpu_lanes());
  return true;
}

LateLanes *LaneSet::late(bool staged) {
  if (!late_) return nullptr;
  std::lock_guard lock(start_mutex_);
  late_->start_seconds = start_seconds();
  std::atomic<LateVerdict> *verdict = &verdict_for(*cipher_, direction_, staged);
  // The earlier calls staged their data and this one does not, or the other
  // way round: their rate says nothing of this call's.
  if (late_->verdict != verdict) late_->calls = {};
  late_->verdict = verdict;
  return &*late_;
}

wc_status LaneSet::start_gpu_lanes() {
  std::lock_guard lock(start_mutex_);
  if (started_) return *started_;
  const KeyMaterial key{{key_.data(), key_.size()}, {iv_.data(), iv_.size()}};
  std::vector<std::unique_ptr<Lane>> built;
  wc_status status = WC_OK;
  for (size_t i = 0; i < shape_.devices.size() && status == WC_OK; ++i) {
    status = kCudaBackend.make_lanes(&built, shape_.devices[i], shape_.streams, *cipher_, direction_, key,
                                     gpu_capacity_);
  }
  if (status == WC_OK) late_lanes_ = std::move(built);
  started_ = status;
  return status;
}

}  // namespace warpcrypt::engine
