// Keys from passphrases, exactly as `openssl enc` derives them; Argon2id,
// PBKDF2 and HKDF (RFC 5869) for the formats; random bytes from OpenSSL's
// CSPRNG.
#pragma once

#include <cstdint>
#include <span>

#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::cpu {

// Fills key_and_iv (key bytes, then IV bytes) from the passphrase.
wc_status derive_key_iv(std::span<uint8_t> key_and_iv, wc_kdf kdf, const char *digest,
                        uint32_t iterations, std::span<const uint8_t> passphrase,
                        std::span<const uint8_t> salt);

// PBKDF2-HMAC with the named digest ("sha256", "sha512", ...).
wc_status pbkdf2(std::span<uint8_t> out, const char *digest, uint32_t iterations, std::span<const uint8_t> passphrase,
                 std::span<const uint8_t> salt);

// Argon2id v1.3 with one lane through libsodium's crypto_pwhash: `ops`
// passes over `memory` bytes (a multiple of 1 KiB, within libsodium's
// limits), a 16-byte salt, 16 bytes of output or more. WC_ERR_OUT_OF_MEMORY
// when the memory cannot be had.
wc_status argon2id(std::span<uint8_t> out, uint32_t ops, uint64_t memory, std::span<const uint8_t> passphrase,
                   std::span<const uint8_t> salt);

// HKDF (RFC 5869) extract-then-expand with the named digest; at most 255
// digest lengths of output.
wc_status hkdf(std::span<uint8_t> out, const char *digest, std::span<const uint8_t> secret,
               std::span<const uint8_t> salt, std::span<const uint8_t> info);

wc_status random_bytes(std::span<uint8_t> out);

// HMAC with the named digest; `out` is the digest's length.
wc_status hmac(std::span<uint8_t> out, const char *digest, std::span<const uint8_t> key,
               std::span<const uint8_t> message);

// A message digest by name; `out` is the digest's length.
wc_status digest(std::span<uint8_t> out, const char *digest, std::span<const uint8_t> message);

// scrypt (RFC 7914), N = 2^log2_n (1 to 30), r = 8, p = 1;
// WC_ERR_OUT_OF_MEMORY where its 2^log2_n KiB cannot be allocated.
wc_status scrypt(std::span<uint8_t> out, std::span<const uint8_t> passphrase, std::span<const uint8_t> salt,
                 unsigned log2_n);

// X25519 through libsodium: scalar * point, or scalar * base when `point`
// is empty; an all-zero result is WC_ERR_CRYPTO_LIBRARY.
wc_status x25519(std::span<uint8_t, 32> out, std::span<const uint8_t, 32> scalar, std::span<const uint8_t> point);

}  // namespace warpcrypt::cpu
