// The C API entry points: argument checks, then the stream state, the range
// planner or the CPU helpers. Nothing here knows how a cipher runs.
#include <algorithm>
#include <cstring>
#include <memory>

#include "api/arguments.h"
#include "core/memory_ranges.h"
#include "engine/placement.h"
#include "core/random_access.h"
#include "core/stream_state.h"
#include "core/host_crypto.h"
#include "engine/jobs.h"

using warpcrypt::key_material;
using warpcrypt::KeyMaterial;
using warpcrypt::options_or_default;
using warpcrypt::overlaps_partially;
using warpcrypt::StreamState;

struct wc_ctx {
  std::unique_ptr<StreamState> state;
};

namespace {

// One-shot work on host buffers. `job` set: through the engine's jobs, with
// progress, cancellation and statistics; else the plain stream state, which
// costs nothing per call beyond the cipher itself.
wc_status crypt(wc_direction direction, const wc_options *options, const wc_cipher *cipher, wc_job *job,
                bool as_job, uint8_t *out, size_t out_cap, size_t *out_len, const uint8_t *key, size_t key_len,
                const uint8_t *iv, size_t iv_len, const uint8_t *in, size_t in_len) {
  if (out_len == nullptr) return WC_ERR_INVALID_ARGUMENT;
  *out_len = 0;
  if (cipher == nullptr) return WC_ERR_UNKNOWN_CIPHER;
  if (out == nullptr && out_cap != 0) return WC_ERR_INVALID_ARGUMENT;
  const wc_options resolved = options_or_default(options);
  const size_t needed = direction == WC_ENCRYPT ? wc_encrypt_bound(cipher, in_len) : in_len;
  const size_t touched = std::min(out_cap, needed);
  wc_status status = warpcrypt::check_key_and_iv(*cipher, key, key_len, iv, iv_len);
  if (status == WC_OK && in == nullptr && in_len != 0) status = WC_ERR_INVALID_ARGUMENT;
  if (status == WC_OK && overlaps_partially(out, touched, in, in_len)) status = WC_ERR_INVALID_ARGUMENT;
  if (status == WC_OK && out_cap < needed) status = WC_ERR_OUTPUT_TOO_SMALL;
  const KeyMaterial material = key_material(key, key_len, iv, iv_len);

  size_t produced = 0;
  if (as_job) {
    warpcrypt::engine::JobMonitor monitor(job, in_len);
    std::optional<warpcrypt::engine::Placement> plan;
    if (status == WC_OK) {
      status = warpcrypt::engine::plan_buffer_job(&plan, resolved, *cipher, direction, in, in_len, out, monitor);
    }
    if (status == WC_OK) {
      status = warpcrypt::engine::run_buffer_job(*plan, *cipher, direction, material, out, out_cap, &produced, in,
                                                 in_len, monitor);
    }
    if (status != WC_OK) monitor.fail(status);
    status = monitor.finish(status == WC_OK ? in_len : 0, status == WC_OK ? produced : 0);
  } else {
    std::unique_ptr<StreamState> state;
    if (status == WC_OK) status = warpcrypt::engine::make_stream_state(&state, resolved, *cipher, direction, material);
    size_t tail = 0;
    if (status == WC_OK) status = state->update(out, out_cap, &produced, in, in_len);
    if (status == WC_OK) status = state->finish(out + produced, out_cap - produced, &tail);
    produced += tail;
  }
  if (status != WC_OK) {
    wc_memzero(out, touched);
    return status;
  }
  *out_len = produced;
  return WC_OK;
}

}  // namespace

