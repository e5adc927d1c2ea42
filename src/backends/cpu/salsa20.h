// Salsa20/20 (djb) with 32- and 16-byte keys, through libsodium.
#pragma once

#include <memory>

#include "core/backend.h"

namespace warpcrypt::cpu {

std::unique_ptr<RandomAccessCipher> make_salsa20(const wc_cipher &cipher, const KeyMaterial &key,
                                                 unsigned threads);

}  // namespace warpcrypt::cpu
