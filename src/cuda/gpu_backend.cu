#include "cuda/gpu_backend.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/stream_state.h"
#include "cuda/device_context.h"
#include "cuda/gpu_cipher.h"
#include "cuda/tuning.h"

namespace warpcrypt::cuda {
namespace {

// Two pinned staging buffers, two device buffers and two streams per device,
// shared by every host-pointer call on it (one at a time). Allocated on first
// use: pinning memory is slow.
struct HostStaging {
  std::mutex mutex;
  bool ready = false;
  std::array<cudaStream_t, 2> streams{};
  std::array<uint8_t *, 2> pinned{};
  std::array<uint8_t *, 2> device{};

  wc_status ensure() {
    if (ready) return WC_OK;
    for (int s = 0; s < 2; ++s) {
      if (cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking) != cudaSuccess ||
          cudaMallocHost(&pinned[s], tuning::kHostStagingBytes) != cudaSuccess ||
          cudaMalloc(&device[s], tuning::kHostStagingBytes) != cudaSuccess) {
        return device_status(cudaErrorMemoryAllocation);
      }
    }
    ready = true;
    return WC_OK;
  }
};

HostStaging &staging_for(int device) {
  static std::array<HostStaging, 64> staging;
  return staging[static_cast<size_t>(device) % staging.size()];
}

class GpuRandomAccess final : public RandomAccessCipher {
 public:
  GpuRandomAccess(const wc_cipher &cipher, wc_direction direction, const KeyMaterial &key,
                  Implementation implementation, wc_backend backend)
      : keyed_(cipher, direction, key, implementation), backend_(backend) {}

  wc_backend last_backend() const override { return backend_; }

  // Host memory in, host memory out, through the GPU in staging-sized
  // pieces on two streams. Page-locked buffers are copied to and from the
  // GPU directly, so one piece's upload overlaps another's download;
  // pageable ones go through pinned staging buffers, which the CPU fills
  // and empties while the GPU works on the other piece.
  wc_status transform_at(uint64_t position, const uint8_t chain[16], const uint8_t *in, uint8_t *out,
                         size_t len) override {
    if (len == 0) return WC_OK;
    const DeviceContext *context = current_device_context();
    if (context == nullptr) return WC_ERR_NO_DEVICE;
    HostStaging &staging = staging_for(context->device);
    std::lock_guard lock(staging.mutex);
    wc_status status = staging.ensure();
    if (status != WC_OK) return status;

    const std::vector<uint8_t> chains = piece_chains(*keyed_.cipher, chain, in, len, tuning::kHostStagingBytes);
    if (page_locked(in) && page_locked(out)) return transform_page_locked(staging, position, chains, in, out, len);
    return transform_staged(staging, position, chains, in, out, len);
  }

 private:
  // Queues one piece on `stream`: upload, transform in place on the device,
  // download. `from` and `to` are page-locked host memory.
  wc_status queue_piece(const HostStaging &staging, int slot, uint64_t position, const uint8_t *chain,
                        const uint8_t *from, uint8_t *to, size_t n) const {
    cudaStream_t stream = staging.streams[slot];
    uint8_t *device = staging.device[slot];
    wc_status status = device_status(cudaMemcpyAsync(device, from, n, cudaMemcpyHostToDevice, stream));
    if (status == WC_OK) status = transform_device(keyed_, position, chain, device, device, n, stream);
    if (status == WC_OK) status = device_status(cudaMemcpyAsync(to, device, n, cudaMemcpyDeviceToHost, stream));
    return status;
  }

