// libsodium, started once for the whole backend.
#pragma once

#include <sodium.h>

namespace warpcrypt::cpu {

// sodium_init picks the fastest implementations for this CPU (SSE2/AVX2 for
// Salsa20, SSSE3/AVX2/AVX-512 for Argon2's block function); without it
// libsodium runs its portable reference code, several times slower. False if
// libsodium cannot start.
inline bool sodium_ready() {
  static const bool initialised = sodium_init() >= 0;
  return initialised;
}

}  // namespace warpcrypt::cpu
