// bcrypt-pbkdf, the KDF OpenSSH encrypts private key files with (OpenBSD's
// bcrypt_pbkdf(3)): PBKDF2's structure with SHA-512 and, as its
// pseudo-random function, "bcrypt_hash", 64 rounds of eksblowfish's
// expensive key schedule over the hashed passphrase and salt.
#pragma once

#include <cstdint>
#include <span>

#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::cpu {

// `out` of 1 to 1024 bytes; `rounds` of at least 1 (the caller caps it: each
// round costs a few milliseconds).
wc_status bcrypt_pbkdf(std::span<uint8_t> out, std::span<const uint8_t> passphrase, std::span<const uint8_t> salt,
                       uint32_t rounds);

}  // namespace warpcrypt::cpu
