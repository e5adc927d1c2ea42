// How everything above the backends reaches them: one table of functions per
// backend, declared here and defined by the backend itself (backends/cpu/,
// backends/cuda/; a build without CUDA links backends/cuda/absent_table.cpp,
// whose entries answer WC_ERR_NO_DEVICE). Core, the engine, the formats and
// the API call through these tables and include no backend header, so the
// dependencies point one way: every layer down to core, every backend up to
// core only. The host primitives (random bytes, the KDFs, HMAC, X25519,
// Ed25519) are no compute backend's: they are core/host_crypto.h's provider.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/aead_backend.h"
#include "core/cipher_backend.h"
#include "core/transfer_buffers.h"

namespace warpcrypt {

struct CpuBackend {
  // A cipher bound to a key: random access for the parallel modes, otherwise
  // sequential. Each call runs on the calling thread: the engine's lanes
  // spread the work over threads.
  wc_status (*make_cipher)(BackendCipher *out, const wc_cipher &cipher, wc_direction direction,
                           const KeyMaterial &key);
  // One engine lane on a CPU thread, with a staging buffer of `capacity`.
  std::unique_ptr<Lane> (*make_lane)(const wc_cipher &cipher, wc_direction direction, const KeyMaterial &key,
                                     size_t capacity);
  // An AEAD bound to a key (nullptr if OpenSSL lacks it); batches spread over
  // `threads` threads (0: every core).
  std::unique_ptr<AeadCipher> (*make_aead)(const wc_aead &aead, std::span<const uint8_t> key, unsigned threads);
  // One AEAD message piece by piece (nullptr if OpenSSL refuses it).
  std::unique_ptr<AeadStream> (*make_aead_stream)(const wc_aead &aead, wc_direction direction,
                                                  std::span<const uint8_t> key, std::span<const uint8_t> nonce);
  // The OpenSSL the backend runs on, as OpenSSL_version names it.
  const char *(*openssl_version)();
};

struct CudaBackend {
  // False in a build without CUDA, whose table answers WC_ERR_NO_DEVICE
  // (and zero devices) everywhere.
  bool compiled_in;
  // The number of usable devices (0 without a driver or GPU), counted once
  // per process: from the kernel driver's list of GPUs (microseconds) where
  // it must be CUDA's list, else by CUDA, which starts the driver (a fifth
  // of a second on a GPU machine); and the properties of one, given a valid
  // ordinal.
  int (*device_count)();
  // Whether device_count answers without starting the driver: from the
  // driver's list, or, where that list cannot answer, at once where no
  // driver's library loads (finding that out loads libcuda, a millisecond
  // or two).
  bool (*device_count_is_quick)();
  wc_status (*device_info)(wc_device_info *info, int device);
  // The runtime's and the driver's CUDA versions (wc_cuda_versions).
  wc_status (*versions)(int *runtime, int *driver);
  // A plain cipher keyed on `device`, for GPU lanes; WC_ERR_NO_DEVICE
  // without a usable device, WC_ERR_INVALID_ARGUMENT for an ordinal out of
  // range and WC_ERR_BACKEND_UNAVAILABLE for a mode the GPU does not run.
  wc_status (*make_device_cipher)(std::unique_ptr<DeviceCipher> *out, int device, const wc_cipher &cipher,
                                  wc_direction direction, const KeyMaterial &key);
  // Whether this process has started `device` (a valid ordinal) for lanes
  // already: its context and tables are up, so more lanes cost only their
  // buffers, which are pooled.
  bool (*device_started)(int device);
  // Whether host memory is page-locked (copies to and from it run at full
  // PCIe speed); false without CUDA.
  bool (*page_locked)(const void *host);
  // An AEAD for host memory, run on `devices` (valid ordinals; empty: the
  // caller's current device at each call), and for device memory, worked
  // where it lives (AeadCipher::queue_device); WC_ERR_NO_DEVICE without a
  // device.
  wc_status (*make_aead)(std::unique_ptr<AeadCipher> *out, const wc_aead &aead, std::span<const uint8_t> key,
                         std::span<const int> devices);
  // A stream on `device` with a device buffer of `device_bytes` (none for
  // 0) and a page-locked window of `window_bytes`
  // (core/transfer_buffers.h), from the device's pools; WC_ERR_NO_DEVICE
  // without the device.
  wc_status (*lease_transfer)(std::unique_ptr<TransferBuffers> *out, int device, size_t device_bytes,
                              size_t window_bytes);
  // Work on device memory, queued on the caller's stream once the api layer
  // has checked every argument: a plain cipher at a stream offset
  // (WC_ERR_BACKEND_UNAVAILABLE for modes the GPU does not run), and a
  // CBC/CFB encryption batch.
  wc_status (*transform_device_async)(const wc_cipher &cipher, wc_direction direction, const KeyMaterial &key,
                                      uint64_t stream_offset, const uint8_t *in, uint8_t *out, size_t len,
                                      wc_cuda_stream stream);
  wc_status (*batch_encrypt_device_async)(const wc_cipher &cipher, std::span<const uint8_t> key, bool padding,
                                          const uint8_t *in, uint8_t *out,
                                          std::span<const wc_batch_message> messages, const uint8_t *ivs,
                                          wc_cuda_stream stream);
  // Device memory and stream order for callers with no CUDA runtime of
  // their own (warpcrypt/device.h, wc_device_of on), arguments checked by
  // the api layer. Each but pointer_device runs with `device` current, and
  // refuses a stream of another device (WC_ERR_INVALID_ARGUMENT).
  //  - pointer_device: the device that holds device or managed memory;
  //    WC_ERR_INVALID_ARGUMENT for any other memory.
  //  - stream_wait: `consumer`'s later work waits for what `producer` has
  //    queued so far, on the device, the host never waiting.
  //  - alloc_async and free_async: the stream-ordered allocator.
  //  - clear_async: zeros, queued.
  //  - read_to_host: a copy to host memory, once the stream has passed its
  //    earlier work; waits for it.
  //  - alloc_pinned and free_pinned: page-locked host memory, on no device
  //    in particular, from the process's one pool (backends/cuda/pinned_pool.h);
  //    free_pinned wipes the first `held` bytes before the block is reused.
  wc_status (*pointer_device)(const void *pointer, int *device);
  wc_status (*stream_wait)(int device, wc_cuda_stream consumer, wc_cuda_stream producer);
  wc_status (*alloc_async)(int device, void **pointer, size_t bytes, wc_cuda_stream stream);
  wc_status (*free_async)(int device, void *pointer, wc_cuda_stream stream);
  wc_status (*clear_async)(int device, void *pointer, size_t bytes, wc_cuda_stream stream);
  wc_status (*read_to_host)(int device, void *host, const void *pointer, size_t bytes, wc_cuda_stream stream);
  wc_status (*alloc_pinned)(void **pointer, size_t bytes);
  void (*free_pinned)(void *pointer, size_t held);
};

extern const CpuBackend kCpuBackend;
extern const CudaBackend kCudaBackend;

}  // namespace warpcrypt
