#include "core/backend_policy.h"

#include "cpu/cpu_backend.h"
#include "cuda/gpu_backend.h"

namespace warpcrypt {
namespace {

// The automatic policy, decided per call: the GPU for page-locked host
// memory from kAutoGpuMinBytes up; the CPU otherwise. Pageable memory stays
// on the CPU: copying it through pinned staging buffers is slower than all
// cores running OpenSSL (see docs/performance.md).
class AutoRandomAccess final : public RandomAccessCipher {
 public:
  AutoRandomAccess(std::unique_ptr<RandomAccessCipher> cpu, std::unique_ptr<RandomAccessCipher> gpu)
      : cpu_(std::move(cpu)), gpu_(std::move(gpu)) {}

  wc_status transform_at(uint64_t position, const uint8_t chain[16], const uint8_t *in, uint8_t *out,
                         size_t len) override {
    const bool gpu_wins = len >= kAutoGpuMinBytes && cuda::page_locked(in) && cuda::page_locked(out);
    RandomAccessCipher &chosen = gpu_wins ? *gpu_ : *cpu_;
    last_ = chosen.last_backend();
    return chosen.transform_at(position, chain, in, out, len);
  }
  wc_backend last_backend() const override { return last_; }

 private:
  std::unique_ptr<RandomAccessCipher> cpu_;
  std::unique_ptr<RandomAccessCipher> gpu_;
  wc_backend last_ = WC_BACKEND_CPU;
};

}  // namespace

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
      if (status != WC_OK || !out->random_access || !cuda::available_for(cipher, direction)) return status;
      BackendCipher gpu;
      if (cuda::make_cipher(&gpu, WC_BACKEND_GPU, cipher, direction, key) != WC_OK) return status;
      out->random_access = std::make_unique<AutoRandomAccess>(std::move(out->random_access),
                                                              std::move(gpu.random_access));
      return WC_OK;
    }
  }
  return WC_ERR_INVALID_ARGUMENT;
}

}  // namespace warpcrypt

extern "C" size_t wc_auto_gpu_min_bytes(void) { return warpcrypt::kAutoGpuMinBytes; }
