// The contract between the AEAD calls in core/ and a backend (cpu/, cuda/).
// Core validates every argument first; a backend only runs messages.
#pragma once

#include <memory>
#include <span>

#include "core/aead_registry.h"
#include "warpcrypt/warpcrypt.h"

namespace warpcrypt {

// An AEAD bound to a key. Messages are host memory (wc_aead_message); the
// backend may run them in any order and in parallel.
class AeadCipher {
 public:
  virtual ~AeadCipher() = default;

  // Seals every message, writing tag_len bytes of tag each.
  virtual wc_status seal(std::span<const wc_aead_message> messages, size_t tag_len) = 0;

  // Opens every message. results[i] becomes WC_OK or WC_ERR_AUTH, or the
  // error that stopped it. Returns WC_OK when all succeeded, WC_ERR_AUTH when
  // only tag mismatches failed, otherwise the first other error. The caller
  // zeroes the outputs of the messages that failed.
  virtual wc_status open(std::span<const wc_aead_message> messages, size_t tag_len,
                         wc_status *results) = 0;

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
