#include "backends/cpu/evp_aead.h"

#include <openssl/err.h>

#include <array>
#include <atomic>
#include <functional>

#include "core/secret_bytes.h"
#include "backends/cpu/evp_cipher.h"
#include "core/cpu_budget.h"
#include "core/thread_pool.h"

namespace warpcrypt::cpu {
namespace {

// A context keyed for one message. The nonce length is set before the nonce
// itself, because OpenSSL reads the nonce with the length it holds then.
CtxPtr start_message(const EVP_CIPHER *evp, bool encrypt, std::span<const uint8_t> key,
                     std::span<const uint8_t> nonce) {
  CtxPtr ctx(EVP_CIPHER_CTX_new());
  const int enc = encrypt ? 1 : 0;
  if (!ctx || EVP_CipherInit_ex2(ctx.get(), evp, nullptr, nullptr, enc, nullptr) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_IVLEN, static_cast<int>(nonce.size()), nullptr) != 1 ||
      EVP_CipherInit_ex2(ctx.get(), nullptr, key.data(), nonce.data(), enc, nullptr) != 1) {
    return nullptr;
  }
  return ctx;
}

// Both constructions output nothing at the end; the buffer only satisfies
// EVP_CipherFinal_ex's contract.
bool finish(EVP_CIPHER_CTX *ctx) {
  std::array<uint8_t, EVP_MAX_BLOCK_LENGTH> none{};
  int written = 0;
  return EVP_CipherFinal_ex(ctx, none.data(), &written) == 1;
}

bool write_tag(EVP_CIPHER_CTX *ctx, uint8_t *tag, size_t tag_len) {
  return finish(ctx) && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, static_cast<int>(tag_len), tag) == 1;
}

// OpenSSL compares the tag with CRYPTO_memcmp, in constant time.
wc_status check_tag(EVP_CIPHER_CTX *ctx, const uint8_t *tag, size_t tag_len) {
  // The control call takes a non-const pointer but only reads the tag.
  if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, static_cast<int>(tag_len), const_cast<uint8_t *>(tag)) != 1) {
    return WC_ERR_CRYPTO_LIBRARY;
  }
  if (finish(ctx)) return WC_OK;
  ERR_clear_error();
  return WC_ERR_AUTH;
}

class EvpAead final : public AeadCipher {
 public:
  EvpAead(const EVP_CIPHER *evp, std::span<const uint8_t> key, unsigned threads)
      : evp_(evp), key_(key), threads_(threads) {}

  wc_backend backend() const override { return WC_BACKEND_CPU; }

  wc_status seal(std::span<const wc_aead_message> messages, size_t tag_len) const override {
    std::atomic<wc_status> first_error{WC_OK};
    for_each_message(messages.size(), [&](size_t i) {
      const wc_status status = seal_one(messages[i], tag_len);
      wc_status expected = WC_OK;
      if (status != WC_OK) first_error.compare_exchange_strong(expected, status);
    });
    return first_error.load();
  }

  wc_status open(std::span<const wc_aead_message> messages, size_t tag_len, wc_status *results) const override {
    for_each_message(messages.size(), [&](size_t i) { results[i] = open_one(messages[i], tag_len); });
    return combined_open_status({results, messages.size()});
  }

 private:
  // A single message runs on the calling thread; a batch on the pool, one
  // message per task (EVP's GCM and ChaCha20-Poly1305 are sequential).
  void for_each_message(size_t count, const std::function<void(size_t)> &task) const {
    const unsigned workers = threads_ == 0 ? usable_cpus() : threads_;
    ThreadPool::instance().parallel_for(count, workers, task);
  }

  std::span<const uint8_t> key() const { return {key_.data(), key_.size()}; }

  wc_status seal_one(const wc_aead_message &m, size_t tag_len) const {
    const CtxPtr ctx = start_message(evp_, true, key(), {m.nonce, m.nonce_len});
    if (!ctx) return WC_ERR_CRYPTO_LIBRARY;
    const bool ok = update_all(ctx.get(), m.aad, nullptr, m.aad_len) && update_all(ctx.get(), m.in, m.out, m.len) &&
                    write_tag(ctx.get(), m.tag, tag_len);
    return ok ? WC_OK : WC_ERR_CRYPTO_LIBRARY;
  }

  wc_status open_one(const wc_aead_message &m, size_t tag_len) const {
    const CtxPtr ctx = start_message(evp_, false, key(), {m.nonce, m.nonce_len});
    if (!ctx) return WC_ERR_CRYPTO_LIBRARY;
    if (!update_all(ctx.get(), m.aad, nullptr, m.aad_len) || !update_all(ctx.get(), m.in, m.out, m.len)) {
      return WC_ERR_CRYPTO_LIBRARY;
    }
    return check_tag(ctx.get(), m.tag, tag_len);
  }

  const EVP_CIPHER *evp_;
  SecretBytes key_;
  unsigned threads_;
};

class EvpAeadStream final : public AeadStream {
 public:
  explicit EvpAeadStream(CtxPtr ctx) : ctx_(std::move(ctx)) {}

  wc_status absorb_aad(const uint8_t *aad, size_t len) override {
    return update_all(ctx_.get(), aad, nullptr, len) ? WC_OK : WC_ERR_CRYPTO_LIBRARY;
  }
  wc_status update(const uint8_t *in, uint8_t *out, size_t len) override {
    return update_all(ctx_.get(), in, out, len) ? WC_OK : WC_ERR_CRYPTO_LIBRARY;
  }
  wc_status seal_final(uint8_t *tag, size_t tag_len) override {
    return write_tag(ctx_.get(), tag, tag_len) ? WC_OK : WC_ERR_CRYPTO_LIBRARY;
  }
  wc_status open_final(const uint8_t *tag, size_t tag_len) override { return check_tag(ctx_.get(), tag, tag_len); }

 private:
  CtxPtr ctx_;  // EVP_CIPHER_CTX_free cleanses the key schedule
};

}  // namespace

std::unique_ptr<AeadCipher> make_evp_aead(const wc_aead &aead, std::span<const uint8_t> key, unsigned threads) {
  const EVP_CIPHER *evp = fetch_evp_cipher(aead.openssl_name);
  if (evp == nullptr) return nullptr;
  return std::make_unique<EvpAead>(evp, key, threads);
}

std::unique_ptr<AeadStream> make_evp_aead_stream(const wc_aead &aead, wc_direction direction,
                                                 std::span<const uint8_t> key, std::span<const uint8_t> nonce) {
  const EVP_CIPHER *evp = fetch_evp_cipher(aead.openssl_name);
  if (evp == nullptr) return nullptr;
  CtxPtr ctx = start_message(evp, direction == WC_ENCRYPT, key, nonce);
  if (!ctx) return nullptr;
  return std::make_unique<EvpAeadStream>(std::move(ctx));
}

}  // namespace warpcrypt::cpu
