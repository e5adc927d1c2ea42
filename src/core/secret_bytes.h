// A fixed-capacity copy of key material that wipes itself on destruction, so
// no backend keeps a key in memory after its context is freed.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "warpcrypt/warpcrypt.h"

namespace warpcrypt {

class SecretBytes {
 public:
  explicit SecretBytes(std::span<const uint8_t> bytes)
      : len_(std::min(bytes.size(), bytes_.size())) {
    std::copy_n(bytes.begin(), len_, bytes_.begin());
  }
  ~SecretBytes() { wc_memzero(bytes_.data(), bytes_.size()); }
  SecretBytes(const SecretBytes &) = delete;
  SecretBytes &operator=(const SecretBytes &) = delete;

  const uint8_t *data() const { return bytes_.data(); }
  size_t size() const { return len_; }

 private:
  std::array<uint8_t, WC_MAX_KEY_LEN> bytes_{};
  size_t len_;
};

}  // namespace warpcrypt
