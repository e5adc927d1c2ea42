#include "engine/backend_policy.h"

#include <cstdint>
#include <cstring>

#include "core/secret_bytes.h"
#include "core/backends.h"
#include "core/stream_state.h"
#include "engine/lane_cipher.h"

namespace warpcrypt::engine {
namespace {

constexpr size_t kNever = SIZE_MAX;
constexpr size_t KiB = 1024, MiB = 1024 * KiB;

// Break-even sizes from the benchmark sweep on the H100 machine (16 cores,
// PCIe Gen5; docs/performance.md, 2026-11-22): the smallest size from which
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

// The automatic policy, decided per call: the engine's CPU and GPU lanes
// together for page-locked host memory from the mode's break-even size up;
// the CPU otherwise. Pageable memory stays on the CPU: copying it through
// pinned staging buffers is slower than all cores running OpenSSL (see
// docs/performance.md). The lanes are built on the first call that wants
// them, so calls that never reach the break-even size never touch the GPU.
class AutoRandomAccess final : public RandomAccessCipher {
 public:
  AutoRandomAccess(std::unique_ptr<RandomAccessCipher> cpu, engine::EngineShape shape, const wc_cipher &cipher,
                   wc_direction direction, const KeyMaterial &key, size_t gpu_min_bytes)
      : cpu_(std::move(cpu)), shape_(std::move(shape)), cipher_(cipher), direction_(direction), key_(key.key),
        iv_(key.iv), gpu_min_bytes_(gpu_min_bytes) {}

  wc_status transform_at(uint64_t position, const uint8_t chain[16], const uint8_t *in, uint8_t *out,
                         size_t len) override {
    RandomAccessCipher *chosen = cpu_.get();
    if (len >= gpu_min_bytes_ && kCudaBackend.page_locked(in) && kCudaBackend.page_locked(out)) {
      if (!hybrid_ && !hybrid_failed_) {
        const KeyMaterial key{{key_.data(), key_.size()}, {iv_.data(), iv_.size()}};
        hybrid_failed_ = engine::make_lane_cipher(&hybrid_, shape_, cipher_, direction_, key) != WC_OK;
      }
      if (hybrid_) chosen = hybrid_.get();
    }
    const wc_status status = chosen->transform_at(position, chain, in, out, len);
    last_ = chosen->last_backend();
    return status;
  }
  wc_backend last_backend() const override { return last_; }

 private:
  std::unique_ptr<RandomAccessCipher> cpu_;
  std::unique_ptr<RandomAccessCipher> hybrid_;
  bool hybrid_failed_ = false;  // no device after all: the CPU takes everything
  engine::EngineShape shape_;
  const wc_cipher &cipher_;
  wc_direction direction_;
  SecretBytes key_;
  SecretBytes iv_;
  size_t gpu_min_bytes_;
  wc_backend last_ = WC_BACKEND_CPU;
};

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
  engine::EngineShape shape;
  switch (options.backend) {
    case WC_BACKEND_CPU:
      return kCpuBackend.make_cipher(out, options, cipher, direction, key);
    case WC_BACKEND_GPU:
    case WC_BACKEND_HYBRID: {
      // Hybrid runs the sequential modes on the CPU; the GPU backends refuse
      // them (the lanes report it).
      if (!parallel && options.backend == WC_BACKEND_HYBRID) return kCpuBackend.make_cipher(out, options, cipher, direction, key);
      const wc_status status = engine::resolve_shape(&shape, options, options.backend);
      if (status != WC_OK) return status;
      return engine::make_lane_cipher(&out->random_access, shape, cipher, direction, key);
    }
    case WC_BACKEND_AUTO: {
      wc_status status = kCpuBackend.make_cipher(out, options, cipher, direction, key);
      if (status != WC_OK || !parallel || !gpu_can_run(cipher, direction)) return status;
      status = engine::resolve_shape(&shape, options, WC_BACKEND_HYBRID);
      if (status != WC_OK) return status;
      out->random_access = std::make_unique<AutoRandomAccess>(std::move(out->random_access), std::move(shape), cipher,
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

wc_status make_aead(std::unique_ptr<AeadCipher> *out, wc_backend backend, const wc_aead &aead,
                    std::span<const uint8_t> key, unsigned threads) {
  switch (backend) {
    case WC_BACKEND_AUTO:
    case WC_BACKEND_CPU:
    case WC_BACKEND_HYBRID:
      *out = kCpuBackend.make_aead(aead, key, threads);
      return *out ? WC_OK : WC_ERR_CRYPTO_LIBRARY;
    case WC_BACKEND_GPU: return kCudaBackend.make_aead(out, aead, key);
  }
  return WC_ERR_INVALID_ARGUMENT;
}

}  // namespace warpcrypt::engine
