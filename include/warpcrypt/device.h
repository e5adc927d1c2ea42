/* warpcrypt: CUDA devices, and every call on device memory. */
#ifndef WARPCRYPT_DEVICE_H
#define WARPCRYPT_DEVICE_H

#include "warpcrypt/aead.h"
#include "warpcrypt/cipher.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* CUDA devices                                                             */
/* ------------------------------------------------------------------------ */

typedef struct wc_device_info {
  char name[256];
  int compute_major;
  int compute_minor;
  int multiprocessors;
  uint64_t global_memory_bytes;
  char pci_bus_id[32];
} wc_device_info;

/*
 * Device-pointer calls. `in` and `out` are device (or managed) memory; `out`
 * may equal `in` (in place) and neither needs any alignment. The work is
 * queued on `stream` and the call returns at once: the *_async calls never
 * synchronise, so the caller must keep the buffers alive until the stream
 * reaches this point. Key and IV are copied at call time. Without a CUDA
 * device they return WC_ERR_NO_DEVICE. They take no wc_options: device
 * memory is worked where it lives, whatever device the calling thread has
 * current (and it stays current): on the device of `stream`, or, for a
 * default stream (NULL, cudaStreamLegacy, cudaStreamPerThread), on the
 * device whose memory holds the buffers, on that device's default stream.
 * Managed and page-locked host memory suit any device. Device memory of
 * another device than the stream's, or input and output on two devices, is
 * WC_ERR_INVALID_ARGUMENT: a kernel would reach it only through peer access,
 * which the library does not switch on.
 *
 * Modes: ECB (both directions, whole blocks, no padding), CTR, Salsa20 and
 * ChaCha20 (both directions), CBC and CFB128 decryption. `stream_offset` is
 * the stream byte of in[0]: any value for CTR, Salsa20 and ChaCha20; for the
 * block modes a multiple of 16, and CBC/CFB take the ciphertext block before
 * in[0] as their `iv`, which is how a chained stream resumes mid-way. CBC and
 * CFB encryption are sequential: batch them with wc_batch_encrypt_device_async.
 */
struct CUstream_st; /* cudaStream_t without the CUDA headers */
typedef struct CUstream_st *wc_cuda_stream;

WC_API wc_status wc_encrypt_device_async(const wc_cipher *cipher,
                                         uint8_t *out, const uint8_t *in, size_t len,
                                         const uint8_t *key, size_t key_len,
                                         const uint8_t *iv, size_t iv_len,
                                         uint64_t stream_offset, wc_cuda_stream stream);
WC_API wc_status wc_decrypt_device_async(const wc_cipher *cipher,
                                         uint8_t *out, const uint8_t *in, size_t len,
                                         const uint8_t *key, size_t key_len,
                                         const uint8_t *iv, size_t iv_len,
                                         uint64_t stream_offset, wc_cuda_stream stream);

/* One message of a batch: its bytes in the batch's input and output buffers. */
typedef struct wc_batch_message {
  uint64_t in_offset;
  uint64_t in_len;
  uint64_t out_offset; /* room for wc_encrypt_bound(cipher, in_len) bytes */
} wc_batch_message;

/*
 * Encrypts `count` independent messages with aes-*-cbc (PKCS#7, or none
 * for its wc_cipher_unpadded twin) or aes-*-cfb, one GPU thread per message, each with
 * its own IV (`ivs`: 16 bytes per message). `messages` and `ivs` are host
 * memory, copied before the call returns; `in` and `out` are device memory.
 * Asynchronous on `stream`, except that copying the descriptors waits for
 * the stream's earlier work.
 */
WC_API wc_status wc_batch_encrypt_device_async(const wc_cipher *cipher, uint8_t *out, const uint8_t *in,
                                               const wc_batch_message *messages, size_t count,
                                               const uint8_t *key, size_t key_len,
                                               const uint8_t *ivs, wc_cuda_stream stream);

/* Number of usable CUDA devices: 0, not an error, when the library was built
 * without CUDA or no driver or device is present. */
WC_API wc_status wc_device_count(int *count);
WC_API wc_status wc_device_info_get(wc_device_info *info, int device);
/* Nonzero when this build contains the CUDA backend. */
WC_API int wc_built_with_cuda(void);
/* The CUDA runtime this build runs on and the CUDA version the installed
 * driver supports, each as 1000 * major + 10 * minor (12040 for 12.4); the
 * driver's is 0 where there is no driver. A build without CUDA answers
 * WC_ERR_NO_DEVICE with both 0. */
WC_API wc_status wc_cuda_versions(int *runtime, int *driver);

