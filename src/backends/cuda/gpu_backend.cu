#include "backends/cuda/gpu_backend.h"

#include <cstring>
#include <vector>

#include "core/stream_state.h"
#include "backends/cuda/device_context.h"
#include "backends/cuda/gpu_cipher.h"

namespace warpcrypt::cuda {
namespace {

// A plain cipher keyed on one device; the engine's transfer lanes move each
// chunk up and back, and it queues the chunk's kernel on the lane's stream.
// The engine runs several lanes per device, so one lane's upload overlaps
// another's kernel and a third's download.
class KeyedDeviceCipher final : public DeviceCipher {
 public:
  KeyedDeviceCipher(int device, const wc_cipher &cipher, wc_direction direction, const KeyMaterial &key)
      : device_(device), keyed_(cipher, direction, key, selected_implementation()) {}

  wc_status queue(uint64_t position, const uint8_t chain[16], uint8_t *device, size_t len,
                  wc_cuda_stream stream) const override {
    const CurrentDevice on_device(device_);
    if (on_device.status() != WC_OK) return on_device.status();
    return transform_device(keyed_, position, chain, device, device, len, static_cast<cudaStream_t>(stream));
  }

 private:
  int device_;
  KeyedGpuCipher keyed_;
};

}  // namespace

bool device_started(int device) { return device_context_ready(device); }

bool page_locked(const void *host) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, host) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeHost;
}

wc_status make_device_cipher(std::unique_ptr<DeviceCipher> *out, int device, const wc_cipher &cipher,
                             wc_direction direction, const KeyMaterial &key) {
  const int devices = device_count();
  if (devices == 0) return WC_ERR_NO_DEVICE;
  if (device < 0 || device >= devices) return WC_ERR_INVALID_ARGUMENT;
  if (!gpu_supports(cipher, direction)) return WC_ERR_BACKEND_UNAVAILABLE;
  const CurrentDevice on_device(device);
  if (on_device.status() != WC_OK) return on_device.status();
  if (current_device_context() == nullptr) return WC_ERR_DEVICE;
  *out = std::make_unique<KeyedDeviceCipher>(device, cipher, direction, key);
  return WC_OK;
}

wc_status transform_device_async(const wc_cipher &cipher, wc_direction direction, const KeyMaterial &key,
                                 uint64_t stream_offset, const uint8_t *in, uint8_t *out, size_t len,
                                 wc_cuda_stream stream) {
  if (!gpu_supports(cipher, direction)) return WC_ERR_BACKEND_UNAVAILABLE;
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  const WorkDevice on_device(cuda_stream, {in, out});
  if (on_device.status() != WC_OK) return on_device.status();
  const KeyedGpuCipher keyed(cipher, direction, key, selected_implementation());
  uint8_t chain[16] = {};
  if (key.iv.size() == 16) std::memcpy(chain, key.iv.data(), 16);
  return transform_device(keyed, stream_offset, chain, in, out, len, cuda_stream);
}

wc_status batch_encrypt_device_async(const wc_cipher &cipher, std::span<const uint8_t> key, bool padding,
                                     const uint8_t *in, uint8_t *out, std::span<const wc_batch_message> messages,
                                     const uint8_t *ivs, wc_cuda_stream stream) {
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  const WorkDevice on_device(cuda_stream, {in, out});
  if (on_device.status() != WC_OK) return on_device.status();
  const KeyedGpuCipher keyed(cipher, WC_ENCRYPT, KeyMaterial{key, {}}, Implementation::optimized);
  return batch_encrypt_device(keyed, padding, in, out, messages.data(), messages.size(), ivs, cuda_stream);
}

}  // namespace warpcrypt::cuda

