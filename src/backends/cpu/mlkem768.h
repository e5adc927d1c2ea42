// ML-KEM-768 (FIPS 203): key generation from a 64-byte seed, encapsulation
// with 32 bytes of randomness, and decapsulation with implicit rejection.
// The host-crypto provider (core/host_crypto.h) is its only caller in the
// library; the formats reach it through HostCrypto.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/host_crypto.h"
#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::cpu {

// ML-KEM.KeyGen_internal(d, z) with seed = d || z (FIPS 203 algorithm 16).
void mlkem768_keygen(std::span<uint8_t, kMlkem768EncapsulationKeyLen> encapsulation_key,
                     std::span<uint8_t, kMlkem768DecapsulationKeyLen> decapsulation_key,
                     std::span<const uint8_t, kMlkem768SeedLen> seed);

// ML-KEM.Encaps_internal(ek, m) (algorithm 17) after the encapsulation-key
// check of section 7.2: WC_ERR_FORMAT where a coefficient of the key is not
// reduced modulo q, and then nothing is written.
wc_status mlkem768_encaps(std::span<uint8_t, kMlkem768CiphertextLen> ciphertext,
                          std::span<uint8_t, kMlkemSharedSecretLen> shared_secret,
                          std::span<const uint8_t, kMlkem768EncapsulationKeyLen> encapsulation_key,
                          std::span<const uint8_t, kMlkemRandomnessLen> randomness);

// ML-KEM.Decaps_internal(dk, c) (algorithm 18) after the decapsulation-key
// check of section 7.3: WC_ERR_FORMAT where the key's stored hash is not that
// of its encapsulation key. A ciphertext that does not re-encrypt to itself
// is no error: it yields the implicit-rejection secret J(z || c).
wc_status mlkem768_decaps(std::span<uint8_t, kMlkemSharedSecretLen> shared_secret,
                          std::span<const uint8_t, kMlkem768DecapsulationKeyLen> decapsulation_key,
                          std::span<const uint8_t, kMlkem768CiphertextLen> ciphertext);

}  // namespace warpcrypt::cpu
