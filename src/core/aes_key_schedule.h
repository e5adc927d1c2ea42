// The AES key expansion (FIPS-197 section 5.2) for the GPU backend; the CPU
// backend lets OpenSSL expand its keys.
#pragma once

#include <cstddef>
#include <cstdint>

namespace warpcrypt::aes {

// Round keys as little-endian column words, 4 per round, rounds + 1 rounds.
// Passed to kernels by value, so it is plain data.
struct RoundKeys {
  uint32_t words[60];
  int rounds;  // 10, 12 or 14
};

// key_len is 16, 24 or 32.
RoundKeys expand_encrypt_key(const uint8_t *key, size_t key_len);

// The equivalent inverse cipher's schedule (FIPS-197 section 5.3.5): the
// encryption keys in reverse order, InvMixColumns applied to the inner ones,
// so decryption rounds have the same shape as encryption rounds.
RoundKeys make_decrypt_key(const RoundKeys &encrypt_keys);

}  // namespace warpcrypt::aes
