// The AEAD entry points of the C API: argument checks, then an AEAD bound
// to the key (engine::resolve_aead_spec picks its backend) that runs the
// messages, and zeroing whatever a failed call would have written. A
// wc_aead_key keeps that AEAD across calls; the one-shot calls build one for
// the call.
#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "api/arguments.h"
#include "core/aead_backend.h"
#include "core/backend_tables.h"
#include "core/memory_ranges.h"
#include "core/secret_bytes.h"
#include "engine/placement.h"

using warpcrypt::AeadCipher;
using warpcrypt::AeadStream;
using warpcrypt::kCudaBackend;

struct wc_aead_ctx {
  std::unique_ptr<AeadStream> stream;
  const wc_aead *aead = nullptr;
  wc_direction direction = WC_ENCRYPT;
  uint64_t message_len = 0;
  bool message_started = false;  // associated data is no longer accepted
  bool dead = false;             // after a final or an error
};

struct wc_aead_key {
  const wc_aead *aead = nullptr;
  // Whether its backend reaches device memory (the placement's rule, read
  // when the key is made, without counting devices).
  bool reaches_device_memory = false;
  std::unique_ptr<AeadCipher> host;  // host-memory messages, on the key's backend
  // Device-memory messages where `host` is not the GPU's and the placement
  // lets the key have one (engine::key_has_device_aead): built at the first
  // device call, so that a key that never sees device memory never starts
  // CUDA (a tenth of a second or more), and GCM's constants are derived once.
  std::optional<warpcrypt::SecretBytes> device_key;
  mutable std::once_flag device_once;
  mutable std::unique_ptr<AeadCipher> device;
  mutable wc_status device_status = WC_OK;

  // The AEAD that runs device memory: the GPU's, or the placement's
  // refusal (no device; the cpu backend).
  wc_status for_device(const AeadCipher **out) const {
    if (host->backend() == WC_BACKEND_GPU) {
      *out = host.get();
      return WC_OK;
    }
    const wc_status placed = warpcrypt::engine::check_device_memory(reaches_device_memory);
    if (placed != WC_OK) return placed;
    std::call_once(device_once, [this] {
      device_status = kCudaBackend.make_aead(&device, *aead, {device_key->data(), device_key->size()}, {});
    });
    if (device_status != WC_OK) return device_status;
    *out = device.get();
    return WC_OK;
  }
};

