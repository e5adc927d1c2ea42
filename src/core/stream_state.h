// One encryption or decryption stream: the mode logic between the C API and a
// backend. It tracks the stream position and the chaining bytes, holds back
// partial blocks (and, when unpadding, the last block), and applies PKCS#7.
#pragma once

#include <array>
#include <memory>

#include "core/cipher_backend.h"

namespace warpcrypt {

class StreamState {
 public:
  // A stream around a backend cipher the caller built (the engine's
  // make_stream_state picks and keys it).
  static wc_status create(std::unique_ptr<StreamState> *out, BackendCipher backend_cipher, const wc_cipher &cipher,
                          wc_direction direction, std::span<const uint8_t> iv);

  // Starts the stream at byte `position` instead of 0; `chain` is the 16
  // bytes of IV || ciphertext before it. Only before the first update, and
  // only for the parallel modes; the engine finishes a stream this way after
  // its lanes have done the body.
  void start_at(uint64_t position, const uint8_t chain[16]);

  wc_status update(uint8_t *out, size_t out_cap, size_t *out_len, const uint8_t *in, size_t in_len);
  wc_status finish(uint8_t *out, size_t out_cap, size_t *out_len);

  // The most bytes the next update of in_len bytes may write.
  size_t update_bound(size_t in_len) const;
  // The backend that ran the last piece of work (CPU before any).
  wc_backend backend() const;

 private:
  StreamState(const wc_cipher &cipher, wc_direction direction,
              BackendCipher backend_cipher, std::span<const uint8_t> iv);

  // Runs `len` bytes through the backend at the current position.
  wc_status process(const uint8_t *in, uint8_t *out, size_t len);
  bool holds_last_block() const;
  wc_status fail(wc_status status);

  const wc_cipher &cipher_;
  wc_direction direction_;
  BackendCipher backend_cipher_;
  size_t granularity_;
  uint64_t position_ = 0;
  std::array<uint8_t, 16> chain_{};    // IV || ciphertext: the 16 bytes before position_
  std::array<uint8_t, 16> pending_{};  // input not yet released
  size_t pending_len_ = 0;
  bool dead_ = false;  // after finish() or an error
};

// The bytes at the end of `total` bytes of input that a stream holds back
// until it knows whether more follow: a partial block of the block modes,
// and in padded decryption the last whole block, whose padding is checked
// at the end.
size_t held_back_bytes(const wc_cipher &cipher, wc_direction direction, uint64_t total);

wc_status check_key_and_iv(const wc_cipher &cipher, const uint8_t *key, size_t key_len,
                           const uint8_t *iv, size_t iv_len);

}  // namespace warpcrypt
