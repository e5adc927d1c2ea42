#include "backends/cuda/gpu_backend.h"

#include <cstring>
#include <vector>

#include "core/stream_state.h"
#include "backends/cuda/device_context.h"
#include "backends/cuda/gpu_cipher.h"
#include "backends/cuda/lane_buffers.h"

namespace warpcrypt::cuda {
namespace {

// One stream of one device. Each chunk is uploaded, transformed in place in
// device memory and downloaded on the lane's stream; the engine runs several
// lanes per device, so one lane's upload overlaps another's kernel and a
// third's download.
class GpuLane final : public Lane {
 public:
  GpuLane(std::shared_ptr<const KeyedGpuCipher> keyed, std::unique_ptr<LeasedBuffers> buffers)
      : keyed_(std::move(keyed)), buffers_(std::move(buffers)) {}

  uint8_t *staging() override { return buffers_->pinned(); }
  bool reaches(const void *host) const override { return host == buffers_->pinned() || page_locked(host); }

  wc_status transform(uint64_t position, const uint8_t chain[16], const uint8_t *in, uint8_t *out,
                      size_t len) override {
    if (len == 0) return WC_OK;
    buffers_->mark_used(len);
    const CurrentDevice on_lane_device(buffers_->device_ordinal());
    wc_status status = on_lane_device.status();
    cudaStream_t stream = buffers_->stream();
    uint8_t *device = buffers_->device();
    if (status == WC_OK) status = device_status(cudaMemcpyAsync(device, in, len, cudaMemcpyHostToDevice, stream));
    if (status == WC_OK) status = transform_device(*keyed_, position, chain, device, device, len, stream);
    if (status == WC_OK) status = device_status(cudaMemcpyAsync(out, device, len, cudaMemcpyDeviceToHost, stream));
    const wc_status waited = buffers_->wait();
    return status != WC_OK ? status : waited;
  }

  wc_backend backend() const override { return WC_BACKEND_GPU; }

 private:
  std::shared_ptr<const KeyedGpuCipher> keyed_;
  std::unique_ptr<LeasedBuffers> buffers_;
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

wc_status make_lanes(std::vector<std::unique_ptr<Lane>> *out, int device, unsigned count, const wc_cipher &cipher,
                     wc_direction direction, const KeyMaterial &key, size_t capacity) {
  const int devices = device_count();
  if (devices == 0) return WC_ERR_NO_DEVICE;
  if (device < 0 || device >= devices) return WC_ERR_INVALID_ARGUMENT;
  if (!gpu_supports(cipher, direction)) return WC_ERR_BACKEND_UNAVAILABLE;
  const CurrentDevice on_device(device);
  wc_status status = on_device.status();
  if (status != WC_OK) return status;
  if (current_device_context() == nullptr) return WC_ERR_DEVICE;
  auto keyed = std::make_shared<const KeyedGpuCipher>(cipher, direction, key, selected_implementation());
  for (unsigned i = 0; i < count; ++i) {
    std::unique_ptr<LeasedBuffers> buffers;
    status = LeasedBuffers::acquire(&buffers, device, capacity, capacity);
    if (status != WC_OK) return status;
    out->push_back(std::make_unique<GpuLane>(keyed, std::move(buffers)));
  }
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