  // The caller's buffers are page-locked: every piece is queued straight
  // from and to them, alternating streams, then both streams are awaited.
  wc_status transform_page_locked(const HostStaging &staging, uint64_t position, const std::vector<uint8_t> &chains,
                                  const uint8_t *in, uint8_t *out, size_t len) const {
    const size_t piece = tuning::kHostStagingBytes;
    wc_status status = WC_OK;
    for (size_t i = 0, offset = 0; offset < len && status == WC_OK; ++i, offset += piece) {
      status = queue_piece(staging, static_cast<int>(i % 2), position + offset, &chains[16 * i], in + offset,
                           out + offset, std::min(piece, len - offset));
    }
    for (cudaStream_t stream : staging.streams) {
      const wc_status synced = device_status(cudaStreamSynchronize(stream));
      if (status == WC_OK) status = synced;
    }
    return status;
  }

  // Pageable buffers: each piece is copied into a pinned staging buffer and
  // back out of it once its stream is done, the two slots alternating.
  wc_status transform_staged(const HostStaging &staging, uint64_t position, const std::vector<uint8_t> &chains,
                             const uint8_t *in, uint8_t *out, size_t len) const {
    const size_t piece = tuning::kHostStagingBytes;
    struct InFlight {
      size_t offset = 0;
      size_t len = 0;
    };
    std::array<InFlight, 2> in_flight{};
    auto drain = [&](int slot) {
      if (in_flight[slot].len == 0) return WC_OK;
      const wc_status synced = device_status(cudaStreamSynchronize(staging.streams[slot]));
      if (synced == WC_OK) std::memcpy(out + in_flight[slot].offset, staging.pinned[slot], in_flight[slot].len);
      in_flight[slot] = {};
      return synced;
    };
    wc_status status = WC_OK;
    for (size_t i = 0, offset = 0; offset < len && status == WC_OK; ++i, offset += piece) {
      const int slot = static_cast<int>(i % 2);
      status = drain(slot);
      if (status != WC_OK) break;
      const size_t n = std::min(piece, len - offset);
      std::memcpy(staging.pinned[slot], in + offset, n);
      status = queue_piece(staging, slot, position + offset, &chains[16 * i], staging.pinned[slot],
                           staging.pinned[slot], n);
      in_flight[slot] = {offset, n};
    }
    for (int slot = 0; slot < 2; ++slot) {
      const wc_status drained = drain(slot);
      if (status == WC_OK) status = drained;
    }
    // The staging buffers held plaintext.
    for (uint8_t *pinned : staging.pinned) wc_memzero(pinned, std::min(len, piece));
    return status;
  }

  KeyedGpuCipher keyed_;
  wc_backend backend_;
};

int usable_devices() {
  int count = 0;
  return wc_device_count(&count) == WC_OK ? count : 0;
}

}  // namespace

bool page_locked(const void *host) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, host) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeHost;
}

wc_status make_cipher(BackendCipher *out, wc_backend backend, const wc_cipher &cipher,
                      wc_direction direction, const KeyMaterial &key) {
  if (usable_devices() == 0) return WC_ERR_NO_DEVICE;
  if (!gpu_supports(cipher, direction)) return WC_ERR_BACKEND_UNAVAILABLE;
  const Implementation implementation =
      backend == WC_BACKEND_GPU_REFERENCE ? Implementation::reference : Implementation::optimized;
  out->random_access = std::make_unique<GpuRandomAccess>(cipher, direction, key, implementation, backend);
  return WC_OK;
}

}  // namespace warpcrypt::cuda

