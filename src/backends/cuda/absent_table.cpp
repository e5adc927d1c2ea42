// The CUDA table of a build without the CUDA backend: there are no devices,
// and every entry that would use one says so. The api layer has checked the
// arguments before it gets here, so both builds answer a bad call alike.
#include "core/backend_tables.h"

namespace warpcrypt {
namespace {

int no_devices() { return 0; }

bool always() { return true; }

bool never_page_locked(const void *) { return false; }

bool never_started(int) { return false; }

wc_status no_device_info(wc_device_info *, int) { return WC_ERR_NO_DEVICE; }

wc_status no_versions(int *runtime, int *driver) {
  *runtime = 0;
  *driver = 0;
  return WC_ERR_NO_DEVICE;
}

wc_status no_device_cipher(std::unique_ptr<DeviceCipher> *, int, const wc_cipher &, wc_direction, const KeyMaterial &) {
  return WC_ERR_NO_DEVICE;
}

wc_status no_aead(std::unique_ptr<AeadCipher> *, const wc_aead &, std::span<const uint8_t>, std::span<const int>) {
  return WC_ERR_NO_DEVICE;
}

wc_status no_transform(const wc_cipher &, wc_direction, const KeyMaterial &, uint64_t, const uint8_t *, uint8_t *,
                       size_t, wc_cuda_stream) {
  return WC_ERR_NO_DEVICE;
}

wc_status no_batch(const wc_cipher &, std::span<const uint8_t>, bool, const uint8_t *, uint8_t *,
                   std::span<const wc_batch_message>, const uint8_t *, wc_cuda_stream) {
  return WC_ERR_NO_DEVICE;
}

wc_status no_pointer_device(const void *, int *) { return WC_ERR_NO_DEVICE; }

wc_status no_stream_wait(int, wc_cuda_stream, wc_cuda_stream) { return WC_ERR_NO_DEVICE; }

wc_status no_alloc(int, void **, size_t, wc_cuda_stream) { return WC_ERR_NO_DEVICE; }

wc_status no_free(int, void *, wc_cuda_stream) { return WC_ERR_NO_DEVICE; }

wc_status no_clear(int, void *, size_t, wc_cuda_stream) { return WC_ERR_NO_DEVICE; }

wc_status no_read(int, void *, const void *, size_t, wc_cuda_stream) { return WC_ERR_NO_DEVICE; }

wc_status no_transfer(std::unique_ptr<TransferBuffers> *, int, size_t, size_t) { return WC_ERR_NO_DEVICE; }

wc_status no_pinned(void **, size_t) { return WC_ERR_NO_DEVICE; }

void nothing_pinned(void *, size_t) {}

}  // namespace

const CudaBackend kCudaBackend = {
    .compiled_in = false,
    .device_count = no_devices,
    .device_count_is_quick = always,
    .device_info = no_device_info,
    .versions = no_versions,
    .make_device_cipher = no_device_cipher,
    .device_started = never_started,
    .page_locked = never_page_locked,
    .make_aead = no_aead,
    .lease_transfer = no_transfer,
    .transform_device_async = no_transform,
    .batch_encrypt_device_async = no_batch,
    .pointer_device = no_pointer_device,
    .stream_wait = no_stream_wait,
    .alloc_async = no_alloc,
    .free_async = no_free,
    .clear_async = no_clear,
    .read_to_host = no_read,
    .alloc_pinned = no_pinned,
    .free_pinned = nothing_pinned,
};

}  // namespace warpcrypt
