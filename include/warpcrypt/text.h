/* warpcrypt: `openssl enc -a`'s base64, for a program that codes the text
 * around the library's jobs itself (the CLI's -a and -A). */
#ifndef WARPCRYPT_TEXT_H
#define WARPCRYPT_TEXT_H

#include "warpcrypt/cipher.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A base64 coder that takes its input in pieces, byte for byte what `openssl
 * enc -a` writes and reads (it is OpenSSL's own coder). WC_ENCRYPT encodes:
 * lines of 64 characters, each ending in LF, or with `one_line` (-A) one line
 * with no LF. WC_DECRYPT decodes: line breaks and spaces anywhere are
 * ignored, as openssl ignores them; `one_line` makes no difference.
 */
typedef struct wc_base64 wc_base64;

WC_API wc_status wc_base64_new(wc_base64 **coder, wc_direction direction, int one_line);
/* The most bytes wc_base64_update writes for `in_len` bytes of input, and
 * the most wc_base64_final writes. */
WC_API size_t wc_base64_update_bound(const wc_base64 *coder, size_t in_len);
WC_API size_t wc_base64_final_bound(void);
/* Codes `in`; WC_ERR_OUTPUT_TOO_SMALL where out_cap is below the bound,
 * WC_ERR_FORMAT where decoding meets what is not base64 (the coder is then
 * dead: every later call fails the same way). */
WC_API wc_status wc_base64_update(wc_base64 *coder, uint8_t *out, size_t out_cap, size_t *out_len,
                                  const uint8_t *in, size_t in_len);
/* The end: an encoder's last characters; WC_ERR_FORMAT where decoded text
 * ended inside a group of four characters. */
WC_API wc_status wc_base64_final(wc_base64 *coder, uint8_t *out, size_t out_cap, size_t *out_len);
WC_API void wc_base64_free(wc_base64 *coder);

#ifdef __cplusplus
}
#endif

#endif /* WARPCRYPT_TEXT_H */
