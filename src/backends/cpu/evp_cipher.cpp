#include "backends/cpu/evp_cipher.h"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <mutex>
#include <unordered_map>

#include "core/secret_bytes.h"
#include "core/stream_position.h"

namespace warpcrypt::cpu {
namespace {

// EVP_CIPHER_fetch is slow enough to matter for small messages, and its
// result is immutable, so each cipher is fetched once per process and freed
// at exit. Keyed by the name's address: the names are static table strings.
class FetchedCiphers {
 public:
  ~FetchedCiphers() {
    for (auto &[name, evp] : fetched_) EVP_CIPHER_free(evp);
  }
  const EVP_CIPHER *get(const char *openssl_name) {
    std::lock_guard lock(mutex_);
    auto [it, inserted] = fetched_.try_emplace(openssl_name, nullptr);
    if (inserted) it->second = EVP_CIPHER_fetch(nullptr, openssl_name, nullptr);
    return it->second;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<const char *, EVP_CIPHER *> fetched_;
};

// Each call on the calling thread: position the cipher, skip the keystream
// bytes before `position` within its block, and run.
class EvpRandomAccess final : public RandomAccessCipher {
 public:
  EvpRandomAccess(const wc_cipher &cipher, const EVP_CIPHER *evp, wc_direction direction, const KeyMaterial &key)
      : cipher_(cipher), evp_(evp), encrypt_(direction == WC_ENCRYPT), key_(key.key), iv_(key.iv) {}

  wc_backend last_backend() const override { return WC_BACKEND_CPU; }

  wc_status transform_at(uint64_t position, const uint8_t chain[16], const uint8_t *in, uint8_t *out,
                         size_t len) override {
    if (len == 0) return WC_OK;
    std::array<uint8_t, 16> start_iv{};
    size_t skip = 0;
    switch (cipher_.mode) {
      case Mode::ecb:
        break;
      case Mode::cbc:
      case Mode::cfb128:
      case Mode::cfb8:
        std::copy_n(chain, 16, start_iv.begin());
        break;
      case Mode::ctr:
        aes_ctr_counter_at(start_iv.data(), iv_.data(), position / kAesBlock);
        skip = position % kAesBlock;
        break;
      case Mode::keystream:  // ChaCha20
        chacha20_iv_at(start_iv.data(), iv_.data(), position / kStreamBlock);
        skip = position % kStreamBlock;
        break;
      case Mode::ofb:
        return WC_ERR_UNSUPPORTED;
    }
    CtxPtr ctx(EVP_CIPHER_CTX_new());
    if (!ctx) return WC_ERR_OUT_OF_MEMORY;
    const uint8_t *iv = cipher_.iv_len != 0 ? start_iv.data() : nullptr;
    if (EVP_CipherInit_ex2(ctx.get(), evp_, key_.data(), iv, encrypt_ ? 1 : 0, nullptr) != 1 ||
        EVP_CIPHER_CTX_set_padding(ctx.get(), 0) != 1) {
      return WC_ERR_CRYPTO_LIBRARY;
    }
    if (skip != 0) {
      // Encrypting zeros leaves raw keystream here: wiped before it goes.
      std::array<uint8_t, kStreamBlock> discard{};
      const bool skipped = update_all(ctx.get(), discard.data(), discard.data(), skip);
      secure_wipe(discard.data(), discard.size());
      if (!skipped) return WC_ERR_CRYPTO_LIBRARY;
    }
    return update_all(ctx.get(), in, out, len) ? WC_OK : WC_ERR_CRYPTO_LIBRARY;
  }

 private:
  const wc_cipher &cipher_;
  const EVP_CIPHER *evp_;
  bool encrypt_;
  SecretBytes key_;
  SecretBytes iv_;
};

class EvpSequential final : public SequentialCipher {
 public:
  explicit EvpSequential(CtxPtr ctx) : ctx_(std::move(ctx)) {}

  wc_status transform_next(const uint8_t *in, uint8_t *out, size_t len) override {
    return update_all(ctx_.get(), in, out, len) ? WC_OK : WC_ERR_CRYPTO_LIBRARY;
  }

 private:
  CtxPtr ctx_;  // EVP_CIPHER_CTX_free cleanses the key schedule
};

}  // namespace

const EVP_CIPHER *fetch_evp_cipher(const char *openssl_name) {
  static FetchedCiphers ciphers;
  return ciphers.get(openssl_name);
}

bool update_all(EVP_CIPHER_CTX *ctx, const uint8_t *in, uint8_t *out, size_t len) {
  constexpr size_t kMaxPiece = size_t{1} << 30;
  while (len > 0) {
    const size_t piece = std::min(len, kMaxPiece);
    int written = 0;
    if (EVP_CipherUpdate(ctx, out, &written, in, static_cast<int>(piece)) != 1) return false;
    in += piece;
    if (out != nullptr) out += piece;
    len -= piece;
  }
  return true;
}

std::unique_ptr<RandomAccessCipher> make_evp_random_access(const wc_cipher &cipher,
                                                           wc_direction direction,
                                                           const KeyMaterial &key) {
  const EVP_CIPHER *evp = fetch_evp_cipher(cipher.openssl_name);
  if (evp == nullptr) return nullptr;
  return std::make_unique<EvpRandomAccess>(cipher, evp, direction, key);
}

std::unique_ptr<SequentialCipher> make_evp_sequential(const wc_cipher &cipher,
                                                      wc_direction direction,
                                                      const KeyMaterial &key) {
  const EVP_CIPHER *evp = fetch_evp_cipher(cipher.openssl_name);
  CtxPtr ctx(EVP_CIPHER_CTX_new());
  if (evp == nullptr || !ctx) return nullptr;
  const uint8_t *iv = key.iv.empty() ? nullptr : key.iv.data();
  if (EVP_CipherInit_ex2(ctx.get(), evp, key.key.data(), iv, direction == WC_ENCRYPT ? 1 : 0,
                         nullptr) != 1 ||
      EVP_CIPHER_CTX_set_padding(ctx.get(), 0) != 1) {
    return nullptr;
  }
  return std::make_unique<EvpSequential>(std::move(ctx));
}

}  // namespace warpcrypt::cpu
