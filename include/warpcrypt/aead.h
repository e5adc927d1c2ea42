/* warpcrypt: authenticated encryption (AES-GCM, ChaCha20-Poly1305) on host memory. */
#ifndef WARPCRYPT_AEAD_H
#define WARPCRYPT_AEAD_H

#include "warpcrypt/cipher.h"

#ifdef __cplusplus
extern "C" {
#endif

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
 * Backends: the CPU runs OpenSSL, or for GCM with 12-byte nonces its own
 * VAES code where the CPU has it (batches spread over the thread pool, one
 * message per thread; a lone VAES message of 256 KiB or more is split over
 * up to `threads` of them); the GPU runs GCM as the CTR keystream kernel
 * with GHASH computed alongside, and ChaCha20-Poly1305 likewise with
 * Poly1305, both authenticators evaluated in parallel from precomputed
 * powers of the hash key. WC_BACKEND_AUTO and WC_BACKEND_HYBRID run
 * host-memory calls on the CPU; WC_BACKEND_GPU runs one-shot and batch calls
 * on the GPU (streaming contexts are CPU only).
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
typedef WC_ENUM(wc_aead_buffer) {
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
 * `options->backend` gpu it runs host memory on the devices of
 * `options->devices` (every device where that is NULL), a batch's messages
 * going to the devices in turn and a long message's pieces to one device;
 * under cpu on the CPU; under auto and hybrid host memory on the CPU and
 * device memory on the GPU where it lives (warpcrypt/device.h), the GPU's
 * AEAD made at the key's first device call, so that a key used on host
 * memory alone never starts CUDA. A device list naming a device the machine
 * lacks is WC_ERR_NO_DEVICE, whatever the backend. The calls take the batch
 * calls' messages and answer as they do. A device call on a key that cannot
 * have the GPU's AEAD returns WC_ERR_NO_DEVICE (no device) or
 * WC_ERR_BACKEND_UNAVAILABLE (a cpu key).
 */
typedef struct wc_aead_key wc_aead_key;

WC_API wc_status wc_aead_key_new(wc_aead_key **key, const wc_options *options, const wc_aead *aead,
                                 const uint8_t *key_bytes, size_t key_len);
WC_API wc_status wc_aead_key_seal(const wc_aead_key *key, const wc_aead_message *messages,
                                  size_t count, size_t tag_len);
WC_API wc_status wc_aead_key_open(const wc_aead_key *key, wc_status *results,
                                  const wc_aead_message *messages, size_t count, size_t tag_len);
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

#ifdef __cplusplus
}
#endif

#endif /* WARPCRYPT_AEAD_H */
