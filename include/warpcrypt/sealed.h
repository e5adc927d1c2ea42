/* warpcrypt: the chunked, authenticated sealed-file format. */
#ifndef WARPCRYPT_SEALED_H
#define WARPCRYPT_SEALED_H

#include "warpcrypt/aead.h"
#include "warpcrypt/job.h"

#ifdef __cplusplus
extern "C" {
#endif

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
 * The secret is a passphrase (Argon2id by default, or PBKDF2; the KDF and
 * its costs in the header) or a key of the AEAD's length (HKDF with the
 * file's random salt: one key can seal any number of files). A reader takes
 * the key source and the KDF from the header.
 *
 * Engine options: `backend` cpu (auto), gpu or hybrid picks the workers:
 * `threads` CPU workers, `streams` GPU workers on the current device. Each
 * worker claims whole chunks at a time, about `chunk_bytes` of them (the
 * engine's defaults when 0).
 */

typedef WC_ENUM(wc_seal_key_source) {
  WC_SEAL_PASSPHRASE = 1, /* the secret is a passphrase, stretched by the file's wc_seal_kdf */
  WC_SEAL_KEY = 2         /* HKDF(secret, salt): the secret is a key of the AEAD's length */
} wc_seal_key_source;

/* How a passphrase becomes the file key. */
typedef WC_ENUM(wc_seal_kdf) {
  WC_SEAL_ARGON2ID = 1, /* libsodium's crypto_pwhash: Argon2id v1.3, one lane; memory-hard */
  WC_SEAL_PBKDF2 = 2    /* PBKDF2-HMAC(secret, salt, iterations): the format's first KDF */
} wc_seal_kdf;

#define WC_SEAL_HEADER_LEN 48
#define WC_SEAL_TAG_LEN 16
#define WC_SEAL_DEFAULT_CHUNK_BYTES (1u << 20)
/* A chunk is a power of two bytes in this range. */
#define WC_SEAL_MIN_CHUNK_BYTES (1u << 12)
#define WC_SEAL_MAX_CHUNK_BYTES (1u << 30)
#define WC_SEAL_DEFAULT_ITERATIONS 600000u
/* Above this a header's iteration count is taken for damage, not a choice. */
#define WC_SEAL_MAX_ITERATIONS 100000000u
/* Argon2id's costs: `ops` passes over `memory` bytes. The defaults are
 * libsodium's MODERATE preset (crypto_pwhash_OPSLIMIT/MEMLIMIT_MODERATE),
 * which libsodium sizes for about 0.7 s on a desktop core: a sealed file is
 * open to offline guessing for as long as it exists, so it deserves more
 * than the interactive preset of a login, while seal still runs once per
 * file. Memory is counted in Argon2's 1 KiB blocks, from libsodium's
 * minimum of 8 KiB to its maximum, the most a 32-bit count of KiB holds. */
#define WC_SEAL_DEFAULT_ARGON2_OPS 3u
#define WC_SEAL_DEFAULT_ARGON2_MEMORY (256ull << 20)
#define WC_SEAL_MIN_ARGON2_MEMORY 8192ull
#define WC_SEAL_MAX_ARGON2_MEMORY (0xffffffffull << 10)

typedef struct wc_seal_params {
  const wc_aead *aead;           /* default aes-256-gcm */
  wc_seal_key_source key_source; /* default WC_SEAL_PASSPHRASE */
  wc_seal_kdf kdf;               /* a passphrase's; default WC_SEAL_ARGON2ID */
  uint32_t argon2_ops;           /* Argon2id's passes, at least 1; default WC_SEAL_DEFAULT_ARGON2_OPS */
  uint64_t argon2_memory;        /* Argon2id's memory in bytes, a multiple of 1024 from
                                    WC_SEAL_MIN_ARGON2_MEMORY to WC_SEAL_MAX_ARGON2_MEMORY;
                                    default WC_SEAL_DEFAULT_ARGON2_MEMORY */
  uint32_t iterations;           /* PBKDF2's, 1 to WC_SEAL_MAX_ITERATIONS; default WC_SEAL_DEFAULT_ITERATIONS */
  const char *digest;            /* PBKDF2's and a key's HKDF's: "sha256" (default) or "sha512" */
  uint64_t chunk_bytes;          /* plaintext per chunk, a power of two from
                                    WC_SEAL_MIN_CHUNK_BYTES to WC_SEAL_MAX_CHUNK_BYTES;
                                    default WC_SEAL_DEFAULT_CHUNK_BYTES */
} wc_seal_params;

/* Fills `params` with the defaults above. A NULL params pointer in the
 * calls below means the same. A zero field is an invalid value, not a
 * default (WC_ERR_INVALID_ARGUMENT): start from wc_seal_params_init. The
 * fields of the KDF not chosen are not read. */
WC_API void wc_seal_params_init(wc_seal_params *params);

/* The most PBKDF2 iterations wc_open_* run for a file's header unless told
 * otherwise: the header is not authenticated until the KDF has run, so a
 * forged count must not buy hours of CPU. About 1.3 s (SHA-256) to 2.2 s
 * (SHA-512) on one core; seal's default is 600,000. */
#define WC_OPEN_DEFAULT_MAX_ITERATIONS 2000000u
/* The most Argon2id passes and memory wc_open_* spend on a file's header
 * unless told otherwise, for the same reason: libsodium's SENSITIVE preset
 * (4 passes over 1 GiB), its strongest, so a file sealed with any of its
 * presets opens without options, and a forged header costs at most about
 * five times seal's default. */
#define WC_OPEN_DEFAULT_MAX_ARGON2_OPS 4u
#define WC_OPEN_DEFAULT_MAX_ARGON2_MEMORY (1ull << 30)

typedef struct wc_open_params {
  /* Plaintext bytes [offset, offset + length) only: the defaults, 0 and
   * UINT64_MAX, are the whole file. */
  uint64_t offset;
  uint64_t length;
  /* A file whose header asks for more PBKDF2 iterations is refused
   * (WC_ERR_FORMAT) before the KDF runs; 1 to WC_SEAL_MAX_ITERATIONS,
   * default WC_OPEN_DEFAULT_MAX_ITERATIONS. */
  uint32_t max_iterations;
  /* Likewise for Argon2id: a header asking for more passes or more memory
   * is refused before the KDF runs (and before its memory is allocated).
   * max_argon2_ops at least 1, default WC_OPEN_DEFAULT_MAX_ARGON2_OPS;
   * max_argon2_memory in bytes, at least WC_SEAL_MIN_ARGON2_MEMORY, default
   * WC_OPEN_DEFAULT_MAX_ARGON2_MEMORY. */
  uint32_t max_argon2_ops;
  uint64_t max_argon2_memory;
} wc_open_params;

/* Fills `params` with the defaults above; a NULL params pointer in the
 * calls below means the same. */
WC_API void wc_open_params_init(wc_open_params *params);

/* What a sealed file's header says, and what its size implies. */
typedef struct wc_sealed_info {
  const wc_aead *aead;
  wc_seal_key_source key_source;
  wc_seal_kdf kdf;         /* a passphrase's; 0 for WC_SEAL_KEY */
  const char *digest;      /* "sha256" or "sha512"; NULL for Argon2id, which has none */
  uint32_t iterations;     /* PBKDF2's; 0 otherwise */
  uint32_t argon2_ops;     /* Argon2id's passes and memory in bytes; 0 otherwise */
  uint64_t argon2_memory;
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

/*
 * Sealed chunks one at a time, for a program that moves the bytes itself:
 * a file object, a socket, an object store (the Python package's
 * SealedWriter and SealedReader). The format's rules stay here: the header,
 * the key derivation, each chunk's nonce, associated data and lengths, and
 * the last-chunk flag. The caller says which chunk it hands over and whether
 * it is the last; a reader that reaches the end must open the final chunk
 * with last set (a reader that knows the file's size has
 * wc_sealed_stream_layout say which chunk that is), or a file cut at a chunk
 * boundary passes for a whole one.
 *
 * `options->backend` picks where chunks run (auto: the CPU; gpu: the
 * current device); the stream's calls may run from several threads at once.
 * `job` may be NULL everywhere; on failure it holds the message
 * (WC_ERR_AUTH: the chunk in failed_chunk).
 */
typedef struct wc_sealed_stream wc_sealed_stream;

/* A stream that seals a new file: its WC_SEAL_HEADER_LEN header bytes go
 * to `header` (header_cap at least that), to be written before chunk 0. The
 * secret and parameters are those of wc_seal_fd. */
WC_API wc_status wc_sealed_stream_seal_new(wc_sealed_stream **stream, const wc_options *options,
                                           const wc_seal_params *params, wc_job *job,
                                           uint8_t *header, size_t header_cap,
                                           const uint8_t *secret, size_t secret_len);
/* A stream that opens the file whose first header_len bytes are `header`
 * (fewer than WC_SEAL_HEADER_LEN, or a header no sealing writes, is
 * WC_ERR_FORMAT). Only params->max_iterations applies; key_source and the
 * secret as for wc_open_fd. */
WC_API wc_status wc_sealed_stream_open_new(wc_sealed_stream **stream, const wc_options *options,
                                           const wc_open_params *params, wc_job *job,
                                           const uint8_t *header, size_t header_len,
                                           wc_seal_key_source key_source,
                                           const uint8_t *secret, size_t secret_len);
/* Plaintext bytes per chunk (each sealed chunk is WC_SEAL_TAG_LEN longer). */
WC_API uint64_t wc_sealed_stream_chunk_bytes(const wc_sealed_stream *stream);
/* What a file whose body (everything after the header) is body_len bytes
 * holds: its number of chunks and plaintext bytes. WC_ERR_FORMAT for a size
 * no sealing gives, the truncations docs/format.md lists among them. */
WC_API wc_status wc_sealed_stream_layout(const wc_sealed_stream *stream, wc_job *job, uint64_t body_len,
                                         uint64_t *chunks, uint64_t *plaintext_len);
/* Seals chunk `index`: in_len is the chunk size, or for the last chunk (last
 * nonzero) 1 to the chunk size, 0 only when the whole file is empty
 * (WC_ERR_INVALID_ARGUMENT otherwise). `out` receives in_len +
 * WC_SEAL_TAG_LEN bytes. */
WC_API wc_status wc_sealed_stream_seal(const wc_sealed_stream *stream, wc_job *job,
                                       uint8_t *out, size_t out_cap, size_t *out_len,
                                       uint64_t index, int last, const uint8_t *in, size_t in_len);
/* Opens sealed chunk `index` (in_len bytes, its tag included) into
 * in_len - WC_SEAL_TAG_LEN bytes of `out`, released only if its tag
 * matches under this index and last flag: WC_ERR_AUTH otherwise, with `out`
 * zeroed. A length no sealing gives this chunk (a short chunk before the
 * last, an empty final chunk after chunk 0) is WC_ERR_FORMAT. */
WC_API wc_status wc_sealed_stream_open(const wc_sealed_stream *stream, wc_job *job,
                                       uint8_t *out, size_t out_cap, size_t *out_len,
                                       uint64_t index, int last, const uint8_t *in, size_t in_len);
/* Wipes the file key and frees; NULL is a no-op. */
WC_API void wc_sealed_stream_free(wc_sealed_stream *stream);

#ifdef __cplusplus
}
#endif

#endif /* WARPCRYPT_SEALED_H */
