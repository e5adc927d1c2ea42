// AES and ChaCha20 through OpenSSL's EVP interface.
#pragma once

#include <memory>

#include "core/backend.h"

namespace warpcrypt::cpu {

std::unique_ptr<RandomAccessCipher> make_evp_random_access(const wc_cipher &cipher,
                                                           wc_direction direction,
                                                           const KeyMaterial &key,
                                                           unsigned threads);

// Returns nullptr if OpenSSL refuses the cipher or the key.
std::unique_ptr<SequentialCipher> make_evp_sequential(const wc_cipher &cipher,
                                                      wc_direction direction,
                                                      const KeyMaterial &key);

}  // namespace warpcrypt::cpu
