// The CUDA entry points of a build without the CUDA backend: there are no
// devices, and every device call says so.
#include "core/backend.h"
#include "cuda/gpu_backend.h"

namespace warpcrypt::cuda {

bool page_locked(const void *) { return false; }

wc_status make_lanes(std::vector<std::unique_ptr<Lane>> *, int, unsigned, wc_backend, const wc_cipher &,
                     wc_direction, const KeyMaterial &, size_t) {
  return WC_ERR_NO_DEVICE;
}

}  // namespace warpcrypt::cuda

extern "C" {

wc_status wc_device_count(int *count) {
  if (count == nullptr) return WC_ERR_INVALID_ARGUMENT;
  *count = 0;
  return WC_OK;
}

wc_status wc_device_info_get(wc_device_info *info, int) {
  return info == nullptr ? WC_ERR_INVALID_ARGUMENT : WC_ERR_NO_DEVICE;
}

int wc_built_with_cuda(void) { return 0; }

wc_status wc_encrypt_device_async(const wc_options *, const wc_cipher *, uint8_t *, const uint8_t *, size_t,
                                  const uint8_t *, size_t, const uint8_t *, size_t, uint64_t, wc_cuda_stream) {
  return WC_ERR_NO_DEVICE;
}

wc_status wc_decrypt_device_async(const wc_options *, const wc_cipher *, uint8_t *, const uint8_t *, size_t,
                                  const uint8_t *, size_t, const uint8_t *, size_t, uint64_t, wc_cuda_stream) {
  return WC_ERR_NO_DEVICE;
}

wc_status wc_batch_encrypt_device_async(const wc_options *, const wc_cipher *, uint8_t *, const uint8_t *,
                                        const wc_batch_message *, size_t, const uint8_t *, size_t,
                                        const uint8_t *, wc_cuda_stream) {
  return WC_ERR_NO_DEVICE;
}

}  // extern "C"