namespace {

// What a failed call leaves behind: no ciphertext, plaintext or tag.
void zero_outputs(const wc_aead_message &m, size_t tag_len, bool tag_is_output) {
  wc_memzero(m.out, m.len);
  if (tag_is_output) wc_memzero(m.tag, tag_len);
}

// `verified`: the verdicts a device opening writes, which may overlap
// nothing either; null elsewhere.
wc_status check_messages(const wc_aead &aead, const wc_aead_message *messages, size_t count, size_t tag_len,
                         bool seal, const int32_t *verified = nullptr) {
  if (messages == nullptr && count != 0) return WC_ERR_INVALID_ARGUMENT;
  wc_status status = WC_OK;
  for (size_t i = 0; i < count && status == WC_OK; ++i) status = warpcrypt::check_aead_message(aead, messages[i], tag_len);
  if (status == WC_OK && warpcrypt::find_batch_overlap({messages, count}, tag_len, seal, verified)) {
    status = WC_ERR_INVALID_ARGUMENT;
  }
  return status;
}

wc_status check_all(const wc_aead &aead, const wc_aead_message *messages, size_t count, size_t tag_len,
                    const uint8_t *key, size_t key_len, bool seal, const int32_t *verified = nullptr) {
  const wc_status status = warpcrypt::check_aead_key(aead, key, key_len);
  return status == WC_OK ? check_messages(aead, messages, count, tag_len, seal, verified) : status;
}

// The AEAD a one-shot host-memory call runs on.
wc_status make_cipher(std::unique_ptr<AeadCipher> *out, const wc_options *options, const wc_aead &aead,
                      const uint8_t *key, size_t key_len) {
  warpcrypt::engine::LaneSpec spec;
  const wc_status status = warpcrypt::engine::resolve_aead_spec(&spec, warpcrypt::options_or_default(options));
  return status == WC_OK ? warpcrypt::engine::make_aead(out, spec, aead, {key, key_len}) : status;
}

// Seals checked messages; on failure every output and tag is zeroed.
wc_status seal_messages(const AeadCipher &cipher, std::span<const wc_aead_message> messages, size_t tag_len) {
  const wc_status status = cipher.seal(messages, tag_len);
  if (status != WC_OK) {
    for (const wc_aead_message &m : messages) zero_outputs(m, tag_len, true);
  }
  return status;
}

// Opens checked messages into results; zeroes the output of each message
// that failed, and of all of them when something other than a tag failed.
wc_status open_messages(const AeadCipher &cipher, std::span<const wc_aead_message> messages, size_t tag_len,
                        wc_status *results) {
  const wc_status status = cipher.open(messages, tag_len, results);
  for (size_t i = 0; i < messages.size(); ++i) {
    if (status != WC_OK && status != WC_ERR_AUTH) results[i] = status;
    if (results[i] != WC_OK) zero_outputs(messages[i], tag_len, false);
  }
  return status;
}

wc_status seal_with_key(const wc_options *options, const wc_aead &aead, std::span<const wc_aead_message> messages,
                        size_t tag_len, const uint8_t *key, size_t key_len) {
  std::unique_ptr<AeadCipher> cipher;
  const wc_status status = make_cipher(&cipher, options, aead, key, key_len);
  if (status != WC_OK) {
    for (const wc_aead_message &m : messages) zero_outputs(m, tag_len, true);
    return status;
  }
  return seal_messages(*cipher, messages, tag_len);
}

wc_status open_with_key(const wc_options *options, const wc_aead &aead, std::span<const wc_aead_message> messages,
                        size_t tag_len, const uint8_t *key, size_t key_len, wc_status *results) {
  std::unique_ptr<AeadCipher> cipher;
  const wc_status status = make_cipher(&cipher, options, aead, key, key_len);
  if (status != WC_OK) {
    for (size_t i = 0; i < messages.size(); ++i) {
      results[i] = status;
      zero_outputs(messages[i], tag_len, false);
    }
    return status;
  }
  return open_messages(*cipher, messages, tag_len, results);
}

// One-shot calls share the batch path with a batch of one.
wc_status check_one(const wc_aead &aead, const wc_aead_message &message, size_t out_cap, size_t tag_len,
                    const uint8_t *key, size_t key_len, bool seal) {
  const wc_status status = check_all(aead, &message, 1, tag_len, key, key_len, seal);
  if (status != WC_OK) return status;
  return out_cap < message.len ? WC_ERR_OUTPUT_TOO_SMALL : WC_OK;
}

// Opening device memory writes each message's verdict there, which needs
// somewhere to write them.
wc_status check_verdicts(bool seal, const int32_t *verified, size_t count) {
  return !seal && verified == nullptr && count != 0 ? WC_ERR_INVALID_ARGUMENT : WC_OK;
}

// A key's messages in device memory: the checks, then its GPU AEAD.
wc_status queue_on_key(const wc_aead_key *key, const wc_aead_message *messages, size_t count, size_t tag_len,
                       bool seal, int32_t *verified, wc_cuda_stream stream) {
  if (key == nullptr) return WC_ERR_INVALID_ARGUMENT;
  wc_status status = check_messages(*key->aead, messages, count, tag_len, seal, verified);
  if (status == WC_OK) status = check_verdicts(seal, verified, count);
  if (status != WC_OK) return status;
  const AeadCipher *cipher = nullptr;
  status = key->for_device(&cipher);
  return status == WC_OK ? cipher->queue_device({messages, count}, tag_len, seal, verified, stream, {}) : status;
}

// A key's strided batch: the checks, then its GPU AEAD.
wc_status queue_strided(const wc_aead_key *key, const wc_aead_strided *batch, size_t tag_len, bool seal,
                        int32_t *verified, wc_cuda_stream stream) {
  if (key == nullptr || batch == nullptr) return WC_ERR_INVALID_ARGUMENT;
  const wc_status status = warpcrypt::check_strided_batch(*key->aead, *batch, tag_len, seal, verified);
  if (status != WC_OK || batch->count == 0) return status;
  const AeadCipher *cipher = nullptr;
  const wc_status placed = key->for_device(&cipher);
  if (placed != WC_OK) return placed;
  return cipher->queue_device_strided(*batch, tag_len, seal, verified, stream);
}

// The one-shot device calls: the checks, then an AEAD for this call alone,
// run where the messages live.
wc_status queue_device_call(const wc_aead *aead, std::span<const wc_aead_message> messages,
                            size_t tag_len, const uint8_t *key, size_t key_len, bool seal, int32_t *verified,
                            wc_cuda_stream stream) {
  if (aead == nullptr) return WC_ERR_UNKNOWN_CIPHER;
  wc_status status = check_all(*aead, messages.data(), messages.size(), tag_len, key, key_len, seal, verified);
  if (status == WC_OK) status = check_verdicts(seal, verified, messages.size());
  if (status != WC_OK) return status;
  // Device memory runs where it lives, by the placement's rule (no options
  // here: the default's).
  status = warpcrypt::engine::check_device_memory(warpcrypt::options_or_default(nullptr));
  if (status != WC_OK) return status;
  std::unique_ptr<AeadCipher> cipher;
  status = kCudaBackend.make_aead(&cipher, *aead, {key, key_len}, {});
  return status == WC_OK ? cipher->queue_device(messages, tag_len, seal, verified, stream, {}) : status;
}

wc_status kill(wc_aead_ctx *ctx, wc_status status) {
  ctx->dead = true;
  ctx->stream.reset();
  return status;
}

}  // namespace

