// Wiping secrets: one function for every buffer that held key material or
// plaintext, and a fixed-capacity copy of key material that wipes itself on
// destruction, so no backend keeps a key in memory after its context is freed.
#pragma once

#include <openssl/crypto.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>

#include "warpcrypt/warpcrypt.h"

namespace warpcrypt {

// Zeroes `len` bytes at `buf` (may be null) in a way the compiler cannot
// drop as a dead store.
inline void secure_wipe(void *buf, size_t len) {
  if (buf != nullptr) OPENSSL_cleanse(buf, len);
}

class SecretBytes {
 public:
  // Every key and IV is length-checked at the API before it gets here, so a
  // longer one is a bug in the library; cutting it short would silently
  // change the key, so the process stops instead.
  explicit SecretBytes(std::span<const uint8_t> bytes) : len_(bytes.size()) {
    if (len_ > bytes_.size()) {
      std::fputs("warpcrypt: internal error: key material longer than WC_MAX_KEY_LEN\n", stderr);
      std::abort();
    }
    std::copy_n(bytes.begin(), len_, bytes_.begin());
  }
  ~SecretBytes() { secure_wipe(bytes_.data(), bytes_.size()); }
  SecretBytes(const SecretBytes &) = delete;
  SecretBytes &operator=(const SecretBytes &) = delete;

  const uint8_t *data() const { return bytes_.data(); }
  size_t size() const { return len_; }

 private:
  std::array<uint8_t, WC_MAX_KEY_LEN> bytes_{};
  size_t len_;
};

}  // namespace warpcrypt
