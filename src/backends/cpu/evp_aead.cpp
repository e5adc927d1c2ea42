#include "backends/cpu/evp_aead.h"

#include <openssl/err.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <functional>
#include <mutex>
#include <vector>

#include "backends/cpu/aes_gcm_vaes.h"
#include "backends/cpu/chacha20_poly1305_segmented.h"
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

// Contexts keyed once. The template holds OpenSSL's key schedule (and GCM's
// hash key); a message borrows a keyed context from the idle list, or a copy
// of the template when every one is in use, sets only its nonce, and gives
// it back, so no message sets the key again and no two threads share a
// context. Measured on the 2-core machine, AES-256-GCM, 64 B: 0.16 us a
// message from the idle list, 0.25 us copying the template per message
// (EVP_CIPHER_CTX_copy, as pyca/cryptography does), 0.54 us keying each.
class KeyedContexts {
 public:
  // One keyed context and the nonce length it was last set to, which is
  // set again only when a message's differs.
  struct Keyed {
    CtxPtr ctx;
    size_t nonce_len = 0;
  };

  // nullptr if OpenSSL refuses the cipher or the key.
  static std::unique_ptr<KeyedContexts> make(const EVP_CIPHER *evp, std::span<const uint8_t> key) {
    CtxPtr keyed(EVP_CIPHER_CTX_new());
    if (!keyed || EVP_CipherInit_ex2(keyed.get(), evp, key.data(), nullptr, 1, nullptr) != 1) return nullptr;
    return std::unique_ptr<KeyedContexts>(new KeyedContexts(std::move(keyed)));
  }

  // A keyed context, ready for a message under `nonce`; an empty one if
  // OpenSSL failed.
  Keyed take(bool encrypt, std::span<const uint8_t> nonce) const {
    Keyed keyed = idle_or_copy();
    EVP_CIPHER_CTX *ctx = keyed.ctx.get();
    if (ctx == nullptr) return keyed;
    if (keyed.nonce_len != nonce.size()) {
      // Set before the nonce itself: OpenSSL reads the nonce with the length it holds then.
      if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, static_cast<int>(nonce.size()), nullptr) != 1) return {};
      keyed.nonce_len = nonce.size();
    }
    if (EVP_CipherInit_ex2(ctx, nullptr, nullptr, nonce.data(), encrypt ? 1 : 0, nullptr) != 1) return {};
    return keyed;
  }

  // Back to the idle list once its message is done, a failed tag included
  // (the next nonce starts the context afresh). Callers free a context
  // OpenSSL failed on instead, whose state nothing vouches for.
  void give_back(Keyed keyed) const {
    std::lock_guard lock(mutex_);
    idle_.push_back(std::move(keyed));
  }

 private:
  explicit KeyedContexts(CtxPtr keyed) : template_(std::move(keyed)) {}

  Keyed idle_or_copy() const {
    {
      std::lock_guard lock(mutex_);
      if (!idle_.empty()) {
        Keyed keyed = std::move(idle_.back());
        idle_.pop_back();
        return keyed;
      }
    }
    CtxPtr copy(EVP_CIPHER_CTX_new());
    if (!copy || EVP_CIPHER_CTX_copy(copy.get(), template_.get()) != 1) return {};
    return {std::move(copy), static_cast<size_t>(EVP_CIPHER_CTX_get_iv_length(template_.get()))};
  }

  CtxPtr template_;  // never run: only copied
  mutable std::mutex mutex_;
  mutable std::vector<Keyed> idle_;  // at most as many as messages ever ran at once
};

// Messages run through OpenSSL's contexts, except GCM messages with 12-byte
// nonces on a CPU with VAES and VPCLMULQDQ, which run through `vaes_`
// (about three times OpenSSL 3.0's speed there; docs/lab-notes/
// performance-history.md). A lone such message, or a lone ChaCha20-Poly1305
// one, of kSegmentedMinLen or more is cut into segments over several
// workers (`vaes_` or `chacha_`).
class EvpAead final : public AeadCipher {
 public:
  EvpAead(std::unique_ptr<KeyedContexts> contexts, std::unique_ptr<const VaesGcmKey> vaes,
          std::unique_ptr<const ChaCha20Poly1305Key> chacha, unsigned threads)
      : contexts_(std::move(contexts)), vaes_(std::move(vaes)), chacha_(std::move(chacha)), threads_(threads) {}

  wc_backend backend() const override { return WC_BACKEND_CPU; }

  wc_status seal(std::span<const wc_aead_message> messages, size_t tag_len) const override {
    if (messages.size() == 1) {
      const wc_aead_message &m = messages[0];
      const unsigned workers = segment_workers(m);
      if (workers < 2) return seal_one(m, tag_len);
      if (chacha_) {
        return chacha_->seal_segmented(m.nonce, m.aad, m.aad_len, m.in, m.out, m.len, m.tag, tag_len, workers);
      }
      vaes_->seal_segmented(m.nonce, m.aad, m.aad_len, m.in, m.out, m.len, m.tag, tag_len, workers);
      return WC_OK;
    }
    std::atomic<wc_status> first_error{WC_OK};
    for_each_message(messages.size(), [&](size_t i) {
      const wc_status status = seal_one(messages[i], tag_len);
      wc_status expected = WC_OK;
      if (status != WC_OK) first_error.compare_exchange_strong(expected, status);
    });
    return first_error.load();
  }

