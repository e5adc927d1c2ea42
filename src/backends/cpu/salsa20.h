// Salsa20/20 (djb) with 32- and 16-byte keys, through libsodium.
#pragma once

#include <memory>

#include "core/cipher_backend.h"

namespace warpcrypt::cpu {

// Runs each call on the calling thread; nullptr if libsodium cannot start.
std::unique_ptr<RandomAccessCipher> make_salsa20(const KeyMaterial &key);

}  // namespace warpcrypt::cpu