namespace {

using warpcrypt::cuda::Implementation;
using warpcrypt::cuda::KeyedGpuCipher;

wc_status crypt_device_async(wc_direction direction, const wc_options *options, const wc_cipher *cipher,
                             uint8_t *out, const uint8_t *in, size_t len, const uint8_t *key, size_t key_len,
                             const uint8_t *iv, size_t iv_len, uint64_t stream_offset, wc_cuda_stream stream) {
  if (cipher == nullptr) return WC_ERR_UNKNOWN_CIPHER;
  if (len != 0 && (in == nullptr || out == nullptr)) return WC_ERR_INVALID_ARGUMENT;
  wc_status status = warpcrypt::check_key_and_iv(*cipher, key, key_len, iv, iv_len);
  if (status != WC_OK) return status;
  if (!warpcrypt::cuda::gpu_supports(*cipher, direction)) return WC_ERR_BACKEND_UNAVAILABLE;
  const bool block_mode = cipher->mode == warpcrypt::Mode::ecb || cipher->mode == warpcrypt::Mode::cbc ||
                          cipher->mode == warpcrypt::Mode::cfb128;
  if (block_mode && stream_offset % 16 != 0) return WC_ERR_INVALID_ARGUMENT;
  if (cipher->block_len == 16 && len % 16 != 0) return WC_ERR_NOT_BLOCK_ALIGNED;  // ECB, CBC: no padding here
  int devices = 0;
  if (wc_device_count(&devices) != WC_OK || devices == 0) return WC_ERR_NO_DEVICE;
  const bool reference = options != nullptr && options->backend == WC_BACKEND_GPU_REFERENCE;
  const KeyedGpuCipher keyed(*cipher, direction, warpcrypt::KeyMaterial{{key, key_len}, {iv, iv_len}},
                             reference ? Implementation::reference : Implementation::optimized);
  uint8_t chain[16] = {};
  if (iv_len == 16) std::memcpy(chain, iv, 16);
  return warpcrypt::cuda::transform_device(keyed, stream_offset, chain, in, out, len, stream);
}

}  // namespace

extern "C" {

wc_status wc_encrypt_device_async(const wc_options *options, const wc_cipher *cipher, uint8_t *out,
                                  const uint8_t *in, size_t len, const uint8_t *key, size_t key_len,
                                  const uint8_t *iv, size_t iv_len, uint64_t stream_offset,
                                  wc_cuda_stream stream) {
  return crypt_device_async(WC_ENCRYPT, options, cipher, out, in, len, key, key_len, iv, iv_len, stream_offset,
                            stream);
}

wc_status wc_decrypt_device_async(const wc_options *options, const wc_cipher *cipher, uint8_t *out,
                                  const uint8_t *in, size_t len, const uint8_t *key, size_t key_len,
                                  const uint8_t *iv, size_t iv_len, uint64_t stream_offset,
                                  wc_cuda_stream stream) {
  return crypt_device_async(WC_DECRYPT, options, cipher, out, in, len, key, key_len, iv, iv_len, stream_offset,
                            stream);
}

wc_status wc_batch_encrypt_device_async(const wc_options *options, const wc_cipher *cipher, uint8_t *out,
                                        const uint8_t *in, const wc_batch_message *messages, size_t count,
                                        const uint8_t *key, size_t key_len, const uint8_t *ivs,
                                        wc_cuda_stream stream) {
  if (cipher == nullptr) return WC_ERR_UNKNOWN_CIPHER;
  if (cipher->mode != warpcrypt::Mode::cbc && cipher->mode != warpcrypt::Mode::cfb128) return WC_ERR_UNSUPPORTED;
  if (key_len != cipher->key_len) return WC_ERR_KEY_LEN;
  if (key == nullptr || (count != 0 && (messages == nullptr || ivs == nullptr || in == nullptr || out == nullptr))) {
    return WC_ERR_INVALID_ARGUMENT;
  }
  const bool padding = options == nullptr || options->padding != 0;
  if (cipher->mode == warpcrypt::Mode::cbc && !padding) {
    for (size_t i = 0; i < count; ++i) {
      if (messages[i].in_len % 16 != 0) return WC_ERR_NOT_BLOCK_ALIGNED;
    }
  }
  int devices = 0;
  if (wc_device_count(&devices) != WC_OK || devices == 0) return WC_ERR_NO_DEVICE;
  const KeyedGpuCipher keyed(*cipher, WC_ENCRYPT, warpcrypt::KeyMaterial{{key, key_len}, {}},
                             Implementation::optimized);
  return warpcrypt::cuda::batch_encrypt_device(keyed, padding, in, out, messages, count, ivs, stream);
}

}  // extern "C"
