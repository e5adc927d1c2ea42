// Keys from passphrases, exactly as `openssl enc` derives them, and random
// bytes from OpenSSL's CSPRNG.
#pragma once

#include <cstdint>
#include <span>

#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::cpu {

// Fills key_and_iv (key bytes, then IV bytes) from the passphrase.
wc_status derive_key_iv(std::span<uint8_t> key_and_iv, wc_kdf kdf, const char *digest,
                        uint32_t iterations, std::span<const uint8_t> passphrase,
                        std::span<const uint8_t> salt);

wc_status random_bytes(std::span<uint8_t> out);

}  // namespace warpcrypt::cpu
