// The contract between the AEAD calls and a backend (backends/cpu/,
// backends/cuda/). The api layer validates every argument first; a backend
// only runs messages.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "core/aead_registry.h"
#include "warpcrypt/warpcrypt.h"

namespace warpcrypt {

// A message's pieces (AeadCipher::pieces): the bytes from cuts()[k] to the
// next cut, or to the message's end for the last. Every piece but the last
// may run at once on several threads, in any order, each on any of the
// devices the AEAD was made for; the last, which sets the tag (sealing) or
// checks it (opening: WC_ERR_AUTH on a mismatch, and the caller zeroes
// everything the pieces wrote), runs once every other piece has returned.
// Each run returns once its output is written.
class AeadPieces {
 public:
  virtual ~AeadPieces() = default;
  // Where the pieces start: 0 first, ascending.
  virtual const std::vector<uint64_t> &cuts() const = 0;
  // Runs the piece starting at cuts()[k] on `device`: its bytes from `in`
  // to `out`, each holding just that piece (page-locked memory moves
  // fastest). The caller's placement picks the device, as it does for
  // whole messages.
  virtual wc_status run(size_t k, int device, const uint8_t *in, uint8_t *out) = 0;
};

// An AEAD bound to a key, with whatever the key allows computing once (GCM's
// hash key and its powers) computed at construction. Every call is const and
// may run from many threads at once. Messages are host memory
// (wc_aead_message) unless a call says otherwise; the backend may run them
// in any order and in parallel.
class AeadCipher {
 public:
  virtual ~AeadCipher() = default;

  // Seals every message, writing tag_len bytes of tag each.
  virtual wc_status seal(std::span<const wc_aead_message> messages, size_t tag_len) const = 0;

  // Opens every message. results[i] becomes WC_OK or WC_ERR_AUTH, or the
  // error that stopped it. Returns WC_OK when all succeeded, WC_ERR_AUTH when
  // only tag mismatches failed, otherwise the first other error. The caller
  // zeroes the outputs of the messages that failed.
  virtual wc_status open(std::span<const wc_aead_message> messages, size_t tag_len,
                         wc_status *results) const = 0;

  // Queues messages in device memory on `stream` and returns without
  // waiting; opening writes 1 (authentic) or 0 per message to device memory
  // at `verified`. The messages' descriptors go up from `page_locked`, host
  // memory the stream owns until it has passed this work, where it holds
  // them (a transfer lane's window); else from pageable memory, a copy that
  // waits for the stream's earlier work. WC_ERR_BACKEND_UNAVAILABLE for a
  // backend without a device.
  virtual wc_status queue_device(std::span<const wc_aead_message> messages, size_t tag_len, bool seal,
                                 int32_t *verified, wc_cuda_stream stream, std::span<uint8_t> page_locked) const {
    (void)messages, (void)tag_len, (void)seal, (void)verified, (void)stream, (void)page_locked;
    return WC_ERR_BACKEND_UNAVAILABLE;
  }

  // Queues a checked strided batch (wc_aead_strided, device memory) on
  // `stream`, as queue_device does a list of messages.
  virtual wc_status queue_device_strided(const wc_aead_strided &batch, size_t tag_len, bool seal, int32_t *verified,
                                         wc_cuda_stream stream) const {
    (void)batch, (void)tag_len, (void)seal, (void)verified, (void)stream;
    return WC_ERR_BACKEND_UNAVAILABLE;
  }

  // One long host-memory message, run in pieces by a caller that moves each
  // piece through memory of its own (engine/staged_aead.h): pieces of about
  // `piece_bytes`, or fewer where the backend's own unit is larger, and no
  // longer than its lanes hold. WC_ERR_BACKEND_UNAVAILABLE where the backend
  // takes whole messages only.
  virtual wc_status pieces(std::unique_ptr<AeadPieces> *out, const wc_aead_message &message, size_t tag_len,
                           bool seal, size_t piece_bytes) const {
    (void)out, (void)message, (void)tag_len, (void)seal, (void)piece_bytes;
    return WC_ERR_BACKEND_UNAVAILABLE;
  }

  virtual wc_backend backend() const = 0;
};

// One message sealed or opened piece by piece (EVP's update/final shape).
class AeadStream {
 public:
  virtual ~AeadStream() = default;
  virtual wc_status absorb_aad(const uint8_t *aad, size_t len) = 0;
  virtual wc_status update(const uint8_t *in, uint8_t *out, size_t len) = 0;
  virtual wc_status seal_final(uint8_t *tag, size_t tag_len) = 0;
  // WC_ERR_AUTH when the tag does not match.
  virtual wc_status open_final(const uint8_t *tag, size_t tag_len) = 0;
};

// The status a batch of results adds up to, as AeadCipher::open returns it.
inline wc_status combined_open_status(std::span<const wc_status> results) {
  wc_status combined = WC_OK;
  for (wc_status status : results) {
    if (status == WC_OK) continue;
    if (status != WC_ERR_AUTH) return status;
    combined = WC_ERR_AUTH;
  }
  return combined;
}

}  // namespace warpcrypt
