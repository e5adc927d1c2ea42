// The CPU backend's table (core/backend_tables.h).
#include "core/backend_tables.h"
#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/evp_aead.h"
#include "backends/cpu/kdf.h"
#include "backends/cpu/signature.h"

namespace warpcrypt {

const CpuBackend kCpuBackend = {
    .make_cipher = cpu::make_cipher,
    .make_lane = cpu::make_lane,
    .make_aead = cpu::make_evp_aead,
    .make_aead_stream = cpu::make_evp_aead_stream,
    .derive_key_iv = cpu::derive_key_iv,
    .pbkdf2 = cpu::pbkdf2,
    .hkdf = cpu::hkdf,
    .argon2id = cpu::argon2id,
    .random_bytes = cpu::random_bytes,
    .hmac = cpu::hmac,
    .scrypt = cpu::scrypt,
    .x25519 = cpu::x25519,
    .ed25519_public_key = cpu::ed25519_public_key,
    .ed25519_sign = cpu::ed25519_sign,
    .ed25519_verify = cpu::ed25519_verify,
};

}  // namespace warpcrypt
