// The host-crypto provider (core/host_crypto.h): OpenSSL and libsodium, with
// OpenSSL's CSPRNG for random bytes and its base64.
#include "core/host_crypto.h"

#include <array>

#include "backends/cpu/base64.h"
#include "backends/cpu/bcrypt_pbkdf.h"
#include "backends/cpu/kdf.h"
#include "backends/cpu/keccak.h"
#include "backends/cpu/mlkem768.h"
#include "backends/cpu/rsa_oaep.h"
#include "backends/cpu/signature.h"
#include "core/secret_bytes.h"

namespace warpcrypt {
namespace {

class SystemRandom final : public RandomSource {
 public:
  wc_status fill(std::span<uint8_t> out) override { return cpu::random_bytes(out); }
};

SystemRandom system_random;

// Encaps draws its message m from the caller's random source, so a seeded
// source makes it deterministic (the known-answer tests pass NIST's m so).
wc_status mlkem768_encaps_from(std::span<uint8_t, kMlkem768CiphertextLen> ciphertext,
                               std::span<uint8_t, kMlkemSharedSecretLen> shared_secret,
                               std::span<const uint8_t, kMlkem768EncapsulationKeyLen> encapsulation_key,
                               RandomSource &random) {
  std::array<uint8_t, kMlkemRandomnessLen> randomness{};
  wc_status status = random.fill(randomness);
  if (status == WC_OK) status = cpu::mlkem768_encaps(ciphertext, shared_secret, encapsulation_key, randomness);
  secure_wipe(randomness.data(), randomness.size());
  return status;
}

}  // namespace

const HostCrypto kHostCrypto = {
    .random = &system_random,
    .derive_key_iv = cpu::derive_key_iv,
    .pbkdf2 = cpu::pbkdf2,
    .hkdf = cpu::hkdf,
    .argon2id = cpu::argon2id,
    .hmac = cpu::hmac,
    .scrypt = cpu::scrypt,
    .x25519 = cpu::x25519,
    .ed25519_public_key = cpu::ed25519_public_key,
    .ed25519_sign = cpu::ed25519_sign,
    .ed25519_verify = cpu::ed25519_verify,
    .sha3_256 = cpu::sha3_256,
    .shake256 = cpu::shake256,
    .mlkem768_keygen = cpu::mlkem768_keygen,
    .mlkem768_encaps = mlkem768_encaps_from,
    .mlkem768_decaps = cpu::mlkem768_decaps,
    .bcrypt_pbkdf = cpu::bcrypt_pbkdf,
    .digest = cpu::digest,
    .ed25519_to_x25519 = cpu::ed25519_to_x25519,
    .rsa_oaep_encrypt = cpu::rsa_oaep_encrypt,
    .rsa_oaep_decrypt = cpu::rsa_oaep_decrypt,
    .base64 = cpu::make_base64,
};

}  // namespace warpcrypt