/*
 * Device-pointer AEAD: `in`, `out` (out may equal in; any alignment) and
 * the tag are device memory (or managed or page-locked host memory); key,
 * nonce and AAD are host memory, used before the call returns (the AAD is
 * hashed on the CPU, and a GCM key's constants are derived there, some
 * 50 us per call). The work is queued on `stream` and the call does not
 * wait for it, except that a batch's descriptors, uploaded from pageable
 * memory, wait for the stream's earlier work. Without a CUDA device:
 * WC_ERR_NO_DEVICE.
 *
 * Opening writes 1 (authentic) or 0 to verified[i] (device-accessible
 * memory) when the stream reaches that point; a message that fails has its
 * whole output zeroed by then. Messages of up to 16 KiB are checked before
 * any plaintext is written, and one that fails receives zeros only; a
 * longer message's plaintext is written before its tag is known, so
 * nothing may read `out` before the stream has passed the call.
 * Buffers that overlap are refused as by the batch calls, verified
 * included. The work runs where the messages live, as for the calls above;
 * every message of a batch lives on the device of the first message's
 * buffers.
 */
WC_API wc_status wc_aead_seal_device_async(const wc_aead *aead,
                                           uint8_t *out, uint8_t *tag, size_t tag_len,
                                           const uint8_t *key, size_t key_len,
                                           const uint8_t *nonce, size_t nonce_len,
                                           const uint8_t *aad, size_t aad_len,
                                           const uint8_t *in, size_t len, wc_cuda_stream stream);
WC_API wc_status wc_aead_open_device_async(const wc_aead *aead,
                                           uint8_t *out, int32_t *verified,
                                           const uint8_t *key, size_t key_len,
                                           const uint8_t *nonce, size_t nonce_len,
                                           const uint8_t *aad, size_t aad_len,
                                           const uint8_t *in, size_t len,
                                           const uint8_t *tag, size_t tag_len,
                                           wc_cuda_stream stream);
/* Batches of device-memory messages, all in one kernel launch. */
WC_API wc_status wc_aead_seal_batch_device_async(const wc_aead *aead,
                                                 const wc_aead_message *messages, size_t count,
                                                 size_t tag_len, const uint8_t *key, size_t key_len,
                                                 wc_cuda_stream stream);
WC_API wc_status wc_aead_open_batch_device_async(const wc_aead *aead,
                                                 int32_t *verified,
                                                 const wc_aead_message *messages, size_t count,
                                                 size_t tag_len, const uint8_t *key, size_t key_len,
                                                 wc_cuda_stream stream);

/* A wc_aead_key's messages in device memory, as the calls above take them
 * (see wc_aead_key_new). */
WC_API wc_status wc_aead_key_seal_device_async(const wc_aead_key *key,
                                               const wc_aead_message *messages, size_t count,
                                               size_t tag_len, wc_cuda_stream stream);
WC_API wc_status wc_aead_key_open_device_async(const wc_aead_key *key, int32_t *verified,
                                               const wc_aead_message *messages, size_t count,
                                               size_t tag_len, wc_cuda_stream stream);

/*
 * A batch of equal-length messages at fixed strides in device memory, their
 * nonces and tags included: the packet and tensor-shard workload with no
 * work per message on the host (the message-list calls above prepare each
 * message there, some 0.3 us apiece). Message i reads `len` bytes at
 * in + i * stride and writes them at out + i * stride (out == in works in
 * place); its 12-byte nonce is at nonces + i * nonce_stride and its tag at
 * tags + i * tag_stride. There is no associated data: use the message-list
 * calls for that. A count of 0 does nothing.
 */
typedef struct wc_aead_strided {
  uint8_t *out;
  const uint8_t *in;
  size_t len;
  size_t stride;
  const uint8_t *nonces;
  size_t nonce_stride;
  uint8_t *tags;
  size_t tag_stride;
  size_t count;
} wc_aead_strided;

/*
 * A wc_aead_key's strided batch, queued on `stream` as the calls above are
 * (opening writes verified[i], and zeroes a failed message's output). The
 * overlap rule of the batch calls holds: no output, tag being sealed or
 * verdict may share a byte with anything else of the call, except a message
 * worked in place. Buffers at the same stride are checked exactly, so
 * records of nonce, message and tag side by side are fine; buffers at
 * different strides must not share any address range at all.
 * WC_ERR_INVALID_ARGUMENT for a missing pointer, a stride shorter than what
 * it steps over (with more than one message), a batch past the end of the
 * address space, more than 2^31 - 1 messages, or an overlap; WC_ERR_RANGE for
 * messages longer than the AEAD allows.
 */
