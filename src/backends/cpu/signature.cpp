#include "backends/cpu/signature.h"

#include <sodium.h>

#include <algorithm>
#include <array>

#include "backends/cpu/sodium_init.h"

namespace warpcrypt::cpu {

namespace {

static_assert(crypto_sign_SEEDBYTES == 32 && crypto_sign_PUBLICKEYBYTES == 32 && crypto_sign_BYTES == 64);

// libsodium's secret key is the seed followed by the public key; it lives
// only for one call, and is wiped before the call returns.
class ExpandedKey {
 public:
  explicit ExpandedKey(std::span<const uint8_t, 32> seed) {
    ok_ = crypto_sign_seed_keypair(public_key_.data(), secret_key_.data(), seed.data()) == 0;
  }
  ~ExpandedKey() { sodium_memzero(secret_key_.data(), secret_key_.size()); }
  ExpandedKey(const ExpandedKey &) = delete;
  ExpandedKey &operator=(const ExpandedKey &) = delete;

  bool ok() const { return ok_; }
  const std::array<uint8_t, crypto_sign_PUBLICKEYBYTES> &public_key() const { return public_key_; }
  const uint8_t *secret_key() const { return secret_key_.data(); }

 private:
  std::array<uint8_t, crypto_sign_PUBLICKEYBYTES> public_key_{};
  std::array<uint8_t, crypto_sign_SECRETKEYBYTES> secret_key_{};
  bool ok_ = false;
};

}  // namespace

wc_status ed25519_public_key(std::span<uint8_t, 32> public_key, std::span<const uint8_t, 32> seed) {
  if (!sodium_ready()) return WC_ERR_CRYPTO_LIBRARY;
  const ExpandedKey key(seed);
  if (!key.ok()) return WC_ERR_CRYPTO_LIBRARY;
  std::copy(key.public_key().begin(), key.public_key().end(), public_key.begin());
  return WC_OK;
}

wc_status ed25519_sign(std::span<uint8_t, 64> signature, std::span<const uint8_t> message,
                       std::span<const uint8_t, 32> seed) {
  if (!sodium_ready()) return WC_ERR_CRYPTO_LIBRARY;
  const ExpandedKey key(seed);
  if (!key.ok()) return WC_ERR_CRYPTO_LIBRARY;
  return crypto_sign_detached(signature.data(), nullptr, message.data(), message.size(), key.secret_key()) == 0
             ? WC_OK
             : WC_ERR_CRYPTO_LIBRARY;
}

wc_status ed25519_verify(std::span<const uint8_t, 64> signature, std::span<const uint8_t> message,
                         std::span<const uint8_t, 32> public_key) {
  if (!sodium_ready()) return WC_ERR_CRYPTO_LIBRARY;
  return crypto_sign_verify_detached(signature.data(), message.data(), message.size(), public_key.data()) == 0
             ? WC_OK
             : WC_ERR_AUTH;
}

wc_status ed25519_to_x25519(std::span<uint8_t, 32> out, std::span<const uint8_t, 32> ed25519_public_key) {
  if (!sodium_ready()) return WC_ERR_CRYPTO_LIBRARY;
  return crypto_sign_ed25519_pk_to_curve25519(out.data(), ed25519_public_key.data()) == 0 ? WC_OK : WC_ERR_FORMAT;
}

}  // namespace warpcrypt::cpu