extern "C" {

wc_status wc_aead_seal(const wc_options *options, const wc_aead *aead, uint8_t *out, size_t out_cap, size_t *out_len,
                       uint8_t *tag, size_t tag_len, const uint8_t *key, size_t key_len, const uint8_t *nonce,
                       size_t nonce_len, const uint8_t *aad, size_t aad_len, const uint8_t *in, size_t in_len) {
  if (out_len == nullptr) return WC_ERR_INVALID_ARGUMENT;
  *out_len = 0;
  if (aead == nullptr) return WC_ERR_UNKNOWN_CIPHER;
  if (out == nullptr && out_cap != 0) return WC_ERR_INVALID_ARGUMENT;
  const wc_aead_message message{out, in, in_len, nonce, nonce_len, aad, aad_len, tag};
  wc_status status = check_one(*aead, message, out_cap, tag_len, key, key_len, true);
  if (status == WC_OK) status = seal_with_key(options, *aead, {&message, 1}, tag_len, key, key_len);
  if (status != WC_OK) {
    wc_memzero(out, std::min(out_cap, in_len));
    if (warpcrypt::aead_tag_len_valid(tag_len)) wc_memzero(tag, tag_len);
    return status;
  }
  *out_len = in_len;
  return WC_OK;
}

wc_status wc_aead_open(const wc_options *options, const wc_aead *aead, uint8_t *out, size_t out_cap, size_t *out_len,
                       const uint8_t *key, size_t key_len, const uint8_t *nonce, size_t nonce_len, const uint8_t *aad,
                       size_t aad_len, const uint8_t *in, size_t in_len, const uint8_t *tag, size_t tag_len) {
  if (out_len == nullptr) return WC_ERR_INVALID_ARGUMENT;
  *out_len = 0;
  if (aead == nullptr) return WC_ERR_UNKNOWN_CIPHER;
  if (out == nullptr && out_cap != 0) return WC_ERR_INVALID_ARGUMENT;
  // The message's tag member is written by sealing only; opening reads it.
  const wc_aead_message message{out, in, in_len, nonce, nonce_len, aad, aad_len, const_cast<uint8_t *>(tag)};
  wc_status status = check_one(*aead, message, out_cap, tag_len, key, key_len, false);
  wc_status result = WC_OK;
  if (status == WC_OK) status = open_with_key(options, *aead, {&message, 1}, tag_len, key, key_len, &result);
  if (status != WC_OK) {
    wc_memzero(out, std::min(out_cap, in_len));
    return status;
  }
  *out_len = in_len;
  return WC_OK;
}

wc_status wc_aead_seal_batch(const wc_options *options, const wc_aead *aead, const wc_aead_message *messages,
                             size_t count, size_t tag_len, const uint8_t *key, size_t key_len) {
  if (aead == nullptr) return WC_ERR_UNKNOWN_CIPHER;
  const wc_status status = check_all(*aead, messages, count, tag_len, key, key_len, true);
  if (status != WC_OK || count == 0) return status;
  return seal_with_key(options, *aead, {messages, count}, tag_len, key, key_len);
}

wc_status wc_aead_open_batch(const wc_options *options, const wc_aead *aead, wc_status *results,
                             const wc_aead_message *messages, size_t count, size_t tag_len, const uint8_t *key,
                             size_t key_len) {
  if (aead == nullptr) return WC_ERR_UNKNOWN_CIPHER;
  const wc_status status = check_all(*aead, messages, count, tag_len, key, key_len, false);
  if (status != WC_OK || count == 0) return status;
  std::vector<wc_status> own_results;
  if (results == nullptr) {
    own_results.resize(count);
    results = own_results.data();
  }
  return open_with_key(options, *aead, {messages, count}, tag_len, key, key_len, results);
}

int wc_aead_find_overlap(wc_aead_overlap *overlap, const wc_aead_message *messages, size_t count, size_t tag_len,
                         wc_direction direction, const int32_t *verified) {
  if (messages == nullptr) return 0;
  const std::optional<wc_aead_overlap> found =
      warpcrypt::find_batch_overlap({messages, count}, tag_len, direction == WC_ENCRYPT, verified);
  if (found && overlap != nullptr) *overlap = *found;
  return found.has_value();
}

wc_status wc_aead_key_new(wc_aead_key **out, const wc_options *options, const wc_aead *aead, const uint8_t *key,
                          size_t key_len) {
  if (out == nullptr) return WC_ERR_INVALID_ARGUMENT;
  *out = nullptr;
  if (aead == nullptr) return WC_ERR_UNKNOWN_CIPHER;
  wc_status status = warpcrypt::check_aead_key(*aead, key, key_len);
  if (status != WC_OK) return status;
  auto created = std::unique_ptr<wc_aead_key>(new (std::nothrow) wc_aead_key);
  if (!created) return WC_ERR_OUT_OF_MEMORY;
  created->aead = aead;
  const wc_options placed = warpcrypt::options_or_default(options);
  created->reaches_device_memory = warpcrypt::engine::reaches_device_memory(placed);
  status = make_cipher(&created->host, options, *aead, key, key_len);
  if (status != WC_OK) return status;
  if (warpcrypt::engine::key_has_device_aead(placed)) {
    created->device_key.emplace(std::span<const uint8_t>{key, key_len});
  }
  *out = created.release();
  return WC_OK;
}

wc_backend wc_aead_key_backend(const wc_aead_key *key) {
  return key != nullptr ? key->host->backend() : WC_BACKEND_AUTO;
}

wc_status wc_aead_key_seal(const wc_aead_key *key, const wc_aead_message *messages, size_t count, size_t tag_len) {
  if (key == nullptr) return WC_ERR_INVALID_ARGUMENT;
  const wc_status status = check_messages(*key->aead, messages, count, tag_len, true);
  if (status != WC_OK || count == 0) return status;
  return seal_messages(*key->host, {messages, count}, tag_len);
}

wc_status wc_aead_key_open(const wc_aead_key *key, wc_status *results, const wc_aead_message *messages, size_t count,
                           size_t tag_len) {
  if (key == nullptr) return WC_ERR_INVALID_ARGUMENT;
  const wc_status status = check_messages(*key->aead, messages, count, tag_len, false);
  if (status != WC_OK || count == 0) return status;
  std::vector<wc_status> own_results;
  if (results == nullptr) {
    own_results.resize(count);
    results = own_results.data();
  }
  return open_messages(*key->host, {messages, count}, tag_len, results);
}

wc_status wc_aead_key_seal_device_async(const wc_aead_key *key, const wc_aead_message *messages, size_t count,
                                        size_t tag_len, wc_cuda_stream stream) {
  return queue_on_key(key, messages, count, tag_len, true, nullptr, stream);
}

wc_status wc_aead_key_open_device_async(const wc_aead_key *key, int32_t *verified, const wc_aead_message *messages,
                                        size_t count, size_t tag_len, wc_cuda_stream stream) {
  return queue_on_key(key, messages, count, tag_len, false, verified, stream);
}

wc_status wc_aead_key_seal_strided_device_async(const wc_aead_key *key, const wc_aead_strided *batch, size_t tag_len,
                                                wc_cuda_stream stream) {
  return queue_strided(key, batch, tag_len, true, nullptr, stream);
}

wc_status wc_aead_key_open_strided_device_async(const wc_aead_key *key, int32_t *verified,
                                                const wc_aead_strided *batch, size_t tag_len, wc_cuda_stream stream) {
  return queue_strided(key, batch, tag_len, false, verified, stream);
}

void wc_aead_key_free(wc_aead_key *key) { delete key; }

wc_status wc_aead_seal_device_async(const wc_aead *aead, uint8_t *out, uint8_t *tag,
                                    size_t tag_len, const uint8_t *key, size_t key_len, const uint8_t *nonce,
                                    size_t nonce_len, const uint8_t *aad, size_t aad_len, const uint8_t *in,
                                    size_t len, wc_cuda_stream stream) {
  const wc_aead_message message{out, in, len, nonce, nonce_len, aad, aad_len, tag};
  return queue_device_call(aead, {&message, 1}, tag_len, key, key_len, true, nullptr, stream);
}

wc_status wc_aead_open_device_async(const wc_aead *aead, uint8_t *out, int32_t *verified,
                                    const uint8_t *key, size_t key_len, const uint8_t *nonce, size_t nonce_len,
                                    const uint8_t *aad, size_t aad_len, const uint8_t *in, size_t len,
                                    const uint8_t *tag, size_t tag_len, wc_cuda_stream stream) {
  // The kernels only read the tag when opening.
  const wc_aead_message message{out, in, len, nonce, nonce_len, aad, aad_len, const_cast<uint8_t *>(tag)};
  return queue_device_call(aead, {&message, 1}, tag_len, key, key_len, false, verified, stream);
}

wc_status wc_aead_seal_batch_device_async(const wc_aead *aead,
                                          const wc_aead_message *messages, size_t count, size_t tag_len,
                                          const uint8_t *key, size_t key_len, wc_cuda_stream stream) {
  if (messages == nullptr && count != 0) return WC_ERR_INVALID_ARGUMENT;
  return queue_device_call(aead, {messages, count}, tag_len, key, key_len, true, nullptr, stream);
}

wc_status wc_aead_open_batch_device_async(const wc_aead *aead, int32_t *verified,
                                          const wc_aead_message *messages, size_t count, size_t tag_len,
                                          const uint8_t *key, size_t key_len, wc_cuda_stream stream) {
  if (messages == nullptr && count != 0) return WC_ERR_INVALID_ARGUMENT;
  return queue_device_call(aead, {messages, count}, tag_len, key, key_len, false, verified, stream);
}

wc_status wc_aead_ctx_new(wc_aead_ctx **ctx, const wc_options *options, const wc_aead *aead, wc_direction direction,
                          const uint8_t *key, size_t key_len, const uint8_t *nonce, size_t nonce_len) {
  if (ctx == nullptr) return WC_ERR_INVALID_ARGUMENT;
  *ctx = nullptr;
  if (aead == nullptr) return WC_ERR_UNKNOWN_CIPHER;
  if (direction != WC_ENCRYPT && direction != WC_DECRYPT) return WC_ERR_INVALID_ARGUMENT;
  wc_status status = warpcrypt::check_aead_key(*aead, key, key_len);
  if (status != WC_OK) return status;
  if (!warpcrypt::aead_nonce_len_valid(*aead, nonce_len)) return WC_ERR_IV_LEN;
  if (nonce == nullptr) return WC_ERR_INVALID_ARGUMENT;
  status = warpcrypt::engine::check_piecewise_aead(warpcrypt::options_or_default(options));
  if (status != WC_OK) return status;
  auto created = std::unique_ptr<wc_aead_ctx>(new (std::nothrow) wc_aead_ctx);
  if (!created) return WC_ERR_OUT_OF_MEMORY;
  created->stream = warpcrypt::kCpuBackend.make_aead_stream(*aead, direction, {key, key_len}, {nonce, nonce_len});
  if (!created->stream) return WC_ERR_CRYPTO_LIBRARY;
  created->aead = aead;
  created->direction = direction;
  *ctx = created.release();
  return WC_OK;
}

wc_status wc_aead_ctx_aad(wc_aead_ctx *ctx, const uint8_t *aad, size_t aad_len) {
  if (ctx == nullptr || (aad == nullptr && aad_len != 0)) return WC_ERR_INVALID_ARGUMENT;
  if (ctx->dead) return WC_ERR_CONTEXT_STATE;
  if (ctx->message_started) return kill(ctx, WC_ERR_CONTEXT_STATE);
  const wc_status status = ctx->stream->absorb_aad(aad, aad_len);
  return status == WC_OK ? WC_OK : kill(ctx, status);
}

wc_status wc_aead_ctx_update(wc_aead_ctx *ctx, uint8_t *out, size_t out_cap, size_t *out_len, const uint8_t *in,
                             size_t in_len) {
  if (out_len != nullptr) *out_len = 0;
  if (ctx == nullptr || out_len == nullptr || (in == nullptr && in_len != 0) || (out == nullptr && out_cap != 0) ||
      warpcrypt::overlaps_partially(out, out_cap, in, in_len)) {
    return WC_ERR_INVALID_ARGUMENT;
  }
  if (ctx->dead) return WC_ERR_CONTEXT_STATE;
  ctx->message_started = true;
  wc_status status = WC_OK;
  if (out_cap < in_len) {
    status = WC_ERR_OUTPUT_TOO_SMALL;
  } else if (in_len > warpcrypt::aead_max_message_len(*ctx->aead) - ctx->message_len) {
    status = WC_ERR_RANGE;
  } else {
    status = ctx->stream->update(in, out, in_len);
  }
  if (status != WC_OK) {
    wc_memzero(out, std::min(out_cap, in_len));
    return kill(ctx, status);
  }
  ctx->message_len += in_len;
  *out_len = in_len;
  return WC_OK;
}

wc_status wc_aead_ctx_seal_final(wc_aead_ctx *ctx, uint8_t *tag, size_t tag_len) {
  if (ctx == nullptr || tag == nullptr || !warpcrypt::aead_tag_len_valid(tag_len)) return WC_ERR_INVALID_ARGUMENT;
  if (ctx->dead || ctx->direction != WC_ENCRYPT) return WC_ERR_CONTEXT_STATE;
  const wc_status status = ctx->stream->seal_final(tag, tag_len);
  if (status != WC_OK) wc_memzero(tag, tag_len);
  return kill(ctx, status);
}

wc_status wc_aead_ctx_open_final(wc_aead_ctx *ctx, const uint8_t *tag, size_t tag_len) {
  if (ctx == nullptr || tag == nullptr || !warpcrypt::aead_tag_len_valid(tag_len)) return WC_ERR_INVALID_ARGUMENT;
  if (ctx->dead || ctx->direction != WC_DECRYPT) return WC_ERR_CONTEXT_STATE;
  return kill(ctx, ctx->stream->open_final(tag, tag_len));
}

wc_backend wc_aead_ctx_backend(const wc_aead_ctx *ctx) { return ctx != nullptr ? WC_BACKEND_CPU : WC_BACKEND_AUTO; }

void wc_aead_ctx_free(wc_aead_ctx *ctx) { delete ctx; }

}  // extern "C"
