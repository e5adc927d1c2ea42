// The host-crypto provider (core/host_crypto.h): OpenSSL and libsodium, with
// OpenSSL's CSPRNG for random bytes and its base64.
#include "core/host_crypto.h"

#include <array>

#include "backends/cpu/base64.h"
#include "backends/cpu/bcrypt_pbkdf.h"
#include "backends/cpu/evp_cipher.h"
#include "backends/cpu/kdf.h"
#include "backends/cpu/keccak.h"
#include "backends/cpu/mlkem768.h"
#include "backends/cpu/rsa_oaep.h"
#include "backends/cpu/signature.h"
#include "backends/cpu/sodium_init.h"
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

wc_status chacha20_poly1305_seal(std::span<uint8_t> sealed, std::span<const uint8_t, 32> key,
                                 std::span<const uint8_t, 12> nonce, std::span<const uint8_t> message) {
  if (sealed.size() != message.size() + crypto_aead_chacha20poly1305_ietf_ABYTES) return WC_ERR_INVALID_ARGUMENT;
  if (!cpu::sodium_ready()) return WC_ERR_CRYPTO_LIBRARY;
  crypto_aead_chacha20poly1305_ietf_encrypt(sealed.data(), nullptr, message.data(), message.size(), nullptr, 0,
                                            nullptr, nonce.data(), key.data());
  return WC_OK;
}

wc_status chacha20_poly1305_open(std::span<uint8_t> message, std::span<const uint8_t, 32> key,
                                 std::span<const uint8_t, 12> nonce, std::span<const uint8_t> sealed) {
  if (sealed.size() != message.size() + crypto_aead_chacha20poly1305_ietf_ABYTES) return WC_ERR_INVALID_ARGUMENT;
  if (!cpu::sodium_ready()) return WC_ERR_CRYPTO_LIBRARY;
  return crypto_aead_chacha20poly1305_ietf_decrypt(message.data(), nullptr, nullptr, sealed.data(), sealed.size(),
                                                   nullptr, 0, nonce.data(), key.data()) == 0
             ? WC_OK
             : WC_ERR_AUTH;
}

wc_status decrypt(std::span<uint8_t> out, const char *cipher, std::span<const uint8_t> key,
                  std::span<const uint8_t> iv, std::span<const uint8_t> in) {
  const EVP_CIPHER *evp = cpu::fetch_evp_cipher(cipher);
  if (evp == nullptr || out.size() != in.size() || key.size() != static_cast<size_t>(EVP_CIPHER_get_key_length(evp)) ||
      iv.size() != static_cast<size_t>(EVP_CIPHER_get_iv_length(evp)) ||
      in.size() % static_cast<size_t>(EVP_CIPHER_get_block_size(evp)) != 0) {
    return WC_ERR_INVALID_ARGUMENT;
  }
  const cpu::CtxPtr ctx(EVP_CIPHER_CTX_new());
  int tail = 0;
  const bool done = ctx && EVP_DecryptInit_ex2(ctx.get(), evp, key.data(), iv.data(), nullptr) == 1 &&
                    EVP_CIPHER_CTX_set_padding(ctx.get(), 0) == 1 &&
                    cpu::update_all(ctx.get(), in.data(), out.data(), in.size()) &&
                    EVP_DecryptFinal_ex(ctx.get(), out.data() + out.size(), &tail) == 1;
  return done ? WC_OK : WC_ERR_CRYPTO_LIBRARY;
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
    .chacha20_poly1305_seal = chacha20_poly1305_seal,
    .chacha20_poly1305_open = chacha20_poly1305_open,
    .decrypt = decrypt,
    .base64 = cpu::make_base64,
};

}  // namespace warpcrypt
