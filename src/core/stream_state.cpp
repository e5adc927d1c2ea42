#include "core/stream_state.h"

#include <algorithm>
#include <cstring>

#include "core/secret_bytes.h"
#include "core/padding.h"

namespace warpcrypt {

wc_status check_key_and_iv(const wc_cipher &cipher, const uint8_t *key, size_t key_len,
                           const uint8_t *iv, size_t iv_len) {
  if (key_len != cipher.key_len) return WC_ERR_KEY_LEN;
  if (iv_len != cipher.iv_len) return WC_ERR_IV_LEN;
  if (key == nullptr || (iv_len != 0 && iv == nullptr)) return WC_ERR_INVALID_ARGUMENT;
  return WC_OK;
}

size_t held_back_bytes(const wc_cipher &cipher, wc_direction direction, uint64_t total) {
  const size_t granularity = segment_granularity(cipher, direction);
  size_t held = static_cast<size_t>(total % granularity);
  if (held == 0 && total != 0 && is_padded(cipher) && direction == WC_DECRYPT) held = granularity;
  return held;
}

wc_status StreamState::create(std::unique_ptr<StreamState> *out, BackendCipher backend_cipher,
                              const wc_cipher &cipher, wc_direction direction, std::span<const uint8_t> iv) {
  out->reset(new (std::nothrow) StreamState(cipher, direction, std::move(backend_cipher), iv));
  return *out ? WC_OK : WC_ERR_OUT_OF_MEMORY;
}

void StreamState::start_at(uint64_t position, const uint8_t chain[16]) {
  position_ = position;
  std::copy_n(chain, 16, chain_.begin());
}

StreamState::StreamState(const wc_cipher &cipher, wc_direction direction, BackendCipher backend_cipher,
                         std::span<const uint8_t> iv)
    : cipher_(cipher),
      direction_(direction),
      backend_cipher_(std::move(backend_cipher)),
      granularity_(segment_granularity(cipher, direction)) {
  std::copy(iv.begin(), iv.end(), chain_.begin());
}

wc_backend StreamState::backend() const {
  // Sequential modes always run on the CPU.
  return backend_cipher_.random_access ? backend_cipher_.random_access->last_backend() : WC_BACKEND_CPU;
}

bool StreamState::holds_last_block() const { return is_padded(cipher_) && direction_ == WC_DECRYPT; }

size_t StreamState::update_bound(size_t in_len) const {
  return granularity_ == 1 ? in_len : pending_len_ + in_len;
}

wc_status StreamState::fail(wc_status status) {
  dead_ = true;
  secure_wipe(pending_.data(), pending_.size());
  return status;
}

wc_status StreamState::process(const uint8_t *in, uint8_t *out, size_t len) {
  if (len == 0) return WC_OK;
  wc_status status;
  if (backend_cipher_.random_access) {
    // The next chain is the last 16 bytes of IV || ciphertext; take it before
    // an in-place transform overwrites the ciphertext.
    std::array<uint8_t, 16> next_chain{};
    if (chains_on_ciphertext(cipher_)) {
      const size_t from_input = std::min<size_t>(len, 16);
      std::copy(chain_.begin() + from_input, chain_.end(), next_chain.begin());
      std::copy_n(in + len - from_input, from_input, next_chain.end() - from_input);
    }
    status = backend_cipher_.random_access->transform_at(position_, chain_.data(), in, out, len);
    chain_ = next_chain;
  } else {
    status = backend_cipher_.sequential->transform_next(in, out, len);
  }
  position_ += len;
  return status;
}

wc_status StreamState::update(uint8_t *out, size_t out_cap, size_t *out_len, const uint8_t *in,
                              size_t in_len) {
  *out_len = 0;
  if (dead_) return WC_ERR_CONTEXT_STATE;
  if (out_cap < update_bound(in_len)) return fail(WC_ERR_OUTPUT_TOO_SMALL);
  if (granularity_ == 1) {
    const wc_status status = process(in, out, in_len);
    if (status != WC_OK) return fail(status);
    *out_len = in_len;
    return WC_OK;
  }

  // Whole blocks only; a padded decryption also keeps its last full block
  // until finish() can see whether it is the last.
  const size_t total = pending_len_ + in_len;
  const size_t hold = held_back_bytes(cipher_, direction_, total);
  const size_t emit = total - hold;
  if (emit == 0) {
    std::memcpy(pending_.data() + pending_len_, in, in_len);
    pending_len_ = total;
    return WC_OK;
  }
  // emit >= one block >= pending_len_, so the held tail lies within `in`.
  std::array<uint8_t, 16> tail{};
  std::memcpy(tail.data(), in + in_len - hold, hold);
  wc_status status;
  if (pending_len_ == 0) {
    status = process(in, out, emit);
  } else {
    // Assemble pending || in in `out` and transform there: the output is
    // shifted against the input, so transforming straight from `in` would
    // break when out == in.
    std::memmove(out + pending_len_, in, emit - pending_len_);
    std::memcpy(out, pending_.data(), pending_len_);
    status = process(out, out, emit);
  }
  pending_ = tail;
  pending_len_ = hold;
  secure_wipe(tail.data(), tail.size());
  if (status != WC_OK) return fail(status);
  *out_len = emit;
  return WC_OK;
}

wc_status StreamState::finish(uint8_t *out, size_t out_cap, size_t *out_len) {
  *out_len = 0;
  if (dead_) return WC_ERR_CONTEXT_STATE;
  dead_ = true;
  std::array<uint8_t, 16> block = pending_;
  const size_t held = pending_len_;
  secure_wipe(pending_.data(), pending_.size());
  pending_len_ = 0;

  wc_status status = WC_OK;
  size_t produced = 0;
  if (is_padded(cipher_) && direction_ == WC_ENCRYPT) {
    pkcs7_pad(block.data(), held);
    produced = 16;
    status = out_cap < produced ? WC_ERR_OUTPUT_TOO_SMALL : process(block.data(), out, produced);
  } else if (holds_last_block()) {
    // An empty ciphertext has no padding block at all: OpenSSL calls that a
    // bad decrypt too.
    if (held != 16) {
      status = held == 0 ? WC_ERR_BAD_DECRYPT : WC_ERR_NOT_BLOCK_ALIGNED;
    } else if ((status = process(block.data(), block.data(), 16)) == WC_OK) {
      if (!pkcs7_unpad(block.data(), &produced)) {
        status = WC_ERR_BAD_DECRYPT;
      } else if (out_cap < produced) {
        status = WC_ERR_OUTPUT_TOO_SMALL;
      } else {
        std::memcpy(out, block.data(), produced);
      }
    }
  } else if (needs_whole_blocks(cipher_)) {
    status = held == 0 ? WC_OK : WC_ERR_NOT_BLOCK_ALIGNED;
  } else if (held != 0) {
    // CFB128 decryption: the stream may end inside a block.
    produced = held;
    status = out_cap < produced ? WC_ERR_OUTPUT_TOO_SMALL : process(block.data(), out, held);
  }
  secure_wipe(block.data(), block.size());
  if (status != WC_OK) return status;
  *out_len = produced;
  return WC_OK;
}

}  // namespace warpcrypt
