// The device entries of the C API: argument checks, then the CUDA backend's
// table. A build without CUDA links a table whose entries answer
// WC_ERR_NO_DEVICE, after the same checks, so a bad call gets the same
// answer from either build.
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "api/arguments.h"
#include "core/aead_registry.h"
#include "core/backend_tables.h"
#include "core/cipher_registry.h"
#include "core/stream_state.h"
#include "engine/file_to_device.h"

using warpcrypt::kCudaBackend;

namespace {

wc_status crypt_device_async(wc_direction direction, const wc_cipher *cipher,
                             uint8_t *out, const uint8_t *in, size_t len, const uint8_t *key, size_t key_len,
                             const uint8_t *iv, size_t iv_len, uint64_t stream_offset, wc_cuda_stream stream) {
  if (cipher == nullptr) return WC_ERR_UNKNOWN_CIPHER;
  if (len != 0 && (in == nullptr || out == nullptr)) return WC_ERR_INVALID_ARGUMENT;
  const wc_status status = warpcrypt::check_key_and_iv(*cipher, key, key_len, iv, iv_len);
  if (status != WC_OK) return status;
  const bool block_mode = cipher->mode == warpcrypt::Mode::ecb || cipher->mode == warpcrypt::Mode::cbc ||
                          cipher->mode == warpcrypt::Mode::cfb128;
  if (block_mode && stream_offset % 16 != 0) return WC_ERR_INVALID_ARGUMENT;
  if (cipher->block_len == 16 && len % 16 != 0) return WC_ERR_NOT_BLOCK_ALIGNED;  // ECB, CBC: no padding here
  if (kCudaBackend.device_count() == 0) return WC_ERR_NO_DEVICE;
  return kCudaBackend.transform_device_async(*cipher, direction, warpcrypt::key_material(key, key_len, iv, iv_len),
                                             stream_offset, in, out, len, stream);
}

// A device this machine has, or -1 (the stream's): WC_ERR_NO_DEVICE for any
// other ordinal, and for every one where there is no device.
wc_status check_device(int device) {
  const int count = kCudaBackend.device_count();
  return count > 0 && device >= -1 && device < count ? WC_OK : WC_ERR_NO_DEVICE;
}

}  // namespace

