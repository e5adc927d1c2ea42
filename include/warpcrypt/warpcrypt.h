/*
 * warpcrypt: bulk symmetric encryption on NVIDIA GPUs and on the CPU.
 *
 * This is the only public header. Conventions, after BoringSSL and libsodium:
 *  - every call that can fail returns a wc_status; wc_status_string() names it;
 *  - arguments go context, outputs, inputs; a length follows its pointer with
 *    a _len suffix, and an output buffer's capacity is its _cap;
 *  - on any failure the bytes an output buffer would have received are zeroed,
 *    so a caller that ignores the status never sees half-decrypted data;
 *  - a NULL cipher (a failed wc_cipher_by_name) gives WC_ERR_UNKNOWN_CIPHER,
 *    any other NULL pointer with a nonzero length WC_ERR_INVALID_ARGUMENT;
 *  - sizes are published as constants and getters, so bindings never hard-code
 *    them;
 *  - output is byte-identical to OpenSSL (`openssl enc`) for every cipher the
 *    two share, and to djb's specification for Salsa20.
 *
 * Unless a comment says otherwise, a call is synchronous and thread-safe on
 * distinct contexts; `out` may equal `in` exactly (in place), but the two may
 * not otherwise overlap.
 */
#ifndef WARPCRYPT_WARPCRYPT_H
#define WARPCRYPT_WARPCRYPT_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define WC_API __declspec(dllexport)
#else
#define WC_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define WARPCRYPT_VERSION_MAJOR 0
#define WARPCRYPT_VERSION_MINOR 1
#define WARPCRYPT_VERSION_PATCH 0

/* Upper bounds over every cipher, for stack buffers. */
#define WC_MAX_KEY_LEN 32
#define WC_MAX_IV_LEN 16
#define WC_MAX_BLOCK_LEN 16
/* Length of the salt in the `Salted__` header of `openssl enc`. */
#define WC_SALT_LEN 8

typedef enum wc_status {
  WC_OK = 0,
  WC_ERR_INVALID_ARGUMENT,   /* NULL pointer, overlapping buffers, bad option */
  WC_ERR_UNKNOWN_CIPHER,     /* no cipher by that name */
  WC_ERR_KEY_LEN,            /* key length differs from the cipher's */
  WC_ERR_IV_LEN,             /* IV length differs from the cipher's */
  WC_ERR_NOT_BLOCK_ALIGNED,  /* length is not a whole number of blocks and padding is off */
  WC_ERR_BAD_DECRYPT,        /* padding check failed: wrong key or corrupt ciphertext */
  WC_ERR_OUTPUT_TOO_SMALL,   /* out_cap is below what the call may write */
  WC_ERR_RANGE,              /* byte range or window outside the ciphertext */
  WC_ERR_UNSUPPORTED,        /* the cipher cannot do this (e.g. random access in OFB) */
  WC_ERR_NO_DEVICE,          /* the GPU backend was requested but no CUDA device is usable */
  WC_ERR_BACKEND_UNAVAILABLE,/* the requested backend cannot run this cipher and direction */
  WC_ERR_CONTEXT_STATE,      /* update after final, or a context reused after an error */
  WC_ERR_OUT_OF_MEMORY,
  WC_ERR_CRYPTO_LIBRARY,     /* OpenSSL or libsodium reported a failure */
  WC_ERR_DIGEST,             /* unknown message digest name for key derivation */
  WC_ERR_DEVICE,             /* a CUDA call failed (launch, copy, allocation on the device) */
  WC_ERR_IO,                 /* reading the input or writing the output failed (wc_job.os_error says why) */
  WC_ERR_CANCELLED,          /* the progress callback asked the job to stop */
  WC_ERR_AUTH,               /* AEAD open: the tag does not match; the output was zeroed */
  WC_ERR_FORMAT              /* not a sealed file, or a damaged or unknown header (wc_job.detail says which field) */
} wc_status;

/* A static English description of `status`; never NULL. */
WC_API const char *wc_status_string(wc_status status);
/* The status's identifier without its WC_ERR_ or WC_ prefix, in capitals:
 * "OK", "INVALID_ARGUMENT", ..., "FORMAT"; NULL for a value outside the
 * enum. For bindings that name the statuses as the header does. */
WC_API const char *wc_status_name(wc_status status);
/* The statuses are numbered from WC_OK without gaps: 0 .. wc_status_count() - 1. */
WC_API size_t wc_status_count(void);

/* Version string, "MAJOR.MINOR.PATCH". */
WC_API const char *wc_version(void);

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
/* Nonzero for ECB and CBC, which pad with PKCS#7 unless padding is off. */
WC_API int wc_cipher_is_padded(const wc_cipher *cipher);
/* Nonzero where wc_decrypt_range works: every mode but OFB. */
WC_API int wc_cipher_has_random_access(const wc_cipher *cipher);

/* ------------------------------------------------------------------------ */
/* Options and backends                                                     */
/* ------------------------------------------------------------------------ */

