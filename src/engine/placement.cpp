#include "engine/placement.h"

#include <pthread.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "core/backend_tables.h"
#include "core/secret_bytes.h"
#include "core/stream_state.h"
#include "core/cpu_budget.h"
#include "engine/lane_cipher.h"
#include "engine/staged_aead.h"

namespace warpcrypt::engine {

// The one maker of plans (Placement's friend): the calls below fill a
// plan's fields, then make it.
class Planner {
 public:
  static Placement make(Placement::Fields fields) { return Placement(std::move(fields)); }
};

namespace {

// A backend chosen for a job, and why (wc_plan_reason): as asked, or the
// auto rule's reason.
struct BackendChoice {
  wc_backend backend;
  wc_plan_reason reason;
};

// When a job counts its devices: before its work, or beside it, where it
// can and the count is slow (DeviceCheck): a descriptor job whose GPU lanes
// join late, where counting starts the CUDA driver. Without a driver, or
// with the driver's list of GPUs, the count is quick, and a job without a
// device is refused before it writes anything.
enum class DeviceCount { before_work, beside_work };

// Chunks are cut at multiples of 4 KiB (every mode's blocks stay whole, and
// reads and writes stay page-aligned) and are at most 1 GiB.
constexpr size_t kChunkAlign = 4096;
constexpr size_t kMaxChunk = size_t{1} << 30;
constexpr unsigned kMaxStreams = 64;

// WARPCRYPT_HYBRID_GPU=always (Placement::gpu_lanes_late).
bool hybrid_gpu_always() {
  const char *value = std::getenv("WARPCRYPT_HYBRID_GPU");
  return value != nullptr && std::strcmp(value, "always") == 0;
}

constexpr size_t kNever = SIZE_MAX;
constexpr size_t KiB = 1024, MiB = 1024 * KiB;

// Break-even sizes from the benchmark sweep on the H100 machine (16 cores,
// PCIe Gen5; docs/lab-notes/performance-history.md, 2026-11-22): the smallest size from which
// the GPU, transfers included, beat OpenSSL on every core at every larger
// size measured. AES-NI keeps most AES modes on the CPU; the CPU's slow
// modes (CFB decryption, Salsa20) and ChaCha20 move early.
struct BreakEven {
  const char *cipher;
  wc_direction direction;
  size_t min_bytes;
};
constexpr BreakEven kBreakEven[] = {
    {"salsa20", WC_ENCRYPT, 64 * KiB},       {"salsa20", WC_DECRYPT, 64 * KiB},
    {"salsa20-128", WC_ENCRYPT, 64 * KiB},   {"salsa20-128", WC_DECRYPT, 64 * KiB},
    {"chacha20", WC_ENCRYPT, 1 * MiB},       {"chacha20", WC_DECRYPT, 1 * MiB},
    {"aes-128-cfb", WC_DECRYPT, 16 * MiB},   {"aes-192-cfb", WC_DECRYPT, 16 * MiB},
    {"aes-256-cfb", WC_DECRYPT, 1 * MiB},    {"aes-192-ctr", WC_ENCRYPT, 256 * MiB},
    {"aes-192-ctr", WC_DECRYPT, 256 * MiB},  {"aes-256-ctr", WC_ENCRYPT, 256 * MiB},
    {"aes-256-ctr", WC_DECRYPT, 256 * MiB},  {"aes-256-cbc", WC_DECRYPT, 256 * MiB},
    {"aes-256-ecb", WC_ENCRYPT, 256 * MiB},
};

// A call of at least `min_bytes` runs on the lanes of `shape`, built on the
// first call that wants them; any other call, and every call should the
// lanes fail to build (no device after all), on `small_calls`. Lanes cost a
// hand-off per chunk, and GPU lanes device buffers and transfers besides,
// which pay only from some size on. GPU lanes take page-locked host memory
// only: copying pageable memory through pinned staging buffers is slower
// than all cores running OpenSSL (see docs/lab-notes/performance-history.md).
class LanesForLargeCalls final : public RandomAccessCipher {
 public:
  LanesForLargeCalls(std::unique_ptr<RandomAccessCipher> small_calls, Placement shape, const wc_cipher &cipher,
                     wc_direction direction, const KeyMaterial &key, size_t min_bytes)
      : small_calls_(std::move(small_calls)), shape_(std::move(shape)), cipher_(cipher), direction_(direction),
        key_(key.key), iv_(key.iv), min_bytes_(min_bytes) {}

