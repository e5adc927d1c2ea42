#include "engine/backend_policy.h"

#include <cstdint>
#include <cstring>

#include "core/backend_tables.h"
#include "core/secret_bytes.h"
#include "core/stream_state.h"
#include "core/cpu_budget.h"
#include "engine/lane_cipher.h"

namespace warpcrypt::engine {
namespace {

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
  LanesForLargeCalls(std::unique_ptr<RandomAccessCipher> small_calls, EngineShape shape, const wc_cipher &cipher,
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
    return shape_.backend == WC_BACKEND_CPU || (kCudaBackend.page_locked(in) && kCudaBackend.page_locked(out));
  }

  std::unique_ptr<RandomAccessCipher> small_calls_;
  std::unique_ptr<RandomAccessCipher> lanes_;
  bool lanes_failed_ = false;
  EngineShape shape_;
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
  EngineShape shape;
  shape.backend = WC_BACKEND_CPU;
  shape.cpu_lanes = threads;
  shape.chunk_bytes = shape.unit_bytes = WC_DEFAULT_CPU_CHUNK_BYTES;
  out->random_access = std::make_unique<LanesForLargeCalls>(std::move(out->random_access), std::move(shape), cipher,
                                                            direction, key, 2 * kMinCpuChunk);
  return WC_OK;
}

bool gpu_can_run(const wc_cipher &cipher, wc_direction direction) {
  return kCudaBackend.device_count() > 0 && auto_gpu_min_bytes(cipher, direction) != kNever;
}

}  // namespace

size_t auto_gpu_min_bytes(const wc_cipher &cipher, wc_direction direction) {
  for (const BreakEven &entry : kBreakEven) {
    if (std::strcmp(entry.cipher, cipher.name) == 0 && entry.direction == direction) return entry.min_bytes;
  }
  return kNever;
}

wc_backend auto_job_backend(const wc_cipher &cipher, wc_direction direction, uint64_t input_bytes,
                            bool page_locked) {
  const bool gpu_wins = page_locked && is_parallel(cipher, direction) && gpu_can_run(cipher, direction) &&
                        input_bytes >= auto_gpu_min_bytes(cipher, direction);
  return gpu_wins ? WC_BACKEND_HYBRID : WC_BACKEND_CPU;
}

wc_status make_backend_cipher(BackendCipher *out, const wc_options &options, const wc_cipher &cipher,
                              wc_direction direction, const KeyMaterial &key) {
  const bool parallel = is_parallel(cipher, direction);
  // Auto and the CPU may never build lanes; the device list is checked all
  // the same.
  if (const wc_status status = engine::check_devices(options, options.backend); status != WC_OK) return status;
  engine::EngineShape shape;
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
      const wc_status status = engine::resolve_shape(&shape, options, options.backend);
      if (status != WC_OK) return status;
      return engine::make_lane_cipher(&out->random_access, shape, cipher, direction, key);
    }
    case WC_BACKEND_AUTO: {
      // The CPU, and the engine's CPU and GPU lanes together for calls on
      // page-locked host memory from the mode's break-even size up. The lanes
      // are built on the first call that wants them, so calls that never
      // reach the break-even size never touch the GPU.
      wc_status status = make_cpu_cipher(out, options, cipher, direction, key);
      if (status != WC_OK || !parallel || !gpu_can_run(cipher, direction)) return status;
      status = engine::resolve_shape(&shape, options, WC_BACKEND_HYBRID);
      if (status != WC_OK) return status;
      out->random_access = std::make_unique<LanesForLargeCalls>(std::move(out->random_access), std::move(shape), cipher,
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

wc_status make_aead(std::unique_ptr<AeadCipher> *out, const wc_options &options, const wc_aead &aead,
                    std::span<const uint8_t> key) {
  switch (options.backend) {
    case WC_BACKEND_AUTO:
    case WC_BACKEND_CPU:
    case WC_BACKEND_HYBRID: {
      const wc_status status = engine::check_devices(options, options.backend);
      if (status != WC_OK) return status;
      *out = kCpuBackend.make_aead(aead, key, options.threads);
      return *out ? WC_OK : WC_ERR_CRYPTO_LIBRARY;
    }
    case WC_BACKEND_GPU: {
      engine::EngineShape shape;  // resolve_shape checks the device list too
      const wc_status status = engine::resolve_shape(&shape, options, WC_BACKEND_GPU);
      return status == WC_OK ? kCudaBackend.make_aead(out, aead, key, shape.devices) : status;
    }
  }
  return WC_ERR_INVALID_ARGUMENT;
}

}  // namespace warpcrypt::engine