  wc_status open(std::span<const wc_aead_message> messages, size_t tag_len, wc_status *results) const override {
    if (messages.size() == 1) {
      const wc_aead_message &m = messages[0];
      const unsigned workers = segment_workers(m);
      if (workers < 2) {
        results[0] = open_one(m, tag_len);
      } else if (chacha_) {
        results[0] = chacha_->open_segmented(m.nonce, m.aad, m.aad_len, m.in, m.out, m.len, m.tag, tag_len, workers);
      } else {
        results[0] = vaes_->open_segmented(m.nonce, m.aad, m.aad_len, m.in, m.out, m.len, m.tag, tag_len, workers);
      }
    } else {
      for_each_message(messages.size(), [&](size_t i) { results[i] = open_one(messages[i], tag_len); });
    }
    return combined_open_status({results, messages.size()});
  }

 private:
  // A batch on the pool, one message per task (EVP's GCM and
  // ChaCha20-Poly1305 are sequential); a single message skips the pool, on
  // the calling thread, unless segment_workers() cuts it up.
  void for_each_message(size_t count, const std::function<void(size_t)> &task) const {
    ThreadPool::instance().parallel_for(count, worker_budget(), task);
  }

  unsigned worker_budget() const { return threads_ == 0 ? usable_cpus() : threads_; }

  // A lone message this long runs in segments on several workers. Below it
  // one core finishes in some 15 us (~17 GB/s), the order of waking pool
  // threads and handing them work, so a split would gain little; the issue
  // (35) asks for speed from 1 MiB. A starting point, to be tuned on a
  // machine with many idle cores (the 2-core one cannot show the gain).
  static constexpr size_t kSegmentedMinLen = size_t{256} << 10;
  // No segment shorter than this, so each one's start-up (waking a thread,
  // its own first and last GHASH or Poly1305 step) stays a small part of
  // its work.
  static constexpr size_t kMinSegmentLen = size_t{64} << 10;

  // How many workers a lone message runs on: 1 (not segmented) unless a
  // segmented implementation takes it and it is at least kSegmentedMinLen
  // long. Batches never segment: their messages already fill the workers,
  // one each.
  unsigned segment_workers(const wc_aead_message &m) const {
    if (!has_segmented_path(m) || m.len < kSegmentedMinLen) return 1;
    const auto workers = static_cast<unsigned>(std::min<size_t>(worker_budget(), m.len / kMinSegmentLen));
    return workers >= min_segment_workers() ? workers : 1;
  }

  // Fewest workers worth a split. A VAES segment runs at the whole
  // message's speed, so two already gain. A ChaCha20-Poly1305 segment runs
  // at some 0.6 of OpenSSL's one-core speed (its Poly1305 is scalar here,
  // OpenSSL's AVX-512; 2-core machine, docs/lab-notes/
  // performance-history.md), so two or three workers would gain little, or
  // lose when another process holds a core.
  unsigned min_segment_workers() const { return chacha_ ? 4 : 2; }

  bool runs_on_vaes(const wc_aead_message &m) const { return vaes_ && m.nonce_len == kVaesGcmNonceLen; }

  // ChaCha20-Poly1305's nonce is always 12 bytes (the API checks it).
  bool has_segmented_path(const wc_aead_message &m) const { return runs_on_vaes(m) || chacha_ != nullptr; }

  wc_status seal_one(const wc_aead_message &m, size_t tag_len) const {
    if (runs_on_vaes(m)) {
      vaes_->seal(m.nonce, m.aad, m.aad_len, m.in, m.out, m.len, m.tag, tag_len);
      return WC_OK;
    }
    KeyedContexts::Keyed keyed = contexts_->take(true, {m.nonce, m.nonce_len});
    EVP_CIPHER_CTX *ctx = keyed.ctx.get();
    if (ctx == nullptr) return WC_ERR_CRYPTO_LIBRARY;
    if (!update_all(ctx, m.aad, nullptr, m.aad_len) || !update_all(ctx, m.in, m.out, m.len) ||
        !write_tag(ctx, m.tag, tag_len)) {
      return WC_ERR_CRYPTO_LIBRARY;
    }
    contexts_->give_back(std::move(keyed));
    return WC_OK;
  }

  wc_status open_one(const wc_aead_message &m, size_t tag_len) const {
    if (runs_on_vaes(m)) return vaes_->open(m.nonce, m.aad, m.aad_len, m.in, m.out, m.len, m.tag, tag_len);
    KeyedContexts::Keyed keyed = contexts_->take(false, {m.nonce, m.nonce_len});
    EVP_CIPHER_CTX *ctx = keyed.ctx.get();
    if (ctx == nullptr) return WC_ERR_CRYPTO_LIBRARY;
    if (!update_all(ctx, m.aad, nullptr, m.aad_len) || !update_all(ctx, m.in, m.out, m.len)) {
      return WC_ERR_CRYPTO_LIBRARY;
    }
    const wc_status status = check_tag(ctx, m.tag, tag_len);
    if (status == WC_OK || status == WC_ERR_AUTH) contexts_->give_back(std::move(keyed));
    return status;
  }

  std::unique_ptr<KeyedContexts> contexts_;
  std::unique_ptr<const VaesGcmKey> vaes_;             // null for ChaCha20-Poly1305 or without the instructions
  std::unique_ptr<const ChaCha20Poly1305Key> chacha_;  // null for AES-GCM
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
  std::unique_ptr<KeyedContexts> contexts = KeyedContexts::make(evp, key);
  if (!contexts) return nullptr;
  std::unique_ptr<const VaesGcmKey> vaes = aead.kind == AeadKind::gcm ? VaesGcmKey::make(key) : nullptr;
  std::unique_ptr<const ChaCha20Poly1305Key> chacha =
      aead.kind == AeadKind::chacha20_poly1305 ? ChaCha20Poly1305Key::make(key) : nullptr;
  return std::make_unique<EvpAead>(std::move(contexts), std::move(vaes), std::move(chacha), threads);
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