  wc_status transform_at(uint64_t position, const uint8_t chain[16], const uint8_t *in, uint8_t *out,
                         size_t len) override {
    RandomAccessCipher *chosen = small_calls_.get();
    if (len >= min_bytes_ && lanes_reach(in, out)) {
      if (!lanes_ && !lanes_failed_) {
        const KeyMaterial key{{key_.data(), key_.size()}, {iv_.data(), iv_.size()}};
        lanes_failed_ = make_lane_cipher(&lanes_, shape_, cipher_, direction_, key) != WC_OK;
      }
      if (lanes_) chosen = lanes_.get();
    }
    const wc_status status = chosen->transform_at(position, chain, in, out, len);
    last_ = chosen->last_backend();
    return status;
  }
  wc_backend last_backend() const override { return last_; }

 private:
  bool lanes_reach(const uint8_t *in, const uint8_t *out) const {
    return shape_.backend() == WC_BACKEND_CPU || (kCudaBackend.page_locked(in) && kCudaBackend.page_locked(out));
  }

  std::unique_ptr<RandomAccessCipher> small_calls_;
  std::unique_ptr<RandomAccessCipher> lanes_;
  bool lanes_failed_ = false;
  Placement shape_;
  const wc_cipher &cipher_;
  wc_direction direction_;
  SecretBytes key_;
  SecretBytes iv_;
  size_t min_bytes_;
  wc_backend last_ = WC_BACKEND_CPU;
};

// The CPU backend's cipher. A parallel mode on more than one thread runs a
// large call on CPU lanes, options.threads of them (every core for 0); a
// call smaller than two of their chunks, which would not split, stays on the
// caller's thread. The engine fields (chunk size, streams, devices) belong
// to jobs and GPU lanes: these lanes take the CPU chunk size.
wc_status make_cpu_cipher(BackendCipher *out, const wc_options &options, const wc_cipher &cipher,
                          wc_direction direction, const KeyMaterial &key) {
  const wc_status status = kCpuBackend.make_cipher(out, cipher, direction, key);
  const unsigned threads = options.threads != 0 ? options.threads : usable_cpus();
  if (status != WC_OK || !out->random_access || threads == 1) return status;
  Placement::Fields shape;
  shape.backend = WC_BACKEND_CPU;
  shape.cpu_lanes = threads;
  shape.chunk_bytes = shape.unit_bytes = WC_DEFAULT_CPU_CHUNK_BYTES;
  out->random_access = std::make_unique<LanesForLargeCalls>(
      std::move(out->random_access), Planner::make(std::move(shape)), cipher, direction, key, 2 * kMinCpuChunk);
  return WC_OK;
}

// The auto rule of a plain-cipher job (plan_cipher_job), each way it can go
// with its reason. The device count comes last: it can start the CUDA
// driver (CudaBackend::device_count).
BackendChoice auto_job_choice(const wc_cipher &cipher, wc_direction direction, uint64_t input_bytes,
                              bool page_locked) {
  if (!is_parallel(cipher, direction)) return {WC_BACKEND_CPU, WC_PLAN_SEQUENTIAL_MODE};
  if (!page_locked) return {WC_BACKEND_CPU, WC_PLAN_STAGED_INPUT};
  const size_t min_bytes = auto_gpu_min_bytes(cipher, direction);
  if (min_bytes == kNever) return {WC_BACKEND_CPU, WC_PLAN_CPU_ALWAYS_FASTER};
  if (input_bytes < min_bytes) return {WC_BACKEND_CPU, WC_PLAN_BELOW_BREAK_EVEN};
  if (kCudaBackend.device_count() == 0) return {WC_BACKEND_CPU, WC_PLAN_NO_DEVICE};
  return {WC_BACKEND_HYBRID, WC_PLAN_AT_BREAK_EVEN};
}

}  // namespace

bool uses_cpu_lanes(wc_backend backend) { return backend == WC_BACKEND_CPU || backend == WC_BACKEND_HYBRID; }
bool uses_gpu_lanes(wc_backend backend) { return backend != WC_BACKEND_CPU; }

wc_status check_devices(const wc_options &options, wc_backend backend, JobMonitor *monitor) {
  auto refuse = [monitor](const char *sentence) {
    if (monitor != nullptr) monitor->fail_with_detail(WC_ERR_NO_DEVICE, sentence);
    return WC_ERR_NO_DEVICE;
  };
  const bool lists_devices = options.devices != nullptr && options.device_count != 0;
  const bool needs_device = backend == WC_BACKEND_GPU || backend == WC_BACKEND_HYBRID;
  // Counting the devices reads the kernel driver's files (microseconds), and
  // takes a tenth of a second or more where CUDA must count
  // (CudaBackend::device_count): a job that will not use one must not pay it.
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
void place_devices(Placement::Fields *shape, const wc_options &options) {
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
void place_cpu_lanes(Placement::Fields *shape, const wc_options &options) {
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

namespace {

// Whether a job's GPU lanes join late, on trial: auto picks hybrid from the
// break-even sizes, which measured the GPU lanes taking part from the
// start; a caller who asks for hybrid gets the trial.
bool gpu_lanes_late(const wc_options &options, wc_backend backend) {
  return backend == WC_BACKEND_HYBRID && options.backend == WC_BACKEND_HYBRID && !hybrid_gpu_always();
}

// Whether a job counts its devices beside its first work (DeviceCheck).
bool counts_devices_beside(const wc_options &options, wc_backend backend, DeviceCount count) {
  return count == DeviceCount::beside_work && gpu_lanes_late(options, backend) && !kCudaBackend.device_count_is_quick();
}

// The rules of the engine's fields, which need no device to check.
wc_status check_fields(const wc_options &options, JobMonitor *monitor) {
  auto refuse = [monitor](const char *rule) {
    if (monitor != nullptr) monitor->fail_with_detail(WC_ERR_INVALID_ARGUMENT, rule);
    return WC_ERR_INVALID_ARGUMENT;
  };
  if (options.chunk_bytes % kChunkAlign != 0 || options.chunk_bytes > kMaxChunk) {
    return refuse("the engine's chunk size must be a multiple of 4 KiB, at most 1 GiB");
  }
  if (options.streams > kMaxStreams) return refuse("at most 64 streams per device");
  if ((options.devices != nullptr) != (options.device_count != 0)) {
    return refuse("a device list needs both its devices and their count");
  }
  return WC_OK;
}

// What a job checks of `options` at its entry, before any of its work (a
// KDF, a header, a plugin): the engine's fields (chunk size, streams,
// device list) and the devices (check_devices), unless the job counts them
// beside its work (`count`). A refused field is WC_ERR_INVALID_ARGUMENT,
// and fails `monitor`'s job, where given, with the rule in words.
wc_status check_job_options(const wc_options &options, wc_backend backend, JobMonitor *monitor, DeviceCount count) {
  if (const wc_status status = check_fields(options, monitor); status != WC_OK) return status;
  return counts_devices_beside(options, backend, count) ? WC_OK : check_devices(options, backend, monitor);
}

// A plan's fields for `options` on `backend` (auto resolved by the
// caller): check_job_options, then the defaults applied.
wc_status resolve_placement(Placement::Fields *shape, const wc_options &options, wc_backend backend,
                            JobMonitor *monitor = nullptr, DeviceCount count = DeviceCount::before_work) {
  const bool count_beside = counts_devices_beside(options, backend, count);
  if (const wc_status status = check_job_options(options, backend, monitor, count); status != WC_OK) return status;
  shape->gpu_lanes_late = gpu_lanes_late(options, backend);
  shape->backend = backend;
  // On the H100 host, enc -aes-256-ctr on a page-cached 4 GiB file ran at
  // 26 GB/s with 1 MiB CPU chunks and 16 GB/s with 8 MiB ones.
  const size_t default_chunk = backend == WC_BACKEND_CPU ? WC_DEFAULT_CPU_CHUNK_BYTES : WC_DEFAULT_CHUNK_BYTES;
  shape->chunk_bytes = options.chunk_bytes != 0 ? options.chunk_bytes : default_chunk;
  shape->unit_bytes = shape->chunk_bytes;
  if (shape->gpu_lanes_late && options.chunk_bytes == 0) {
    shape->unit_bytes = WC_DEFAULT_CPU_CHUNK_BYTES;
    shape->gpu_claim_units = WC_DEFAULT_CHUNK_BYTES / WC_DEFAULT_CPU_CHUNK_BYTES;
  }
  shape->streams = options.streams != 0 ? options.streams : WC_DEFAULT_STREAMS;
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

// The backend of a chunked AEAD stream (sealed and age files): as asked,
// auto on the CPU (plan_stream_job).
wc_backend stream_job_backend(const wc_options &options) {
  return options.backend == WC_BACKEND_AUTO ? WC_BACKEND_CPU : options.backend;
}

}  // namespace

wc_status plan_stream_job(std::optional<Placement> *plan, const wc_options &options, JobMonitor &monitor) {
  Placement::Fields fields;
  const wc_status status =
      resolve_placement(&fields, options, stream_job_backend(options), &monitor, DeviceCount::beside_work);
  if (status == WC_OK) *plan = Planner::make(std::move(fields));
  return status;
}

size_t auto_gpu_min_bytes(const wc_cipher &cipher, wc_direction direction) {
  for (const BreakEven &entry : kBreakEven) {
    if (std::strcmp(entry.cipher, cipher.name) == 0 && entry.direction == direction) return entry.min_bytes;
  }
  return kNever;
}

bool reaches_device_memory(const wc_options &options) {
  return key_has_device_aead(options) || options.backend == WC_BACKEND_GPU;
}

wc_status check_device_memory(bool reaches) {
  if (kCudaBackend.device_count() == 0) return WC_ERR_NO_DEVICE;
  return reaches ? WC_OK : WC_ERR_BACKEND_UNAVAILABLE;
}

namespace {

// The backend an AEAD's job or call runs on, by the job's own rule: a
// stream job's (stream_job_backend) or a host-memory call's
// (resolve_aead_spec); where it differs from the one asked for, no AEAD
// break-even size has been measured to send auto's work to a GPU.
wc_status choose_aead_backend(BackendChoice *choice, const wc_options &options, wc_data_place data,
                              JobMonitor *monitor) {
  wc_backend backend = stream_job_backend(options);
  if (data != WC_DATA_STREAM) {
    // The call checks the device list as asked, whatever runs the messages.
    if (const wc_status status = check_devices(options, options.backend, monitor); status != WC_OK) return status;
    LaneSpec spec;
    if (const wc_status status = resolve_aead_spec(&spec, options); status != WC_OK) return status;
    backend = spec.backend;
  }
  *choice = {backend, backend == options.backend ? WC_PLAN_AS_ASKED : WC_PLAN_NO_AEAD_BREAK_EVEN};
  return WC_OK;
}

// What a plain-cipher job works on, as its entry knows it: the cipher and
// direction, the input's size, and whether input and output are page-locked
// host memory (never for a descriptor job, whose input is staged).
struct CipherWork {
  const wc_cipher &cipher;
  wc_direction direction;
  uint64_t input_bytes = 0;
  bool page_locked = false;
};

// A plain-cipher job's plan (plan_buffer_job, plan_descriptor_job): the
// backend by the job rule, its reason in *reason where given, and its
// placement, the devices counted as `count` says.
wc_status plan_cipher_job(std::optional<Placement> *plan, wc_plan_reason *reason, const wc_options &options,
                          const CipherWork &work, DeviceCount count, JobMonitor *monitor) {
  const bool parallel = is_parallel(work.cipher, work.direction);
  const BackendChoice choice = options.backend != WC_BACKEND_AUTO
                                   ? BackendChoice{options.backend, WC_PLAN_AS_ASKED}
                                   : auto_job_choice(work.cipher, work.direction, work.input_bytes, work.page_locked);
  Placement::Fields fields;
  const wc_status status =
      resolve_placement(&fields, options, choice.backend, monitor, parallel ? count : DeviceCount::before_work);
  if (status != WC_OK) return status;
  if (reason != nullptr) *reason = choice.reason;
  if (!parallel) {
    if (fields.backend == WC_BACKEND_GPU) {
      if (monitor != nullptr) monitor->fail(WC_ERR_BACKEND_UNAVAILABLE);
      return WC_ERR_BACKEND_UNAVAILABLE;
    }
    if (reason != nullptr && fields.backend != WC_BACKEND_CPU) *reason = WC_PLAN_SEQUENTIAL_MODE;
    fields.backend = WC_BACKEND_CPU;
    fields.cpu_lanes = 1;
    fields.spare_cpu_lanes = 0;
    fields.gpu_lanes_late = false;
    fields.devices.clear();
  }
  *plan = Planner::make(std::move(fields));
  return WC_OK;
}

}  // namespace

wc_status plan_buffer_job(std::optional<Placement> *plan, const wc_options &options, const wc_cipher &cipher,
                          wc_direction direction, const uint8_t *in, size_t in_len, const uint8_t *out,
                          JobMonitor &monitor) {
  const bool page_locked = kCudaBackend.page_locked(in) && kCudaBackend.page_locked(out);
  return plan_cipher_job(plan, nullptr, options, {cipher, direction, in_len, page_locked}, DeviceCount::before_work,
                         &monitor);
}

wc_status plan_descriptor_job(std::optional<Placement> *plan, const wc_options &options, const wc_cipher &cipher,
                              wc_direction direction, JobMonitor &monitor) {
  // Descriptor input is always staged through host memory, so its size
  // never moves auto's choice (auto_job_choice).
  return plan_cipher_job(plan, nullptr, options, {cipher, direction, 0, false}, DeviceCount::beside_work, &monitor);
}

wc_status describe_placement(std::optional<Placement> *placement, wc_plan_reason *reason, const wc_options &options,
                             const wc_work &work, JobMonitor *monitor) {
  auto refuse = [monitor](wc_status status) {
    if (monitor != nullptr) monitor->fail(status);
    return status;
  };
  // A backend the enum lacks, which the calls' switches refuse
  // (make_backend_cipher).
  if (options.backend < WC_BACKEND_AUTO || options.backend > WC_BACKEND_HYBRID) {
    return refuse(WC_ERR_INVALID_ARGUMENT);
  }
  if (work.data == WC_DATA_DEVICE) {
    if (const wc_status status = check_device_memory(options); status != WC_OK) return refuse(status);
    // The caller's stream on the device that holds the data: no lanes.
    Placement::Fields fields;
    fields.backend = WC_BACKEND_GPU;
    *placement = Planner::make(std::move(fields));
    *reason = WC_PLAN_DEVICE_MEMORY;
    return WC_OK;
  }
  if (work.aead == nullptr) {
    const CipherWork cipher_work{*work.cipher, work.direction, work.total_bytes, work.data == WC_DATA_PINNED};
    return plan_cipher_job(placement, reason, options, cipher_work, DeviceCount::before_work, monitor);
  }
  BackendChoice choice;
  if (const wc_status status = choose_aead_backend(&choice, options, work.data, monitor); status != WC_OK) {
    return refuse(status);
  }
  Placement::Fields fields;
  const wc_status status = resolve_placement(&fields, options, choice.backend, monitor);
  if (status != WC_OK) return status;
  *placement = Planner::make(std::move(fields));
  *reason = choice.reason;
  return WC_OK;
}

wc_status make_backend_cipher(BackendCipher *out, const wc_options &options, const wc_cipher &cipher,
                              wc_direction direction, const KeyMaterial &key) {
  const bool parallel = is_parallel(cipher, direction);
  // Auto and the CPU may never build lanes; the device list is checked all
  // the same.
  if (const wc_status status = check_devices(options, options.backend); status != WC_OK) return status;
  Placement::Fields shape;
  switch (options.backend) {
    case WC_BACKEND_CPU:
      return make_cpu_cipher(out, options, cipher, direction, key);
    case WC_BACKEND_GPU:
    case WC_BACKEND_HYBRID: {
      // Hybrid runs the sequential modes on the CPU; the GPU backends refuse
      // them (the lanes report it).
      if (!parallel && options.backend == WC_BACKEND_HYBRID) {
        return kCpuBackend.make_cipher(out, cipher, direction, key);
      }
      const wc_status status = resolve_placement(&shape, options, options.backend);
      if (status != WC_OK) return status;
      return make_lane_cipher(&out->random_access, Planner::make(std::move(shape)), cipher, direction, key);
    }
    case WC_BACKEND_AUTO: {
      // The CPU, and the engine's CPU and GPU lanes together for calls on
      // page-locked host memory from the mode's break-even size up. The lanes
      // are built on the first call that wants them, so calls that never
      // reach the break-even size never touch the GPU. Whether any call can
      // go there is the jobs' auto rule (auto_job_choice) for the call that
      // suits the GPU best, page-locked and as large as any; each call then
      // asks the rest of it, size first, page-locked memory only from the
      // break-even size up (LanesForLargeCalls).
      wc_status status = make_cpu_cipher(out, options, cipher, direction, key);
      if (status != WC_OK) return status;
      if (auto_job_choice(cipher, direction, UINT64_MAX, /*page_locked=*/true).backend != WC_BACKEND_HYBRID) {
        return WC_OK;
      }
      status = resolve_placement(&shape, options, WC_BACKEND_HYBRID);
      if (status != WC_OK) return status;
      out->random_access =
          std::make_unique<LanesForLargeCalls>(std::move(out->random_access), Planner::make(std::move(shape)), cipher,
                                               direction, key, auto_gpu_min_bytes(cipher, direction));
      return WC_OK;
    }
  }
  return WC_ERR_INVALID_ARGUMENT;
}

wc_status make_stream_state(std::unique_ptr<StreamState> *out, const wc_options &options, const wc_cipher &cipher,
                            wc_direction direction, const KeyMaterial &key) {
  BackendCipher backend_cipher;
  const wc_status status = make_backend_cipher(&backend_cipher, options, cipher, direction, key);
  if (status != WC_OK) return status;
  return StreamState::create(out, std::move(backend_cipher), cipher, direction, key.iv);
}

bool key_has_device_aead(const wc_options &options) {
  return options.backend == WC_BACKEND_AUTO || options.backend == WC_BACKEND_HYBRID;
}

wc_status check_piecewise_aead(const wc_options &options) {
  switch (options.backend) {
    case WC_BACKEND_AUTO:
    case WC_BACKEND_CPU:
    case WC_BACKEND_HYBRID:
      return WC_OK;
    case WC_BACKEND_GPU:
      return WC_ERR_BACKEND_UNAVAILABLE;
  }
  return WC_ERR_INVALID_ARGUMENT;
}

wc_status resolve_aead_spec(LaneSpec *spec, const wc_options &options) {
  switch (options.backend) {
    case WC_BACKEND_AUTO:
    case WC_BACKEND_CPU:
    case WC_BACKEND_HYBRID:
      *spec = LaneSpec{};
      spec->threads = options.threads;
      return check_devices(options, options.backend);
    case WC_BACKEND_GPU: {
      Placement::Fields shape;  // resolve_placement checks the device list too
      const wc_status status = resolve_placement(&shape, options, WC_BACKEND_GPU);
      *spec = LaneSpec{.backend = WC_BACKEND_GPU, .devices = std::move(shape.devices), .streams = shape.streams};
      return status;
    }
  }
  return WC_ERR_INVALID_ARGUMENT;
}

wc_status make_aead(std::unique_ptr<AeadCipher> *out, const LaneSpec &spec, const wc_aead &aead,
                    std::span<const uint8_t> key) {
  if (spec.backend == WC_BACKEND_CPU) {
    *out = kCpuBackend.make_aead(aead, key, spec.threads);
    return *out ? WC_OK : WC_ERR_CRYPTO_LIBRARY;
  }
  std::unique_ptr<AeadCipher> device_aead;
  const wc_status status = kCudaBackend.make_aead(&device_aead, aead, key, spec.devices);
  if (status != WC_OK) return status;
  // Staging is copying, the CPU's work: a lane a core, up to the 16
  // measured, and no fewer than the GPU lanes. On the H200 machine (16
  // cores, 2026-11-29), 1 GiB of pageable AES-256-GCM went through 4
  // lanes at 10-13 GB/s, 8 at 22 and 16 at 27-28 (docs/performance.md).
  // Each lane holds an 8 MiB page-locked window of the process's pool, so
  // more lanes than that pin more without a measured gain.
  constexpr unsigned kMostStagingLanes = 16;
  const unsigned gpu_lanes = spec.streams * static_cast<unsigned>(spec.devices.size());
  *out = stage_host_memory(std::move(device_aead), spec.devices,
                           std::max(gpu_lanes, std::min(usable_cpus(), kMostStagingLanes)), cuda_transfer_backend());
  return WC_OK;
}

}  // namespace warpcrypt::engine