typedef enum wc_direction { WC_DECRYPT = 0, WC_ENCRYPT = 1 } wc_direction;

typedef enum wc_backend {
  WC_BACKEND_AUTO = 0, /* the GPU where it is faster (see wc_auto_gpu_min_bytes), else the CPU */
  WC_BACKEND_CPU = 1,  /* OpenSSL and libsodium on a thread pool */
  WC_BACKEND_GPU = 2,  /* CUDA; an error, never a silent fallback, without a device */
  /* The GPU's one-thread-per-block reference kernels: the bottom rung of the
   * optimisation ladder, for benchmarks and cross-checks, never for speed. */
  WC_BACKEND_GPU_REFERENCE = 3,
  /* The streaming engine's CPU threads and GPU streams take chunks from one
   * queue, so throughput approaches the sum of both. Modes the GPU cannot
   * run use the CPU alone. */
  WC_BACKEND_HYBRID = 4
} wc_backend;

/* "auto", "cpu", "gpu", "gpu-ref", "hybrid"; "unknown" for any other value. */
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
 * the break-even points the benchmark sweep measured (docs/performance.md). */
WC_API size_t wc_auto_gpu_min_bytes(const wc_cipher *cipher, wc_direction direction);

typedef struct wc_options {
  wc_backend backend;
  /* CPU worker threads for the parallel modes; 0 means every online core. */
  unsigned threads;
  /* ECB and CBC: nonzero pads with PKCS#7 (OpenSSL's default); 0 is -nopad. */
  int padding;

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
 * sweep on the H100 machine (docs/performance.md). A CPU thread's chunk is
 * smaller: it stays in the core's cache from the read to the write. */
#define WC_DEFAULT_CHUNK_BYTES ((size_t)8 << 20)
#define WC_DEFAULT_CPU_CHUNK_BYTES ((size_t)1 << 20)
#define WC_DEFAULT_STREAMS 4

/* Fills `options` with the defaults: auto backend, all cores, padding on,
 * every device. Every call taking options also accepts NULL for the
 * defaults. */
WC_API void wc_options_init(wc_options *options);

/* ------------------------------------------------------------------------ */
/* One-shot encryption and decryption                                       */
/* ------------------------------------------------------------------------ */

/* The bytes wc_encrypt writes for `in_len` input bytes: for padded modes with
 * padding on, in_len rounded up to the next whole block (a full extra block
 * when in_len is already whole), else in_len. Decryption never writes more
 * than its input. */
WC_API size_t wc_encrypt_bound(const wc_options *options, const wc_cipher *cipher,
                               size_t in_len);

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
WC_API wc_status wc_range_window(const wc_options *options, const wc_cipher *cipher,
                                 uint64_t *window_offset, uint64_t *window_len,
                                 uint64_t ciphertext_len, uint64_t offset,
                                 uint64_t length);

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

/* ------------------------------------------------------------------------ */
/* Jobs: buffers, file descriptors and files through the streaming engine   */
/* ------------------------------------------------------------------------ */

/*
 * Called as a job advances, from the engine's threads but never from two at
 * once, about every 50 ms and once at the end. `total_bytes` is 0 where the
 * input's size is unknown (a pipe). Returning nonzero cancels the job: it
 * stops at the next chunk and returns WC_ERR_CANCELLED.
 */
typedef int (*wc_progress_fn)(void *user, uint64_t done_bytes, uint64_t total_bytes);

typedef struct wc_job {
  /* In: optional progress callback and its first argument. */
  wc_progress_fn progress;
  void *progress_user;
  /* Out, filled whether the job succeeds or fails. */
  uint64_t bytes_in;
  uint64_t bytes_out;
  double seconds;
  uint64_t cpu_bytes; /* bytes the CPU transformed (a padding block included) */
  uint64_t gpu_bytes; /* bytes the GPUs transformed */
  int os_error;       /* errno of a failed read or write (WC_ERR_IO), else 0 */
  /* A static, secret-free sentence on what failed where the status alone
   * does not say (WC_ERR_FORMAT: the header field; WC_ERR_AUTH: which
   * chunk), else NULL. Sealed-file calls fill it. */
  const char *detail;
  uint64_t failed_chunk; /* WC_ERR_AUTH in a sealed file: the first chunk that failed */
} wc_job;

WC_API void wc_job_init(wc_job *job);

/* wc_encrypt and wc_decrypt with progress, cancellation and statistics;
 * `job` may be NULL. */
WC_API wc_status wc_encrypt_buffer(const wc_options *options, const wc_cipher *cipher, wc_job *job,
                                   uint8_t *out, size_t out_cap, size_t *out_len,
                                   const uint8_t *key, size_t key_len,
                                   const uint8_t *iv, size_t iv_len,
                                   const uint8_t *in, size_t in_len);
WC_API wc_status wc_decrypt_buffer(const wc_options *options, const wc_cipher *cipher, wc_job *job,
                                   uint8_t *out, size_t out_cap, size_t *out_len,
                                   const uint8_t *key, size_t key_len,
                                   const uint8_t *iv, size_t iv_len,
                                   const uint8_t *in, size_t in_len);

/*
 * Transforms everything from `in_fd`'s current offset to its end and writes
 * the result at `out_fd`'s current offset, leaving both offsets past the
 * bytes read and written. Regular files are read and written at many offsets
 * at once; pipes, sockets and terminals in order. Neither descriptor is
 * closed. On failure the output may hold part of the result: the caller
 * owns that file (wc_encrypt_file removes it).
 */
WC_API wc_status wc_encrypt_fd(const wc_options *options, const wc_cipher *cipher, wc_job *job,
                               int out_fd, int in_fd, const uint8_t *key, size_t key_len,
                               const uint8_t *iv, size_t iv_len);
WC_API wc_status wc_decrypt_fd(const wc_options *options, const wc_cipher *cipher, wc_job *job,
                               int out_fd, int in_fd, const uint8_t *key, size_t key_len,
                               const uint8_t *iv, size_t iv_len);

/*
 * File to file. The output is written as wc_output_open describes: to a new
 * temporary file in the target's directory, renamed over `out_path` only on
 * success; on any failure, cancellation included, the temporary file is
 * removed and `out_path` is left as it was. An output naming the input is
 * refused (WC_ERR_INVALID_ARGUMENT). The temporary file is not removed if the
 * process dies by a signal: a program that needs that installs its own
 * handlers (wc_output_temp_path).
 */
WC_API wc_status wc_encrypt_file(const wc_options *options, const wc_cipher *cipher, wc_job *job,
                                 const char *out_path, const char *in_path,
                                 const uint8_t *key, size_t key_len,
                                 const uint8_t *iv, size_t iv_len);
WC_API wc_status wc_decrypt_file(const wc_options *options, const wc_cipher *cipher, wc_job *job,
                                 const char *out_path, const char *in_path,
                                 const uint8_t *key, size_t key_len,
                                 const uint8_t *iv, size_t iv_len);

/* ------------------------------------------------------------------------ */
/* Output files, written atomically                                         */
/* ------------------------------------------------------------------------ */

/*
 * How every call that takes an output path writes it, for programs that
 * stream into a named file themselves (the CLI does):
 * - The data goes to a temporary file beside the target, mode 0600 until
 *   wc_output_commit gives it the final mode (an existing target's, else
 *   0666 less the umask) and renames it over the target. wc_output_free
 *   before that removes it and leaves the target as it was.
 * - An existing target the caller may not write is refused (WC_ERR_IO,
 *   EACCES), as open(2) would refuse it. A replaced file keeps its mode; its
 *   owner becomes the caller unless the caller may give it back (root).
 *   Other hard links to it keep the old contents: the name gets a new file.
 * - Symbolic links are followed only where the kernel's protected_symlinks
 *   rule allows, whatever that setting is on this machine: a link in a
 *   sticky, world-writable directory (such as /tmp) that belongs to neither
 *   the caller nor the directory's owner is refused (EACCES). A dangling
 *   link is refused (ENOENT). Either way *detail says so.
 * - A device, FIFO or socket is written in place (no temporary file).
 * - A target that is the same file as `input_fd` (-1 for none) is refused
 *   (WC_ERR_INVALID_ARGUMENT): the rename would destroy the input.
 * Failures are WC_ERR_IO with *os_error (errno) and, where errno alone would
 * mislead, a static sentence in *detail; both may be NULL.
 */
typedef struct wc_output wc_output;

WC_API wc_status wc_output_open(wc_output **output, const char *path, int input_fd, int *os_error,
                                const char **detail);
/* The descriptor to write the data to. */
WC_API int wc_output_fd(const wc_output *output);
/* The temporary file's path, for a signal handler that must remove it;
 * NULL when the target is written in place. */
WC_API const char *wc_output_temp_path(const wc_output *output);
/* Final mode, a checked close (delayed write errors, such as a full disk on
 * NFS) and the rename. On failure the temporary file is removed. The output
 * must still be freed. */
WC_API wc_status wc_output_commit(wc_output *output, int *os_error);
/* Removes the temporary file unless committed, and frees. NULL is a no-op. */
WC_API void wc_output_free(wc_output *output);

/* ------------------------------------------------------------------------ */
/* Keys from passphrases, as `openssl enc` derives them                     */
/* ------------------------------------------------------------------------ */

typedef enum wc_kdf {
  WC_KDF_PBKDF2 = 0, /* `-pbkdf2`: PKCS5_PBKDF2_HMAC over key || IV */
  WC_KDF_LEGACY = 1  /* no `-pbkdf2`: EVP_BytesToKey, OpenSSL's deprecated default */
} wc_kdf;

/* `openssl enc -pbkdf2` without -iter uses this many iterations. */
#define WC_PBKDF2_DEFAULT_ITERATIONS 10000

/*
 * Derives the cipher's key and IV (iv may be NULL when iv_len is 0) from a
 * passphrase and an optional salt (NULL with salt_len 0 is -nosalt). `digest`
 * is an OpenSSL digest name such as "sha256" (the default of `openssl enc`).
 * The legacy KDF runs `iterations` rounds of EVP_BytesToKey.
 */
WC_API wc_status wc_derive_key_iv(const wc_cipher *cipher, uint8_t *key, size_t key_len,
                                  uint8_t *iv, size_t iv_len,
                                  wc_kdf kdf, const char *digest, uint32_t iterations,
                                  const uint8_t *passphrase, size_t passphrase_len,
                                  const uint8_t *salt, size_t salt_len);

/*
 * HKDF (RFC 5869): extract, then expand `secret` into out_len bytes (1 to
 * 255 digest lengths) under `salt` (may be empty: HashLen zero bytes) and
 * `info`. `digest` is an OpenSSL digest name such as "sha256".
 */
WC_API wc_status wc_hkdf(const char *digest, uint8_t *out, size_t out_len,
                         const uint8_t *secret, size_t secret_len,
                         const uint8_t *salt, size_t salt_len,
                         const uint8_t *info, size_t info_len);

/* Fills `out` from OpenSSL's CSPRNG. */
WC_API wc_status wc_random_bytes(uint8_t *out, size_t out_len);

/* Decodes hexadecimal text, either case, no separators; an odd digit count
 * or any other character is WC_ERR_INVALID_ARGUMENT. On failure all out_cap
 * bytes of `out` are zeroed. */
WC_API wc_status wc_hex_decode(uint8_t *out, size_t out_cap, size_t *out_len,
                               const char *hex, size_t hex_len);

/* Overwrites memory in a way the compiler may not elide. */
WC_API void wc_memzero(void *buf, size_t len);

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
 * device they return WC_ERR_NO_DEVICE.
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

WC_API wc_status wc_encrypt_device_async(const wc_options *options, const wc_cipher *cipher,
                                         uint8_t *out, const uint8_t *in, size_t len,
                                         const uint8_t *key, size_t key_len,
                                         const uint8_t *iv, size_t iv_len,
                                         uint64_t stream_offset, wc_cuda_stream stream);
WC_API wc_status wc_decrypt_device_async(const wc_options *options, const wc_cipher *cipher,
                                         uint8_t *out, const uint8_t *in, size_t len,
                                         const uint8_t *key, size_t key_len,
                                         const uint8_t *iv, size_t iv_len,
                                         uint64_t stream_offset, wc_cuda_stream stream);

/* One message of a batch: its bytes in the batch's input and output buffers. */
typedef struct wc_batch_message {
  uint64_t in_offset;
  uint64_t in_len;
  uint64_t out_offset; /* room for wc_encrypt_bound(options, cipher, in_len) bytes */
} wc_batch_message;

/*
 * Encrypts `count` independent messages with aes-*-cbc (PKCS#7 unless
 * options->padding is 0) or aes-*-cfb, one GPU thread per message, each with
 * its own IV (`ivs`: 16 bytes per message). `messages` and `ivs` are host
 * memory, copied before the call returns; `in` and `out` are device memory.
 * Asynchronous on `stream`, except that copying the descriptors waits for
 * the stream's earlier work.
 */
WC_API wc_status wc_batch_encrypt_device_async(const wc_options *options, const wc_cipher *cipher,
                                               uint8_t *out, const uint8_t *in,
                                               const wc_batch_message *messages, size_t count,
                                               const uint8_t *key, size_t key_len,
                                               const uint8_t *ivs, wc_cuda_stream stream);

/* Number of usable CUDA devices: 0, not an error, when the library was built
 * without CUDA or no driver or device is present. */
WC_API wc_status wc_device_count(int *count);
WC_API wc_status wc_device_info_get(wc_device_info *info, int device);
/* Nonzero when this build contains the CUDA backend. */
WC_API int wc_built_with_cuda(void);

/* ------------------------------------------------------------------------ */
/* Authenticated encryption (AEAD)                                          */
/* ------------------------------------------------------------------------ */

/*
 * AES-128/192/256-GCM (NIST SP 800-38D) and ChaCha20-Poly1305 (RFC 8439),
 * byte-identical to OpenSSL. Sealing encrypts `in` and computes a tag over
 * the associated data (AAD) and the ciphertext; opening recomputes the tag,
 * compares it in constant time, and releases plaintext only when it matches:
 * otherwise it returns WC_ERR_AUTH and every output byte is zero. The tag is
 * detached: the ciphertext has exactly the plaintext's length.
 *
 * Nonces: ChaCha20-Poly1305 takes exactly 12 bytes. GCM takes 1 to
 * WC_AEAD_MAX_NONCE_LEN bytes: 12 are used directly, any other length is
 * hashed with GHASH first (12 is the length to use). A key must never seal
 * two messages under the same nonce.
 *
 * Tags are 4 to 16 bytes; a shorter tag is the prefix of the 16-byte one.
 * Below 16 bytes forgeries get easier (SP 800-38D appendix C): use 16.
 *
 * Backends: the CPU runs OpenSSL (one message per thread, batches spread over
 * the thread pool); the GPU runs GCM as the CTR keystream kernel with GHASH
 * computed alongside, and ChaCha20-Poly1305 likewise with Poly1305, both
 * authenticators evaluated in parallel from precomputed powers of the hash
 * key. WC_BACKEND_AUTO and WC_BACKEND_HYBRID run host-memory calls on the
 * CPU; WC_BACKEND_GPU runs one-shot and batch calls on the GPU (streaming
 * contexts are CPU only); WC_BACKEND_GPU_REFERENCE has no AEAD kernels, so
 * AEAD calls on it fail with WC_ERR_BACKEND_UNAVAILABLE.
 */

#define WC_AEAD_MIN_TAG_LEN 4
#define WC_AEAD_MAX_TAG_LEN 16
/* GCM nonces longer than this are refused (OpenSSL's limit as well). */
#define WC_AEAD_MAX_NONCE_LEN 128

/* An entry of the static AEAD table; never freed. */
typedef struct wc_aead wc_aead;

/* aes-128-gcm, aes-192-gcm, aes-256-gcm or chacha20-poly1305, case-
 * insensitively; NULL for any other name (a NULL aead gives
 * WC_ERR_UNKNOWN_CIPHER wherever one is taken). */
WC_API const wc_aead *wc_aead_by_name(const char *name);
/* Iterates the table: index 0 .. wc_aead_count() - 1. */
WC_API size_t wc_aead_count(void);
WC_API const wc_aead *wc_aead_at(size_t index);
WC_API const char *wc_aead_name(const wc_aead *aead);
WC_API size_t wc_aead_key_len(const wc_aead *aead);
/* The recommended nonce length: 12 for all four. */
WC_API size_t wc_aead_nonce_len(const wc_aead *aead);
/* Nonzero when `nonce_len` is accepted (see above). */
WC_API int wc_aead_nonce_len_valid(const wc_aead *aead, size_t nonce_len);
/* The longest message one nonce may seal: 2^36 - 32 bytes for GCM (its
 * 32-bit block counter), 2^38 - 64 for ChaCha20-Poly1305. Longer messages
 * give WC_ERR_RANGE. */
WC_API uint64_t wc_aead_max_message_len(const wc_aead *aead);

/*
 * One-shot sealing: `out` receives in_len bytes of ciphertext (out_cap must
 * be at least in_len; out may equal in), `tag` receives tag_len bytes. `aad`
 * may be NULL when aad_len is 0. Overlapping buffers: see the batch calls.
 */
WC_API wc_status wc_aead_seal(const wc_options *options, const wc_aead *aead,
                              uint8_t *out, size_t out_cap, size_t *out_len,
                              uint8_t *tag, size_t tag_len,
                              const uint8_t *key, size_t key_len,
                              const uint8_t *nonce, size_t nonce_len,
                              const uint8_t *aad, size_t aad_len,
                              const uint8_t *in, size_t in_len);

/* One-shot opening: WC_OK and in_len bytes of plaintext, or WC_ERR_AUTH
 * with the first min(out_cap, in_len) bytes of `out` zeroed. */
WC_API wc_status wc_aead_open(const wc_options *options, const wc_aead *aead,
                              uint8_t *out, size_t out_cap, size_t *out_len,
                              const uint8_t *key, size_t key_len,
                              const uint8_t *nonce, size_t nonce_len,
                              const uint8_t *aad, size_t aad_len,
                              const uint8_t *in, size_t in_len,
                              const uint8_t *tag, size_t tag_len);

/*
 * One message of an AEAD batch. `in`, `out` (len bytes each, out may equal
 * in) and `tag` (tag_len bytes: written by sealing, read by opening) are
 * host memory for the host batch calls and device memory for the device
 * ones; `nonce` and `aad` are always host memory.
 */
typedef struct wc_aead_message {
  uint8_t *out;
  const uint8_t *in;
  size_t len;
  const uint8_t *nonce;
  size_t nonce_len;
  const uint8_t *aad;
  size_t aad_len;
  uint8_t *tag;
} wc_aead_message;

/*
 * Seals or opens `count` independent messages under one key: on the CPU one
 * message per pool thread, on the GPU all of them in one kernel. No output,
 * tag being sealed or verdict (the device calls' verified[i]) may overlap
 * any other buffer of the call, except that a message may be worked in
 * place (out == in): WC_ERR_INVALID_ARGUMENT. Every AEAD call on whole
 * messages applies this rule, one-shot and device calls included. Every
 * message is checked before any work starts, so an invalid argument changes
 * nothing. Opening writes each message's status to results[i] (results may
 * be NULL) and returns WC_ERR_AUTH when any message failed; the failed
 * messages' outputs are zeroed, the others hold their plaintext.
 */
WC_API wc_status wc_aead_seal_batch(const wc_options *options, const wc_aead *aead,
                                    const wc_aead_message *messages, size_t count,
                                    size_t tag_len, const uint8_t *key, size_t key_len);
WC_API wc_status wc_aead_open_batch(const wc_options *options, const wc_aead *aead,
                                    wc_status *results,
                                    const wc_aead_message *messages, size_t count,
                                    size_t tag_len, const uint8_t *key, size_t key_len);

/* A buffer of one message, as wc_aead_find_overlap names it. */
typedef enum wc_aead_buffer {
  WC_AEAD_BUFFER_IN = 0,
  WC_AEAD_BUFFER_OUT = 1,
  WC_AEAD_BUFFER_TAG = 2,
  WC_AEAD_BUFFER_NONCE = 3,
  WC_AEAD_BUFFER_AAD = 4,
  WC_AEAD_BUFFER_VERIFIED = 5 /* the message's verdict, verified[i], of a device opening */
} wc_aead_buffer;

/* Two buffers that break the overlap rule: `written` (an output, a tag
 * being sealed or a verdict) of message written_message, and `other` of
 * message other_message (possibly the same message). */
typedef struct wc_aead_overlap {
  size_t written_message;
  wc_aead_buffer written;
  size_t other_message;
  wc_aead_buffer other;
} wc_aead_overlap;

/*
 * The overlap rule above on its own, as the calls apply it, for a caller
 * that wants to say which buffers broke it: nonzero when they do, with the
 * first pair found in *overlap (which may be NULL). WC_ENCRYPT checks
 * `messages` as sealing writes them (tags written), WC_DECRYPT as opening
 * does (tags read); `verified` is NULL, or the `count` verdicts a device
 * opening writes.
 */
WC_API int wc_aead_find_overlap(wc_aead_overlap *overlap, const wc_aead_message *messages,
                                size_t count, size_t tag_len, wc_direction direction,
                                const int32_t *verified);

/*
 * A key bound to an AEAD, set up once and then used by any number of
 * threads at once: the key schedule, and for GCM on the GPU the hash key and
 * the powers of it the kernels use (some 50 us per one-shot call). Under
 * `options->backend` gpu it runs host memory on the current device; under
 * cpu on the CPU; under auto and hybrid host memory on the CPU and, where a
 * device exists, device memory on the GPU. The calls take the batch
 * calls' messages and answer as they do. A device call on a key without the
 * GPU's AEAD returns WC_ERR_NO_DEVICE (no device) or
 * WC_ERR_BACKEND_UNAVAILABLE (a cpu key).
 */
typedef struct wc_aead_key wc_aead_key;

WC_API wc_status wc_aead_key_new(wc_aead_key **key, const wc_options *options, const wc_aead *aead,
                                 const uint8_t *key_bytes, size_t key_len);
WC_API wc_status wc_aead_key_seal(const wc_aead_key *key, const wc_aead_message *messages,
                                  size_t count, size_t tag_len);
WC_API wc_status wc_aead_key_open(const wc_aead_key *key, wc_status *results,
                                  const wc_aead_message *messages, size_t count, size_t tag_len);
/* Device memory, as the *_device_async calls below take it. */
WC_API wc_status wc_aead_key_seal_device_async(const wc_aead_key *key,
                                               const wc_aead_message *messages, size_t count,
                                               size_t tag_len, wc_cuda_stream stream);
WC_API wc_status wc_aead_key_open_device_async(const wc_aead_key *key, int32_t *verified,
                                               const wc_aead_message *messages, size_t count,
                                               size_t tag_len, wc_cuda_stream stream);
/* The backend host-memory messages run on: cpu or gpu. */
WC_API wc_backend wc_aead_key_backend(const wc_aead_key *key);
/* Wipes the key and its constants and frees; NULL is a no-op. */
WC_API void wc_aead_key_free(wc_aead_key *key);

/*
 * Streaming AEAD (CPU backend). Associated data goes in first, through any
 * number of wc_aead_ctx_aad calls; then the message through updates, whose
 * output has exactly the input's length. Sealing ends with
 * wc_aead_ctx_seal_final, which writes the tag.
 *
 * Opening cannot check the tag before the last byte has arrived, so
 * wc_aead_ctx_update releases plaintext that is NOT yet authenticated: treat
 * it as untrusted until wc_aead_ctx_open_final returns WC_OK (WC_ERR_AUTH
 * otherwise). Where that matters, use wc_aead_open or the sealed-file format
 * (`warpcrypt seal`), which authenticates each chunk before releasing it.
 * After an error or a final the context is dead (WC_ERR_CONTEXT_STATE).
 */
typedef struct wc_aead_ctx wc_aead_ctx;

WC_API wc_status wc_aead_ctx_new(wc_aead_ctx **ctx, const wc_options *options,
                                 const wc_aead *aead, wc_direction direction,
                                 const uint8_t *key, size_t key_len,
                                 const uint8_t *nonce, size_t nonce_len);
/* Only before the first wc_aead_ctx_update. */
WC_API wc_status wc_aead_ctx_aad(wc_aead_ctx *ctx, const uint8_t *aad, size_t aad_len);
/* out_cap must be at least in_len. */
WC_API wc_status wc_aead_ctx_update(wc_aead_ctx *ctx, uint8_t *out, size_t out_cap,
                                    size_t *out_len, const uint8_t *in, size_t in_len);
WC_API wc_status wc_aead_ctx_seal_final(wc_aead_ctx *ctx, uint8_t *tag, size_t tag_len);
WC_API wc_status wc_aead_ctx_open_final(wc_aead_ctx *ctx, const uint8_t *tag, size_t tag_len);
WC_API wc_backend wc_aead_ctx_backend(const wc_aead_ctx *ctx);
/* Wipes the key state and frees; NULL is a no-op. */
WC_API void wc_aead_ctx_free(wc_aead_ctx *ctx);

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
 * whole output zeroed by then. The plaintext is written before the tag is
 * known, so nothing may read `out` before the stream has passed the call.
 * Buffers that overlap are refused as by the batch calls above, verified
 * included.
 */
WC_API wc_status wc_aead_seal_device_async(const wc_options *options, const wc_aead *aead,
                                           uint8_t *out, uint8_t *tag, size_t tag_len,
                                           const uint8_t *key, size_t key_len,
                                           const uint8_t *nonce, size_t nonce_len,
                                           const uint8_t *aad, size_t aad_len,
                                           const uint8_t *in, size_t len, wc_cuda_stream stream);
WC_API wc_status wc_aead_open_device_async(const wc_options *options, const wc_aead *aead,
                                           uint8_t *out, int32_t *verified,
                                           const uint8_t *key, size_t key_len,
                                           const uint8_t *nonce, size_t nonce_len,
                                           const uint8_t *aad, size_t aad_len,
                                           const uint8_t *in, size_t len,
                                           const uint8_t *tag, size_t tag_len,
                                           wc_cuda_stream stream);
/* Batches of device-memory messages, all in one kernel launch. */
WC_API wc_status wc_aead_seal_batch_device_async(const wc_options *options, const wc_aead *aead,
                                                 const wc_aead_message *messages, size_t count,
                                                 size_t tag_len, const uint8_t *key, size_t key_len,
                                                 wc_cuda_stream stream);
WC_API wc_status wc_aead_open_batch_device_async(const wc_options *options, const wc_aead *aead,
                                                 int32_t *verified,
                                                 const wc_aead_message *messages, size_t count,
                                                 size_t tag_len, const uint8_t *key, size_t key_len,
                                                 wc_cuda_stream stream);

/* ------------------------------------------------------------------------ */
/* Sealed files (docs/format.md)                                            */
/* ------------------------------------------------------------------------ */

/*
 * The chunked AEAD file format of `warpcrypt seal` / `warpcrypt open`: a
 * 48-byte header, then fixed-size chunks, each sealed under a nonce that
 * holds its index and a last-chunk flag, so truncation, reordering and
 * splicing are detected. Chunks run on the streaming engine: regular files
 * are read and written at many offsets at once, by every worker.
 *
 * The secret is a passphrase (PBKDF2, parameters in the header) or a key of
 * the AEAD's length (HKDF with the file's random salt: one key can seal any
 * number of files). A reader takes the key source from the header.
 *
 * Engine options: `backend` cpu (auto), gpu or hybrid picks the workers:
 * `threads` CPU workers, `streams` GPU workers on the current device. Each
 * worker claims whole chunks at a time, about `chunk_bytes` of them (the
 * engine's defaults when 0).
 */

typedef enum wc_seal_key_source {
  WC_SEAL_PASSPHRASE = 1, /* PBKDF2-HMAC(secret, salt, iterations) */
  WC_SEAL_KEY = 2         /* HKDF(secret, salt): the secret is a key of the AEAD's length */
} wc_seal_key_source;

#define WC_SEAL_HEADER_LEN 48
#define WC_SEAL_TAG_LEN 16
#define WC_SEAL_DEFAULT_CHUNK_BYTES (1u << 20)
#define WC_SEAL_DEFAULT_ITERATIONS 600000u
/* Above this a header's iteration count is taken for damage, not a choice. */
#define WC_SEAL_MAX_ITERATIONS 100000000u

typedef struct wc_seal_params {
  const wc_aead *aead;           /* default aes-256-gcm */
  wc_seal_key_source key_source; /* default WC_SEAL_PASSPHRASE */
  uint32_t iterations;           /* PBKDF2's, 1 to WC_SEAL_MAX_ITERATIONS; default WC_SEAL_DEFAULT_ITERATIONS */
  const char *digest;            /* the KDF's: "sha256" (default) or "sha512" */
  uint64_t chunk_bytes;          /* plaintext per chunk, a power of two from 4 KiB to 1 GiB;
                                    default WC_SEAL_DEFAULT_CHUNK_BYTES */
} wc_seal_params;

/* Fills `params` with the defaults above. A NULL params pointer in the
 * calls below means the same. A zero field is an invalid value, not a
 * default (WC_ERR_INVALID_ARGUMENT): start from wc_seal_params_init. */
WC_API void wc_seal_params_init(wc_seal_params *params);

/* The most PBKDF2 iterations wc_open_* run for a file's header unless told
 * otherwise: the header is not authenticated until the KDF has run, so a
 * forged count must not buy hours of CPU. About 1.3 s (SHA-256) to 2.2 s
 * (SHA-512) on one core; seal's default is 600,000. */
#define WC_OPEN_DEFAULT_MAX_ITERATIONS 2000000u

typedef struct wc_open_params {
  /* Plaintext bytes [offset, offset + length) only: the defaults, 0 and
   * UINT64_MAX, are the whole file. */
  uint64_t offset;
  uint64_t length;
  /* A file whose header asks for more PBKDF2 iterations is refused
   * (WC_ERR_FORMAT) before the KDF runs; 1 to WC_SEAL_MAX_ITERATIONS,
   * default WC_OPEN_DEFAULT_MAX_ITERATIONS. */
  uint32_t max_iterations;
} wc_open_params;

/* Fills `params` with the defaults above; a NULL params pointer in the
 * calls below means the same. */
WC_API void wc_open_params_init(wc_open_params *params);

/* What a sealed file's header says, and what its size implies. */
typedef struct wc_sealed_info {
  const wc_aead *aead;
  wc_seal_key_source key_source;
  const char *digest;      /* "sha256" or "sha512" */
  uint32_t iterations;     /* 0 for WC_SEAL_KEY */
  uint64_t chunk_bytes;
  uint64_t chunks;
  uint64_t plaintext_len;
  uint8_t salt[16];
  uint8_t nonce_prefix[7];
} wc_sealed_info;

/* Reads and checks the header at `fd`'s current offset, without moving it,
 * and the size of what follows; `fd` must be a regular file (a pipe's header
 * cannot be read back: WC_ERR_INVALID_ARGUMENT). WC_ERR_FORMAT (job->detail
 * says why) for anything that is not a valid header or an impossible size.
 * `job` may be NULL. */
WC_API wc_status wc_sealed_inspect(int fd, wc_sealed_info *info, wc_job *job);

/* Seals everything from in_fd's offset to its end into out_fd at its offset:
 * the header, then the chunks. The input is read to its end, whatever its
 * size claims (/proc files report 0); a file that changes size while it is
 * read is WC_ERR_IO with job->detail saying so. An empty passphrase is
 * refused (WC_ERR_INVALID_ARGUMENT): it would protect nothing. On failure
 * the output may hold part of the result (wc_seal_file removes it). */
WC_API wc_status wc_seal_fd(const wc_options *options, const wc_seal_params *params, wc_job *job,
                            int out_fd, int in_fd, const uint8_t *secret, size_t secret_len);

/* Opens the sealed file read from in_fd's offset into out_fd at its offset.
 * `key_source` says what the secret is; a file sealed from the other kind
 * of secret is WC_ERR_INVALID_ARGUMENT (job->detail says which it needs).
 * Every byte written has been authenticated. A reader that reaches the end
 * authenticates the final chunk with its last-chunk flag, so a file cut at
 * a chunk boundary (with or without bytes appended) is WC_ERR_FORMAT or
 * WC_ERR_AUTH. params->offset and ->length select a plaintext range; any
 * range but the whole file needs a regular input file
 * (WC_ERR_INVALID_ARGUMENT) and reads and authenticates only the chunks
 * that hold it, the final one included whenever the range reaches the end.
 * A range past the end is cut at the end; an empty one still authenticates
 * the last chunk, so a wrong secret or a truncated file fails all the same.
 * WC_ERR_AUTH names the first chunk that failed in job->failed_chunk. A
 * streamed (non-file) output may hold the chunks authenticated before a
 * failure. Memory follows what the input holds, never the header alone. */
WC_API wc_status wc_open_fd(const wc_options *options, const wc_open_params *params, wc_job *job, int out_fd,
                            int in_fd, wc_seal_key_source key_source, const uint8_t *secret, size_t secret_len);

/* Path to path, atomically (wc_output_open): a temporary file beside
 * out_path, renamed over it on success, removed on any failure, so a failed
 * open leaves no plaintext behind. out_path must not name in_path. */
WC_API wc_status wc_seal_file(const wc_options *options, const wc_seal_params *params, wc_job *job,
                              const char *out_path, const char *in_path,
                              const uint8_t *secret, size_t secret_len);
WC_API wc_status wc_open_file(const wc_options *options, const wc_open_params *params, wc_job *job,
                              const char *out_path, const char *in_path,
                              wc_seal_key_source key_source, const uint8_t *secret, size_t secret_len);

#ifdef __cplusplus
}
#endif

#endif /* WARPCRYPT_WARPCRYPT_H */
