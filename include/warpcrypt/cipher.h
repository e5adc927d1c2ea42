/* warpcrypt: the plain ciphers: registry, options and backends, one-shot calls, streaming contexts and random-access decryption. */
#ifndef WARPCRYPT_CIPHER_H
#define WARPCRYPT_CIPHER_H

#include "warpcrypt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Cipher registry                                                          */
/* ------------------------------------------------------------------------ */

/* An entry of the static cipher table; never freed. */
typedef struct wc_cipher wc_cipher;

/*
 * Looks a cipher up by its `openssl enc` name, case-insensitively:
 * aes-{128,192,256}-{ecb,cbc,cfb,cfb8,ofb,ctr}, chacha20, salsa20 (32-byte
 * key) and salsa20-128 (16-byte key). OpenSSL's aliases aes128, aes192 and
 * aes256 (CBC) are accepted. Returns NULL when there is no such cipher.
 */
WC_API const wc_cipher *wc_cipher_by_name(const char *name);
/* Iterates the table: index 0 .. wc_cipher_count() - 1. */
WC_API size_t wc_cipher_count(void);
WC_API const wc_cipher *wc_cipher_at(size_t index);

WC_API const char *wc_cipher_name(const wc_cipher *cipher);
WC_API size_t wc_cipher_key_len(const wc_cipher *cipher);
/* 0 for ECB, which takes no IV. */
WC_API size_t wc_cipher_iv_len(const wc_cipher *cipher);
/* 16 for ECB and CBC, 1 for the stream-like modes and stream ciphers. */
WC_API size_t wc_cipher_block_len(const wc_cipher *cipher);
/* Nonzero when the cipher pads with PKCS#7: ECB and CBC as named. Padding
 * is part of the output's layout, so it belongs to the cipher, not to the
 * tuning options: */
WC_API int wc_cipher_is_padded(const wc_cipher *cipher);
/* The same cipher without padding (`openssl enc -nopad`), whose input must be
 * whole blocks; for a mode that never pads, the cipher itself. NULL for NULL. */
WC_API const wc_cipher *wc_cipher_unpadded(const wc_cipher *cipher);
/* Nonzero where wc_decrypt_range works: every mode but OFB. */
WC_API int wc_cipher_has_random_access(const wc_cipher *cipher);

/* ------------------------------------------------------------------------ */
/* Options and backends                                                     */
/* ------------------------------------------------------------------------ */

typedef WC_ENUM(wc_direction) { WC_DECRYPT = 0, WC_ENCRYPT = 1 } wc_direction;

typedef WC_ENUM(wc_backend) {
  WC_BACKEND_AUTO = 0, /* the GPU where it is faster (see wc_auto_gpu_min_bytes), else the CPU */
  WC_BACKEND_CPU = 1,  /* OpenSSL and libsodium on a thread pool */
  /* CUDA; an error, never a silent fallback, without a device. For
   * benchmarks and cross-checks only, the environment variable
   * WARPCRYPT_GPU_KERNELS=reference swaps in the one-thread-per-block
   * reference kernels (the bottom rung of the optimisation ladder), as
   * OPENSSL_ia32cap steers OpenSSL's code paths: not part of the API. */
  WC_BACKEND_GPU = 2,
  /* The streaming engine's CPU threads and GPU streams take chunks from one
   * queue: the CPU threads start at once, and the GPU streams join once the
   * work left outlasts their device's start, then stay only if the job runs
   * faster with them (a trial whose verdict the process keeps for the next
   * job of the same cipher, direction and kind of memory). A context's calls
   * count as one job: once they have run longer than the start, the GPU
   * streams start, and calls too short for a trial are tried whole. A
   * device list is checked, and a device that fails is an error, as for
   * WC_BACKEND_GPU. A descriptor or file job on a machine whose CUDA
   * driver loads counts the devices beside its first work, since starting
   * the driver can take longer than the job: where it finds none, the job
   * fails with WC_ERR_NO_DEVICE and its output file is not kept, but a pipe
   * or device it writes to may already have received output. The
   * environment variable WARPCRYPT_HYBRID_GPU=always has the GPU streams
   * take part in every job from its start. Modes the GPU cannot run use the
   * CPU alone. */
  WC_BACKEND_HYBRID = 3
} wc_backend;

/* "auto", "cpu", "gpu", "hybrid"; "unknown" for any other value. */
WC_API const char *wc_backend_name(wc_backend backend);
/* Iterates the backends in the enum's order: index 0 .. wc_backend_count() - 1.
 * WC_BACKEND_AUTO, the default, for an index past the end. */
WC_API size_t wc_backend_count(void);
WC_API wc_backend wc_backend_at(size_t index);

/* The automatic policy sends a call on page-locked host memory (from
 * cudaMallocHost or cudaHostRegister) to the GPU when it holds at least this
 * many bytes: below it, the copies over PCIe cost more than the GPU saves
 * against every CPU core. SIZE_MAX where the CPU wins at every size
 * measured, or the GPU cannot run the mode. Pageable memory stays on the
 * CPU, where all cores beat copying through staging buffers. The values are
 * the break-even points the benchmark sweep measured (docs/lab-notes/performance-history.md). */
WC_API size_t wc_auto_gpu_min_bytes(const wc_cipher *cipher, wc_direction direction);

/* How work runs, never what the output looks like: that follows from the
 * cipher, its key and IV alone (padding included: wc_cipher_unpadded). */
