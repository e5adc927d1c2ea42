// The host-crypto provider (core/host_crypto.h): OpenSSL and libsodium, with
// OpenSSL's CSPRNG for random bytes and its base64.
#include "core/host_crypto.h"
#include "backends/cpu/base64.h"
#include "backends/cpu/bcrypt_pbkdf.h"
#include "backends/cpu/kdf.h"
#include "backends/cpu/rsa_oaep.h"
#include "backends/cpu/signature.h"

namespace warpcrypt {
namespace {

class SystemRandom final : public RandomSource {
 public:
  wc_status fill(std::span<uint8_t> out) override { return cpu::random_bytes(out); }
};

SystemRandom system_random;

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
    .bcrypt_pbkdf = cpu::bcrypt_pbkdf,
    .digest = cpu::digest,
    .ed25519_to_x25519 = cpu::ed25519_to_x25519,
    .rsa_oaep_encrypt = cpu::rsa_oaep_encrypt,
    .rsa_oaep_decrypt = cpu::rsa_oaep_decrypt,
    .base64 = cpu::make_base64,
};

}  // namespace warpcrypt
