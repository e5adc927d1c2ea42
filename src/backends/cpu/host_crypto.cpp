// The host-crypto provider (core/host_crypto.h): OpenSSL and libsodium, with
// OpenSSL's CSPRNG for random bytes and its base64.
#include "core/host_crypto.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/decoder.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include <array>
#include <memory>
#include <vector>

#include "backends/cpu/base64.h"
#include "backends/cpu/bcrypt_pbkdf.h"
#include "backends/cpu/evp_cipher.h"
#include "backends/cpu/hpke.h"
#include "backends/cpu/kdf.h"
#include "backends/cpu/mlkem768.h"
#include "backends/cpu/p256.h"
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

// An OpenSSL integer parameter of `key`, big-endian and minimal, into
// *out; false where the key has none.
bool integer_param(const EVP_PKEY *key, const char *name, std::vector<uint8_t> *out) {
  BIGNUM *value = nullptr;
  if (EVP_PKEY_get_bn_param(key, name, &value) != 1) return false;
  const std::unique_ptr<BIGNUM, decltype(&BN_clear_free)> owned(value, BN_clear_free);
  out->resize(static_cast<size_t>(BN_num_bytes(value)));
  return BN_bn2bin(value, out->data()) == static_cast<int>(out->size());
}

// Go's rsa.PrivateKey.Validate, which age's parser runs: p q = n, and
// d e = 1 mod p - 1 and mod q - 1. OpenSSL's decoder checks neither, so
// a damaged integer would otherwise make a key that opens nothing.
bool consistent_rsa_key(const EVP_PKEY *key) {
  BIGNUM *n = nullptr, *e = nullptr, *d = nullptr, *p = nullptr, *q = nullptr;
  EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_RSA_N, &n);
  EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_RSA_E, &e);
  EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_RSA_D, &d);
  EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_RSA_FACTOR1, &p);
  EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_RSA_FACTOR2, &q);
  using Bn = std::unique_ptr<BIGNUM, decltype(&BN_clear_free)>;
  const Bn owned[] = {{n, BN_clear_free}, {e, BN_clear_free}, {d, BN_clear_free}, {p, BN_clear_free},
                      {q, BN_clear_free}};
  const std::unique_ptr<BN_CTX, decltype(&BN_CTX_free)> ctx(BN_CTX_secure_new(), BN_CTX_free);
  const Bn product(BN_secure_new(), BN_clear_free), de(BN_secure_new(), BN_clear_free),
      less_one(BN_secure_new(), BN_clear_free), rest(BN_secure_new(), BN_clear_free);
  if (!n || !e || !d || !p || !q || !ctx || !product || !de || !less_one || !rest) return false;
  if (BN_mul(product.get(), p, q, ctx.get()) != 1 || BN_cmp(product.get(), n) != 0) return false;
  if (BN_mul(de.get(), d, e, ctx.get()) != 1) return false;
  for (const BIGNUM *prime : {p, q}) {
    if (BN_sub(less_one.get(), prime, BN_value_one()) != 1 || BN_is_zero(less_one.get()) ||
        BN_mod(rest.get(), de.get(), less_one.get(), ctx.get()) != 1 || !BN_is_one(rest.get())) {
      return false;
    }
  }
  return true;
}

wc_status read_rsa_key(const EVP_PKEY *key, RsaPrivateKey *rsa) {
  // A third prime would be lost to the two-prime key RsaPrivateKey holds.
  std::vector<uint8_t> third_prime;
  if (integer_param(key, OSSL_PKEY_PARAM_RSA_FACTOR3, &third_prime)) return WC_ERR_UNSUPPORTED;
  const bool read = integer_param(key, OSSL_PKEY_PARAM_RSA_N, &rsa->public_key.n) &&
                    integer_param(key, OSSL_PKEY_PARAM_RSA_E, &rsa->public_key.e) &&
                    integer_param(key, OSSL_PKEY_PARAM_RSA_D, &rsa->d) &&
                    integer_param(key, OSSL_PKEY_PARAM_RSA_FACTOR1, &rsa->p) &&
                    integer_param(key, OSSL_PKEY_PARAM_RSA_FACTOR2, &rsa->q) &&
                    integer_param(key, OSSL_PKEY_PARAM_RSA_COEFFICIENT1, &rsa->iqmp);
  return read && consistent_rsa_key(key) ? WC_OK : WC_ERR_FORMAT;
}

wc_status parse_private_key_der(std::span<const uint8_t> der, PrivateKeyDer syntax, DerPrivateKey *key) {
  const bool pkcs1 = syntax == PrivateKeyDer::pkcs1_rsa;
  EVP_PKEY *decoded = nullptr;
  const std::unique_ptr<OSSL_DECODER_CTX, decltype(&OSSL_DECODER_CTX_free)> decoder(
      OSSL_DECODER_CTX_new_for_pkey(&decoded, "DER", pkcs1 ? "type-specific" : "PrivateKeyInfo",
                                    pkcs1 ? "RSA" : nullptr, EVP_PKEY_KEYPAIR, nullptr, nullptr),
      OSSL_DECODER_CTX_free);
  if (!decoder) return WC_ERR_CRYPTO_LIBRARY;
  const unsigned char *data = der.data();
  size_t left = der.size();
  const bool parsed = OSSL_DECODER_from_data(decoder.get(), &data, &left) == 1;
  const std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> owned(decoded, EVP_PKEY_free);
  // A refused key leaves OpenSSL's error queue full, which no later call
  // should read as its own.
  ERR_clear_error();
  if (!parsed || decoded == nullptr || left != 0) return WC_ERR_FORMAT;
  switch (EVP_PKEY_get_base_id(decoded)) {
    case EVP_PKEY_RSA:
      key->type = DerPrivateKey::Type::rsa;
      return read_rsa_key(decoded, &key->rsa);
    case EVP_PKEY_ED25519: {
      key->type = DerPrivateKey::Type::ed25519;
      size_t len = key->ed25519_seed.size();
      const bool read = EVP_PKEY_get_raw_private_key(decoded, key->ed25519_seed.data(), &len) == 1;
      return read && len == key->ed25519_seed.size() ? WC_OK : WC_ERR_FORMAT;
    }
    default:
      return WC_ERR_UNSUPPORTED;
  }
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
    .mlkem768_keygen = cpu::mlkem768_keygen,
    .mlkem768_encaps = mlkem768_encaps_from,
    .mlkem768_decaps = cpu::mlkem768_decaps,
    .p256_decode_point = cpu::p256_decode_point,
    .hpke_seal_base = cpu::hpke_seal_base,
    .hpke_open_base = cpu::hpke_open_base,
    .hpke_public_key = cpu::hpke_public_key,
    .bcrypt_pbkdf = cpu::bcrypt_pbkdf,
    .digest = cpu::digest,
    .ed25519_to_x25519 = cpu::ed25519_to_x25519,
    .rsa_oaep_encrypt = cpu::rsa_oaep_encrypt,
    .rsa_oaep_decrypt = cpu::rsa_oaep_decrypt,
    .chacha20_poly1305_seal = chacha20_poly1305_seal,
    .chacha20_poly1305_open = chacha20_poly1305_open,
    .decrypt = decrypt,
    .parse_private_key_der = parse_private_key_der,
    .base64 = cpu::make_base64,
};

}  // namespace warpcrypt
