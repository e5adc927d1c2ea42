// A random source that hands out the bytes it was given, in order: a test
// vector's randomness (ML-KEM's m, HPKE's ikmE), for the code under test to
// draw as it would from the library's source; a draw past them fails
// (WC_ERR_INVALID_ARGUMENT), as the code under test must then. The unit
// tests and the reference tools (tests/tools) share it.
#pragma once

#include <algorithm>
#include <span>
#include <utility>

#include "core/host_crypto.h"
#include "support/bytes.h"

namespace wctest {

class FixedRandom final : public warpcrypt::RandomSource {
 public:
  explicit FixedRandom(Bytes bytes) : bytes_(std::move(bytes)) {}
  wc_status fill(std::span<uint8_t> out) override {
    if (out.size() > bytes_.size() - used_) return WC_ERR_INVALID_ARGUMENT;
    std::copy_n(bytes_.begin() + used_, out.size(), out.begin());
    used_ += out.size();
    return WC_OK;
  }

 private:
  Bytes bytes_;
  size_t used_ = 0;
};

}  // namespace wctest
