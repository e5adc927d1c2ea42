#include "core/backend_policy.h"

#include <cstdint>
#include <cstring>

#include "cpu/cpu_backend.h"
#include "cuda/gpu_backend.h"

namespace warpcrypt {
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

// The automatic policy, decided per call: the GPU for page-locked host
// memory from the mode's break-even size up; the CPU otherwise. Pageable
// memory stays on the CPU: copying it through pinned staging buffers is
// slower than all cores running OpenSSL (see docs/performance.md).
class AutoRandomAccess final : public RandomAccessCipher {
 public:
  AutoRandomAccess(std::unique_ptr<RandomAccessCipher> cpu, std::unique_ptr<RandomAccessCipher> gpu,
                   size_t gpu_min_bytes)
      : cpu_(std::move(cpu)), gpu_(std::move(gpu)), gpu_min_bytes_(gpu_min_bytes) {}

  wc_status transform_at(uint64_t position, const uint8_t chain[16], const uint8_t *in, uint8_t *out,
                         size_t len) override {
    const bool gpu_wins = len >= gpu_min_bytes_ && cuda::page_locked(in) && cuda::page_locked(out);
    RandomAccessCipher &chosen = gpu_wins ? *gpu_ : *cpu_;
    last_ = chosen.last_backend();
    return chosen.transform_at(position, chain, in, out, len);
  }
  wc_backend last_backend() const override { return last_; }

 private:
  std::unique_ptr<RandomAccessCipher> cpu_;
  std::unique_ptr<RandomAccessCipher> gpu_;
  size_t gpu_min_bytes_;
  wc_backend last_ = WC_BACKEND_CPU;
};

}  // namespace

size_t auto_gpu_min_bytes(const wc_cipher &cipher, wc_direction direction) {
  for (const BreakEven &entry : kBreakEven) {
    if (std::strcmp(entry.cipher, cipher.name) == 0 && entry.direction == direction) return entry.min_bytes;
  }
  return kNever;
}

wc_status make_backend_cipher(BackendCipher *out, const wc_options &options, const wc_cipher &cipher,
                              wc_direction direction, const KeyMaterial &key) {
  switch (options.backend) {
    case WC_BACKEND_CPU:
      return cpu::make_cipher(out, options, cipher, direction, key);
    case WC_BACKEND_GPU:
    case WC_BACKEND_GPU_REFERENCE:
      return cuda::make_cipher(out, options.backend, cipher, direction, key);
    case WC_BACKEND_AUTO: {
      const wc_status status = cpu::make_cipher(out, options, cipher, direction, key);
      const size_t gpu_min_bytes = auto_gpu_min_bytes(cipher, direction);
      if (status != WC_OK || !out->random_access || gpu_min_bytes == kNever) return status;
      // No device, or a mode the GPU does not run: the CPU takes everything.
      BackendCipher gpu;
      if (cuda::make_cipher(&gpu, WC_BACKEND_GPU, cipher, direction, key) != WC_OK) return status;
      out->random_access = std::make_unique<AutoRandomAccess>(std::move(out->random_access),
                                                              std::move(gpu.random_access), gpu_min_bytes);
      return WC_OK;
    }
  }
  return WC_ERR_INVALID_ARGUMENT;
}

}  // namespace warpcrypt

extern "C" size_t wc_auto_gpu_min_bytes(const wc_cipher *cipher, wc_direction direction) {
  return cipher != nullptr ? warpcrypt::auto_gpu_min_bytes(*cipher, direction) : SIZE_MAX;
}
