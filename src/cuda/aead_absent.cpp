// The AEAD entry points of a build without the CUDA backend: there is no
// device, and every device call says so.
#include "cuda/aead_gpu.h"

namespace warpcrypt::cuda {

wc_status make_aead(std::unique_ptr<AeadCipher> *, const wc_aead &, std::span<const uint8_t>) {
  return WC_ERR_NO_DEVICE;
}

}  // namespace warpcrypt::cuda

extern "C" {

wc_status wc_aead_seal_device_async(const wc_options *, const wc_aead *, uint8_t *, uint8_t *, size_t, const uint8_t *,
                                    size_t, const uint8_t *, size_t, const uint8_t *, size_t, const uint8_t *, size_t,
                                    wc_cuda_stream) {
  return WC_ERR_NO_DEVICE;
}

wc_status wc_aead_open_device_async(const wc_options *, const wc_aead *, uint8_t *, int32_t *, const uint8_t *, size_t,
                                    const uint8_t *, size_t, const uint8_t *, size_t, const uint8_t *, size_t,
                                    const uint8_t *, size_t, wc_cuda_stream) {
  return WC_ERR_NO_DEVICE;
}

wc_status wc_aead_seal_batch_device_async(const wc_options *, const wc_aead *, const wc_aead_message *, size_t,
                                          size_t, const uint8_t *, size_t, wc_cuda_stream) {
  return WC_ERR_NO_DEVICE;
}

wc_status wc_aead_open_batch_device_async(const wc_options *, const wc_aead *, int32_t *, const wc_aead_message *,
                                          size_t, size_t, const uint8_t *, size_t, wc_cuda_stream) {
  return WC_ERR_NO_DEVICE;
}

}  // extern "C"