extern "C" {

int wc_built_with_cuda(void) { return kCudaBackend.compiled_in ? 1 : 0; }

wc_status wc_cuda_versions(int *runtime, int *driver) {
  if (runtime == nullptr || driver == nullptr) return WC_ERR_INVALID_ARGUMENT;
  return kCudaBackend.versions(runtime, driver);
}

wc_status wc_device_count(int *count) {
  if (count == nullptr) return WC_ERR_INVALID_ARGUMENT;
  *count = kCudaBackend.device_count();
  return WC_OK;
}

wc_status wc_device_info_get(wc_device_info *info, int device) {
  if (info == nullptr) return WC_ERR_INVALID_ARGUMENT;
  std::memset(info, 0, sizeof *info);
  if (device < 0 || device >= kCudaBackend.device_count()) return WC_ERR_NO_DEVICE;
  return kCudaBackend.device_info(info, device);
}

wc_status wc_encrypt_device_async(const wc_cipher *cipher, uint8_t *out,
                                  const uint8_t *in, size_t len, const uint8_t *key, size_t key_len,
                                  const uint8_t *iv, size_t iv_len, uint64_t stream_offset,
                                  wc_cuda_stream stream) {
  return crypt_device_async(WC_ENCRYPT, cipher, out, in, len, key, key_len, iv, iv_len, stream_offset,
                            stream);
}

wc_status wc_decrypt_device_async(const wc_cipher *cipher, uint8_t *out,
                                  const uint8_t *in, size_t len, const uint8_t *key, size_t key_len,
                                  const uint8_t *iv, size_t iv_len, uint64_t stream_offset,
                                  wc_cuda_stream stream) {
  return crypt_device_async(WC_DECRYPT, cipher, out, in, len, key, key_len, iv, iv_len, stream_offset,
                            stream);
}

wc_status wc_batch_encrypt_device_async(const wc_cipher *cipher, uint8_t *out,
                                        const uint8_t *in, const wc_batch_message *messages, size_t count,
                                        const uint8_t *key, size_t key_len, const uint8_t *ivs,
                                        wc_cuda_stream stream) {
  if (cipher == nullptr) return WC_ERR_UNKNOWN_CIPHER;
  if (cipher->mode != warpcrypt::Mode::cbc && cipher->mode != warpcrypt::Mode::cfb128) return WC_ERR_UNSUPPORTED;
  if (key_len != cipher->key_len) return WC_ERR_KEY_LEN;
  if (key == nullptr || (count != 0 && (messages == nullptr || ivs == nullptr || in == nullptr || out == nullptr))) {
    return WC_ERR_INVALID_ARGUMENT;
  }
  const bool padding = warpcrypt::is_padded(*cipher);
  if (cipher->mode == warpcrypt::Mode::cbc && !padding) {
    for (size_t i = 0; i < count; ++i) {
      if (messages[i].in_len % 16 != 0) return WC_ERR_NOT_BLOCK_ALIGNED;
    }
  }
  if (kCudaBackend.device_count() == 0) return WC_ERR_NO_DEVICE;
  return kCudaBackend.batch_encrypt_device_async(*cipher, {key, key_len}, padding, in, out, {messages, count}, ivs,
                                                 stream);
}

wc_status wc_device_of(const void *pointer, int *device) {
  if (pointer == nullptr || device == nullptr) return WC_ERR_INVALID_ARGUMENT;
  if (kCudaBackend.device_count() == 0) return WC_ERR_NO_DEVICE;
  return kCudaBackend.pointer_device(pointer, device);
}

wc_status wc_cuda_stream_wait(int device, wc_cuda_stream consumer, wc_cuda_stream producer) {
  if (const wc_status status = check_device(device); status != WC_OK) return status;
  return kCudaBackend.stream_wait(device, consumer, producer);
}

wc_status wc_device_alloc_async(int device, void **pointer, size_t bytes, wc_cuda_stream stream) {
  if (pointer == nullptr || bytes == 0) return WC_ERR_INVALID_ARGUMENT;
  *pointer = nullptr;
  if (const wc_status status = check_device(device); status != WC_OK) return status;
  return kCudaBackend.alloc_async(device, pointer, bytes, stream);
}

wc_status wc_device_free_async(int device, void *pointer, wc_cuda_stream stream) {
  if (pointer == nullptr) return WC_OK;  // as free(NULL)
  if (const wc_status status = check_device(device); status != WC_OK) return status;
  return kCudaBackend.free_async(device, pointer, stream);
}

wc_status wc_device_clear_async(int device, void *pointer, size_t bytes, wc_cuda_stream stream) {
  if (bytes != 0 && pointer == nullptr) return WC_ERR_INVALID_ARGUMENT;
  if (const wc_status status = check_device(device); status != WC_OK) return status;
  return bytes == 0 ? WC_OK : kCudaBackend.clear_async(device, pointer, bytes, stream);
}

wc_status wc_device_read(int device, void *host, const void *pointer, size_t bytes, wc_cuda_stream stream) {
  if (bytes != 0 && (host == nullptr || pointer == nullptr)) return WC_ERR_INVALID_ARGUMENT;
  if (const wc_status status = check_device(device); status != WC_OK) return status;
  return kCudaBackend.read_to_host(device, host, pointer, bytes, stream);
}

wc_status wc_host_alloc_pinned(void **pointer, size_t bytes) {
  if (pointer == nullptr || bytes == 0) return WC_ERR_INVALID_ARGUMENT;
  *pointer = nullptr;
  if (kCudaBackend.device_count() == 0) return WC_ERR_NO_DEVICE;
  return kCudaBackend.alloc_pinned(pointer, bytes);
}

wc_status wc_read_files_to_device(const wc_file_range *ranges, size_t count) {
  if (count != 0 && ranges == nullptr) return WC_ERR_INVALID_ARGUMENT;
  const std::span<const wc_file_range> listed(ranges, count);
  constexpr uint64_t kLimit = uint64_t{1} << 63;  // file offsets are signed
  for (const wc_file_range &range : listed) {
    if (range.fd < 0 || range.offset >= kLimit || range.len > kLimit - range.offset) return WC_ERR_INVALID_ARGUMENT;
    if (range.len != 0 && range.device_memory == nullptr) return WC_ERR_INVALID_ARGUMENT;
  }
  if (kCudaBackend.device_count() == 0) return WC_ERR_NO_DEVICE;
  std::vector<warpcrypt::engine::DeviceRange> checked;
  checked.reserve(count);
  for (const wc_file_range &range : listed) {
    if (range.len == 0) continue;
    // Both ends on one device: a length past the memory's end is refused
    // where it leaves device memory (within it, CUDA keeps no bounds).
    auto *memory = static_cast<uint8_t *>(range.device_memory);
    const auto *last = reinterpret_cast<const void *>(reinterpret_cast<uintptr_t>(memory) + (range.len - 1));
    int device = -1, last_device = -1;
    if (kCudaBackend.pointer_device(memory, &device) != WC_OK ||
        kCudaBackend.pointer_device(last, &last_device) != WC_OK || last_device != device) {
      return WC_ERR_INVALID_ARGUMENT;
    }
    checked.push_back({range.fd, range.offset, range.len, memory, device});
  }
  return warpcrypt::engine::read_to_devices(checked, warpcrypt::engine::cuda_transfer_backend());
}

void wc_host_free_pinned(void *pointer) {
  // The caller's bytes, however many it wrote: all of them are wiped.
  if (pointer != nullptr) kCudaBackend.free_pinned(pointer, SIZE_MAX);
}

}  // extern "C"