WC_API wc_status wc_aead_key_seal_strided_device_async(const wc_aead_key *key, const wc_aead_strided *batch,
                                                       size_t tag_len, wc_cuda_stream stream);
WC_API wc_status wc_aead_key_open_strided_device_async(const wc_aead_key *key, int32_t *verified,
                                                       const wc_aead_strided *batch, size_t tag_len,
                                                       wc_cuda_stream stream);

/*
 * Device memory and stream order, for a caller that links no CUDA runtime
 * of its own (the Python package uses these): it can find which device
 * holds an array, order its work after a framework's stream, and keep the
 * verdicts of an open in device memory it reads back.
 *
 * `device` is where each call runs, made current for the call and the
 * caller's own put back after; a default `stream` (NULL, cudaStreamLegacy,
 * cudaStreamPerThread) is that device's, and a stream of another device is
 * WC_ERR_INVALID_ARGUMENT. A `device` of -1 names the device of the call's
 * stream, or for a default stream the calling thread's current device. A device this machine lacks, and every call in a
 * build without CUDA, is WC_ERR_NO_DEVICE. A CUDA failure is WC_ERR_DEVICE.
 *
 * wc_device_of: the device that holds device or managed memory at
 * `pointer`; WC_ERR_INVALID_ARGUMENT for host memory, page-locked included,
 * and for an address CUDA does not know.
 * wc_cuda_stream_wait: work queued on `consumer` from now on waits, on the
 * device, for the work queued on `producer` so far; the host does not wait.
 * wc_device_alloc_async, wc_device_free_async: the stream-ordered
 * allocator (cudaMallocAsync); no other stream waits for the memory.
 * Freeing NULL does nothing. WC_ERR_OUT_OF_MEMORY where the device has
 * none to give.
 * wc_device_clear_async: queues zeros over `bytes` bytes at `pointer`.
 * wc_device_read: copies `bytes` bytes of device memory to host memory once
 * `stream` has passed its earlier work, and waits for the copy.
 * wc_host_alloc_pinned, wc_host_free_pinned: page-locked host memory
 * (cudaMallocHost), which every device reaches at full speed with no
 * staging copy, and which the auto backend sends to a GPU from the sizes
 * where that was measured faster. Freeing NULL does nothing.
 */
WC_API wc_status wc_device_of(const void *pointer, int *device);
WC_API wc_status wc_cuda_stream_wait(int device, wc_cuda_stream consumer, wc_cuda_stream producer);
WC_API wc_status wc_device_alloc_async(int device, void **pointer, size_t bytes, wc_cuda_stream stream);
WC_API wc_status wc_device_free_async(int device, void *pointer, wc_cuda_stream stream);
WC_API wc_status wc_device_clear_async(int device, void *pointer, size_t bytes, wc_cuda_stream stream);
WC_API wc_status wc_device_read(int device, void *host, const void *pointer, size_t bytes, wc_cuda_stream stream);
WC_API wc_status wc_host_alloc_pinned(void **pointer, size_t bytes);
WC_API void wc_host_free_pinned(void *pointer);

/*
 * Files read straight into device memory, as warpcrypt.safetensors loads
 * tensors to a GPU: each range's `len` bytes from `offset` of the open file
 * `fd` go to the device memory at `device_memory`, on whichever device
 * holds it. Reader threads, a share for each device the ranges reach, read
 * slots of a few MiB into page-locked memory and each queues its slot's
 * copy, so that a read overlaps the copy before it; the slots in flight
 * stay in the CPU's last-level cache, where the copy engines read them.
 * The memory must be ready: no stream's queued work is waited for (a
 * framework's allocator queues none).
 *
 * Returns once every byte is in device memory, or with the first failure:
 * WC_ERR_IO where a read fails, WC_ERR_FORMAT where a file ends before a
 * range does, WC_ERR_INVALID_ARGUMENT for a NULL list with a count, a
 * negative fd, a range past 2^63, or a range whose first or last byte is
 * not device memory of one device (CUDA keeps no bounds of an allocation
 * to check the rest against), WC_ERR_NO_DEVICE without a device,
 * WC_ERR_DEVICE where a copy fails. On a failure the device memory holds
 * some of the bytes.
 */
typedef struct wc_file_range {
  int fd;
  uint64_t offset;
  uint64_t len;
  void *device_memory;
} wc_file_range;

WC_API wc_status wc_read_files_to_device(const wc_file_range *ranges, size_t count);

#ifdef __cplusplus
}
#endif

#endif /* WARPCRYPT_DEVICE_H */
