/*
 * warpcrypt: bulk symmetric encryption on NVIDIA GPUs and on the CPU.
 *
 * Conventions of every public header, after BoringSSL and libsodium:
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

/* The public API, one header per subject; this one includes them all. */
#include "warpcrypt/status.h"
#include "warpcrypt/cipher.h"
#include "warpcrypt/keys.h"
#include "warpcrypt/text.h"
#include "warpcrypt/job.h"
#include "warpcrypt/aead.h"
#include "warpcrypt/device.h"
#include "warpcrypt/plan.h"
#include "warpcrypt/sealed.h"
#include "warpcrypt/age.h"

#endif /* WARPCRYPT_WARPCRYPT_H */
