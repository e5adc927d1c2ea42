/* warpcrypt: keys from passphrases and secrets, random bytes, hex keys and wiping. */
#ifndef WARPCRYPT_KEYS_H
#define WARPCRYPT_KEYS_H

#include "warpcrypt/cipher.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Keys from passphrases, as `openssl enc` derives them                     */
/* ------------------------------------------------------------------------ */

typedef WC_ENUM(wc_kdf) {
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

/*
 * HMAC (RFC 2104) of `message` under `key` with an OpenSSL digest name such
 * as "sha256"; out_len must be the digest's length (32 for SHA-256).
 */
WC_API wc_status wc_hmac(const char *digest, uint8_t *out, size_t out_len, const uint8_t *key, size_t key_len,
                         const uint8_t *message, size_t message_len);

/* Fills `out` from OpenSSL's CSPRNG. */
WC_API wc_status wc_random_bytes(uint8_t *out, size_t out_len);

/*
 * Ed25519 (RFC 8032). The private key is its 32-byte seed (what RFC 8032
 * calls the private key, and a JWK's "d"). wc_ed25519_verify returns WC_OK
 * for a valid signature and WC_ERR_AUTH for any other, including
 * non-canonical encodings and small-order public keys.
 */
WC_API wc_status wc_ed25519_public_key(uint8_t public_key[32], const uint8_t seed[32]);
WC_API wc_status wc_ed25519_sign(uint8_t signature[64], const uint8_t *message, size_t message_len,
                                 const uint8_t seed[32]);
WC_API wc_status wc_ed25519_verify(const uint8_t signature[64], const uint8_t *message, size_t message_len,
                                   const uint8_t public_key[32]);

/* Decodes hexadecimal text, either case, no separators; an odd digit count
 * or any other character is WC_ERR_INVALID_ARGUMENT. On failure all out_cap
 * bytes of `out` are zeroed. */
WC_API wc_status wc_hex_decode(uint8_t *out, size_t out_cap, size_t *out_len,
                               const char *hex, size_t hex_len);

/* Overwrites memory in a way the compiler may not elide. */
WC_API void wc_memzero(void *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* WARPCRYPT_KEYS_H */