extern "C" {

size_t wc_encrypt_bound(const wc_cipher *cipher, size_t in_len) {
  if (cipher == nullptr) return 0;
  return warpcrypt::is_padded(*cipher) ? (in_len / 16 + 1) * 16 : in_len;
}

wc_status wc_encrypt(const wc_options *options, const wc_cipher *cipher, uint8_t *out,
                     size_t out_cap, size_t *out_len, const uint8_t *key, size_t key_len,
                     const uint8_t *iv, size_t iv_len, const uint8_t *in, size_t in_len) {
  return crypt(WC_ENCRYPT, options, cipher, nullptr, false, out, out_cap, out_len, key, key_len, iv, iv_len, in,
               in_len);
}

wc_status wc_decrypt(const wc_options *options, const wc_cipher *cipher, uint8_t *out,
                     size_t out_cap, size_t *out_len, const uint8_t *key, size_t key_len,
                     const uint8_t *iv, size_t iv_len, const uint8_t *in, size_t in_len) {
  return crypt(WC_DECRYPT, options, cipher, nullptr, false, out, out_cap, out_len, key, key_len, iv, iv_len, in,
               in_len);
}

wc_status wc_encrypt_buffer(const wc_options *options, const wc_cipher *cipher, wc_job *job, uint8_t *out,
                            size_t out_cap, size_t *out_len, const uint8_t *key, size_t key_len, const uint8_t *iv,
                            size_t iv_len, const uint8_t *in, size_t in_len) {
  return crypt(WC_ENCRYPT, options, cipher, job, true, out, out_cap, out_len, key, key_len, iv, iv_len, in, in_len);
}

wc_status wc_decrypt_buffer(const wc_options *options, const wc_cipher *cipher, wc_job *job, uint8_t *out,
                            size_t out_cap, size_t *out_len, const uint8_t *key, size_t key_len, const uint8_t *iv,
                            size_t iv_len, const uint8_t *in, size_t in_len) {
  return crypt(WC_DECRYPT, options, cipher, job, true, out, out_cap, out_len, key, key_len, iv, iv_len, in, in_len);
}

wc_status wc_ctx_new(wc_ctx **ctx, const wc_options *options, const wc_cipher *cipher,
                     wc_direction direction, const uint8_t *key, size_t key_len,
                     const uint8_t *iv, size_t iv_len) {
  if (ctx == nullptr) return WC_ERR_INVALID_ARGUMENT;
  *ctx = nullptr;
  if (cipher == nullptr) return WC_ERR_UNKNOWN_CIPHER;
  if (direction != WC_ENCRYPT && direction != WC_DECRYPT) return WC_ERR_INVALID_ARGUMENT;
  wc_status status = warpcrypt::check_key_and_iv(*cipher, key, key_len, iv, iv_len);
  if (status != WC_OK) return status;
  auto created = std::unique_ptr<wc_ctx>(new (std::nothrow) wc_ctx);
  if (!created) return WC_ERR_OUT_OF_MEMORY;
  status = warpcrypt::engine::make_stream_state(&created->state, options_or_default(options), *cipher, direction,
                               key_material(key, key_len, iv, iv_len));
  if (status != WC_OK) return status;
  *ctx = created.release();
  return WC_OK;
}

wc_status wc_ctx_update(wc_ctx *ctx, uint8_t *out, size_t out_cap, size_t *out_len,
                        const uint8_t *in, size_t in_len) {
  if (out_len != nullptr) *out_len = 0;
  if (ctx == nullptr || out_len == nullptr || (in == nullptr && in_len != 0) ||
      (out == nullptr && out_cap != 0)) {
    return WC_ERR_INVALID_ARGUMENT;
  }
  if (overlaps_partially(out, out_cap, in, in_len)) return WC_ERR_INVALID_ARGUMENT;
  const wc_status status = ctx->state->update(out, out_cap, out_len, in, in_len);
  if (status != WC_OK) wc_memzero(out, std::min(out_cap, ctx->state->update_bound(in_len)));
  return status;
}

wc_status wc_ctx_final(wc_ctx *ctx, uint8_t *out, size_t out_cap, size_t *out_len) {
  if (out_len != nullptr) *out_len = 0;
  if (ctx == nullptr || out_len == nullptr || (out == nullptr && out_cap != 0)) {
    return WC_ERR_INVALID_ARGUMENT;
  }
  const wc_status status = ctx->state->finish(out, out_cap, out_len);
  if (status != WC_OK) wc_memzero(out, std::min<size_t>(out_cap, WC_MAX_BLOCK_LEN));
  return status;
}

size_t wc_ctx_update_bound(const wc_ctx *ctx, size_t in_len) {
  return ctx != nullptr ? ctx->state->update_bound(in_len) : 0;
}

wc_backend wc_ctx_backend(const wc_ctx *ctx) {
  return ctx != nullptr ? ctx->state->backend() : WC_BACKEND_AUTO;
}

void wc_ctx_free(wc_ctx *ctx) { delete ctx; }

wc_status wc_range_window(const wc_cipher *cipher,
                          uint64_t *window_offset, uint64_t *window_len, uint64_t ciphertext_len,
                          uint64_t offset, uint64_t length) {
  if (window_offset == nullptr || window_len == nullptr) return WC_ERR_INVALID_ARGUMENT;
  *window_offset = *window_len = 0;
  if (cipher == nullptr) return WC_ERR_UNKNOWN_CIPHER;
  warpcrypt::RangePlan plan;
  const wc_status status = warpcrypt::plan_range(&plan, *cipher, ciphertext_len, offset, length);
  if (status != WC_OK) return status;
  *window_offset = plan.window_begin;
  *window_len = plan.window_end - plan.window_begin;
  return WC_OK;
}

wc_status wc_decrypt_range(const wc_options *options, const wc_cipher *cipher, uint8_t *out,
                           size_t out_cap, size_t *out_len, const uint8_t *key, size_t key_len,
                           const uint8_t *iv, size_t iv_len, const uint8_t *window,
                           size_t window_len, uint64_t ciphertext_len, uint64_t offset,
                           uint64_t length) {
  if (out_len == nullptr) return WC_ERR_INVALID_ARGUMENT;
  *out_len = 0;
  if (cipher == nullptr) return WC_ERR_UNKNOWN_CIPHER;
  if ((window == nullptr && window_len != 0) || (out == nullptr && out_cap != 0)) {
    return WC_ERR_INVALID_ARGUMENT;
  }
  const wc_options resolved = options_or_default(options);
  warpcrypt::RangePlan plan;
  wc_status status = warpcrypt::check_key_and_iv(*cipher, key, key_len, iv, iv_len);
  if (status == WC_OK) {
    status = warpcrypt::plan_range(&plan, *cipher, ciphertext_len, offset, length);
  }
  if (status == WC_OK && window_len != plan.window_end - plan.window_begin) status = WC_ERR_RANGE;

  warpcrypt::BackendCipher backend_cipher;
  if (status == WC_OK) {
    status = warpcrypt::engine::make_backend_cipher(&backend_cipher, resolved, *cipher, WC_DECRYPT,
                                            key_material(key, key_len, iv, iv_len));
  }
  if (status == WC_OK) {
    status = warpcrypt::decrypt_planned_range(*backend_cipher.random_access, *cipher, plan, out,
                                              out_cap, out_len, iv, window);
  }
  if (status != WC_OK) wc_memzero(out, std::min<uint64_t>(out_cap, length));
  return status;
}

wc_status wc_derive_key_iv(const wc_cipher *cipher, uint8_t *key, size_t key_len, uint8_t *iv,
                           size_t iv_len, wc_kdf kdf, const char *digest, uint32_t iterations,
                           const uint8_t *passphrase, size_t passphrase_len, const uint8_t *salt,
                           size_t salt_len) {
  if (cipher == nullptr) return WC_ERR_UNKNOWN_CIPHER;
  if (key_len != cipher->key_len) return WC_ERR_KEY_LEN;
  if (iv_len != cipher->iv_len) return WC_ERR_IV_LEN;
  if (key == nullptr || (iv == nullptr && iv_len != 0) || digest == nullptr ||
      (passphrase == nullptr && passphrase_len != 0) || (salt == nullptr && salt_len != 0) ||
      (kdf != WC_KDF_PBKDF2 && kdf != WC_KDF_LEGACY)) {
    return WC_ERR_INVALID_ARGUMENT;
  }
  uint8_t key_and_iv[WC_MAX_KEY_LEN + WC_MAX_IV_LEN];
  const std::span<uint8_t> derived(key_and_iv, key_len + iv_len);
  const wc_status status = warpcrypt::kHostCrypto.derive_key_iv(derived, kdf, digest, iterations,
                                                                {passphrase, passphrase_len}, {salt, salt_len});
  if (status == WC_OK) {
    std::memcpy(key, key_and_iv, key_len);
    if (iv_len != 0) std::memcpy(iv, key_and_iv + key_len, iv_len);
  } else {
    wc_memzero(key, key_len);
    wc_memzero(iv, iv_len);
  }
  wc_memzero(key_and_iv, sizeof key_and_iv);
  return status;
}

wc_status wc_hkdf(const char *digest, uint8_t *out, size_t out_len, const uint8_t *secret, size_t secret_len,
                  const uint8_t *salt, size_t salt_len, const uint8_t *info, size_t info_len) {
  if (digest == nullptr || out == nullptr || (secret == nullptr && secret_len != 0) ||
      (salt == nullptr && salt_len != 0) || (info == nullptr && info_len != 0)) {
    return WC_ERR_INVALID_ARGUMENT;
  }
  const wc_status status =
      warpcrypt::kHostCrypto.hkdf({out, out_len}, digest, {secret, secret_len}, {salt, salt_len}, {info, info_len});
  if (status != WC_OK) wc_memzero(out, out_len);
  return status;
}

wc_status wc_hmac(const char *digest, uint8_t *out, size_t out_len, const uint8_t *key, size_t key_len,
                  const uint8_t *message, size_t message_len) {
  if (digest == nullptr || out == nullptr || (key == nullptr && key_len != 0) ||
      (message == nullptr && message_len != 0)) {
    return WC_ERR_INVALID_ARGUMENT;
  }
  const wc_status status = warpcrypt::kHostCrypto.hmac({out, out_len}, digest, {key, key_len}, {message, message_len});
  if (status != WC_OK) wc_memzero(out, out_len);
  return status;
}

wc_status wc_random_bytes(uint8_t *out, size_t out_len) {
  if (out == nullptr && out_len != 0) return WC_ERR_INVALID_ARGUMENT;
  return warpcrypt::kHostCrypto.random->fill({out, out_len});
}

}  // extern "C"