typedef struct wc_options {
  wc_backend backend;
  /* CPU worker threads for the parallel modes; 0 means wc_default_threads(). */
  unsigned threads;

  /* The streaming engine, which moves host memory and files through the GPU
   * (backends gpu, hybrid and auto). Zero values take the defaults. */
  /* Bytes per chunk handed to one CPU thread or GPU stream; 0 takes
   * WC_DEFAULT_CPU_CHUNK_BYTES for CPU threads alone, WC_DEFAULT_CHUNK_BYTES
   * where GPU streams take part. */
  size_t chunk_bytes;
  /* CUDA streams per device, each with its own pinned and device buffers. */
  unsigned streams;
  /* The devices to use, by CUDA ordinal; NULL means every device. A device
   * may be listed more than once: each entry gets its own streams. */
  const int *devices;
  size_t device_count;
} wc_options;

/* The defaults of wc_options: chosen from the chunk-size and stream-count
 * sweep on the H100 machine (docs/lab-notes/performance-history.md). A CPU thread's chunk is
 * smaller: it stays in the core's cache from the read to the write. */
#define WC_DEFAULT_CHUNK_BYTES ((size_t)8 << 20)
#define WC_DEFAULT_CPU_CHUNK_BYTES ((size_t)1 << 20)
#define WC_DEFAULT_STREAMS 4

/* Fills `options` with the defaults: auto backend, all cores, every
 * device. Every call taking options also accepts NULL for the
 * defaults. */
WC_API void wc_options_init(wc_options *options);

/* What threads = 0 stands for: the CPUs this process may run on (its
 * affinity mask, as taskset and cpusets set it), capped by its cgroup's CPU
 * quota rounded up (cgroup v2 cpu.max, v1 cpu.cfs_quota_us over
 * cpu.cfs_period_us); at least 1. Read once per process. */
WC_API unsigned wc_default_threads(void);

/* ------------------------------------------------------------------------ */
/* One-shot encryption and decryption                                       */
/* ------------------------------------------------------------------------ */

/* The bytes wc_encrypt writes for `in_len` input bytes: for a padded cipher,
 * in_len rounded up to the next whole block (a full extra block when in_len
 * is already whole), else in_len. Decryption never writes more than its
 * input. */
WC_API size_t wc_encrypt_bound(const wc_cipher *cipher, size_t in_len);

WC_API wc_status wc_encrypt(const wc_options *options, const wc_cipher *cipher,
                            uint8_t *out, size_t out_cap, size_t *out_len,
                            const uint8_t *key, size_t key_len,
                            const uint8_t *iv, size_t iv_len,
                            const uint8_t *in, size_t in_len);

WC_API wc_status wc_decrypt(const wc_options *options, const wc_cipher *cipher,
                            uint8_t *out, size_t out_cap, size_t *out_len,
                            const uint8_t *key, size_t key_len,
                            const uint8_t *iv, size_t iv_len,
                            const uint8_t *in, size_t in_len);

/* ------------------------------------------------------------------------ */
/* Streaming contexts                                                       */
/* ------------------------------------------------------------------------ */

typedef struct wc_ctx wc_ctx;

WC_API wc_status wc_ctx_new(wc_ctx **ctx, const wc_options *options,
                            const wc_cipher *cipher, wc_direction direction,
                            const uint8_t *key, size_t key_len,
                            const uint8_t *iv, size_t iv_len);

/*
 * Processes `in_len` bytes. Output may lag input by up to one block: ECB, CBC
 * and CFB128 decryption release whole blocks only, and padded decryption holds
 * the last block back until wc_ctx_final. `out_cap` must be at least
 * wc_ctx_update_bound(ctx, in_len). After an error the context is dead: every
 * later call returns WC_ERR_CONTEXT_STATE.
 */
WC_API wc_status wc_ctx_update(wc_ctx *ctx, uint8_t *out, size_t out_cap,
                               size_t *out_len, const uint8_t *in, size_t in_len);

/* Flushes held bytes and padding: at most one block (WC_MAX_BLOCK_LEN). */
WC_API wc_status wc_ctx_final(wc_ctx *ctx, uint8_t *out, size_t out_cap,
                              size_t *out_len);

WC_API size_t wc_ctx_update_bound(const wc_ctx *ctx, size_t in_len);

/* The backend that runs this context's work. */
WC_API wc_backend wc_ctx_backend(const wc_ctx *ctx);

/* Wipes the key schedule and frees; NULL is a no-op. */
WC_API void wc_ctx_free(wc_ctx *ctx);

/* ------------------------------------------------------------------------ */
/* Random-access decryption                                                 */
/* ------------------------------------------------------------------------ */

/*
 * Plaintext bytes [offset, offset + length) of a ciphertext of
 * `ciphertext_len` bytes need only the ciphertext window
 * [*window_offset, *window_offset + *window_len): the blocks that hold the
 * range, the block before it in CBC and CFB (their chaining value), and, for
 * padded ECB and CBC ranges that reach the last block, the rest of the
 * ciphertext so the padding can be checked. The range is clipped to the
 * ciphertext; offset past the end yields an empty window.
 */
WC_API wc_status wc_range_window(const wc_cipher *cipher, uint64_t *window_offset, uint64_t *window_len,
                                 uint64_t ciphertext_len, uint64_t offset, uint64_t length);

/*
 * Decrypts plaintext bytes [offset, offset + length) from `window`, which
 * holds exactly the ciphertext bytes wc_range_window named. Writes
 * *out_len <= length bytes: fewer where the range runs past the plaintext's
 * end (after padding is removed). Equals the same slice of a full decryption.
 */
WC_API wc_status wc_decrypt_range(const wc_options *options, const wc_cipher *cipher,
                                  uint8_t *out, size_t out_cap, size_t *out_len,
                                  const uint8_t *key, size_t key_len,
                                  const uint8_t *iv, size_t iv_len,
                                  const uint8_t *window, size_t window_len,
                                  uint64_t ciphertext_len, uint64_t offset,
                                  uint64_t length);

#ifdef __cplusplus
}
#endif

#endif /* WARPCRYPT_CIPHER_H */
