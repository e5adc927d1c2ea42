/* warpcrypt: status codes, version, and the limits every subject shares. */
#ifndef WARPCRYPT_STATUS_H
#define WARPCRYPT_STATUS_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define WC_API __declspec(dllexport)
#else
#define WC_API __attribute__((visibility("default")))
#endif

/* Every enum of the C API. C++ sees it with `int` as its fixed underlying
 * type: a C caller may store any int in one, and the library must read such
 * a value without undefined behaviour to refuse it (C's enums are ints). */
#ifdef __cplusplus
#define WC_ENUM(name) enum name : int
#else
#define WC_ENUM(name) enum name
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

/* C++ callers may not drop a status unread: the compiler warns (and the
 * library's own build treats the warning as an error), since a failure that
 * is dropped on its way to a job's result reads as success. */
#ifdef __cplusplus
typedef enum [[nodiscard]] wc_status : int {
#else
typedef enum wc_status {
#endif
  WC_OK = 0,
  WC_ERR_INVALID_ARGUMENT,   /* NULL pointer, overlapping buffers, bad option */
  WC_ERR_UNKNOWN_CIPHER,     /* no cipher by that name */
  WC_ERR_KEY_LEN,            /* key length differs from the cipher's */
  WC_ERR_IV_LEN,             /* IV length differs from the cipher's */
  WC_ERR_NOT_BLOCK_ALIGNED,  /* length is not a whole number of blocks for an unpadded block mode */
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
  WC_ERR_FORMAT,             /* not a file of the expected format, or a damaged or unknown header (wc_job.detail says which rule) */
  WC_ERR_NO_IDENTITY         /* age: none of the identities (keys, passphrase) opens any of the file's recipient stanzas */
} wc_status;

/* A static English description of `status`; never NULL. */
WC_API const char *wc_status_string(wc_status status);
/* The status's identifier without its WC_ERR_ or WC_ prefix, in capitals:
 * "OK", "INVALID_ARGUMENT", ..., "NO_IDENTITY"; NULL for a value outside the
 * enum. For bindings that name the statuses as the header does. */
WC_API const char *wc_status_name(wc_status status);
/* The statuses are numbered from WC_OK without gaps: 0 .. wc_status_count() - 1. */
WC_API size_t wc_status_count(void);

/* What kind of failure a status is, for callers that act on the kind and not
 * on each status: the CLI's exit codes, a binding's exception classes. */
typedef WC_ENUM(wc_status_kind) {
  WC_KIND_OK = 0,
  WC_KIND_FAILURE,   /* none of the kinds below: out of memory, OpenSSL or a CUDA call failed, cancelled */
  WC_KIND_USAGE,     /* the caller asked for something invalid: an argument, a cipher or digest name,
                        a key or IV length, a range, an operation the cipher cannot do */
  WC_KIND_IO,        /* reading the input or writing the output failed */
  WC_KIND_AUTH,      /* the data did not decrypt or authenticate: a wrong key or passphrase, or
                        data that was modified, truncated, or is not in the format at all */
  WC_KIND_NO_DEVICE  /* the backend or CUDA device asked for is not there */
} wc_status_kind;

/* The kind of `status`; WC_KIND_FAILURE for a value outside the enum. */
WC_API wc_status_kind wc_status_kind_of(wc_status status);
/* The kind's name in lower case: "ok", "failure", "usage", "io", "auth",
 * "no_device"; NULL for a value outside the enum. */
WC_API const char *wc_status_kind_name(wc_status_kind kind);

/* Version string, "MAJOR.MINOR.PATCH". */
WC_API const char *wc_version(void);
/* The OpenSSL the library runs on, as OpenSSL names it: "OpenSSL 3.0.13
 * 30 Jan 2024". */
WC_API const char *wc_openssl_version(void);

#ifdef __cplusplus
}
#endif

#endif /* WARPCRYPT_STATUS_H */
