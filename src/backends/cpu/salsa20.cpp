#include "backends/cpu/salsa20.h"

#include <sodium.h>

#include <algorithm>
#include <array>

#include "backends/cpu/sodium_init.h"
#include "core/secret_bytes.h"

namespace warpcrypt::cpu {
namespace {

// Salsa20's constants: 32-byte keys are "expanded" with sigma, 16-byte keys
// with tau and the key used twice (Salsa20 specification, section 9).
constexpr uint8_t kSigma[17] = "expand 32-byte k";
constexpr uint8_t kTau[17] = "expand 16-byte k";

class Salsa20 final : public RandomAccessCipher {
 public:
  explicit Salsa20(const KeyMaterial &key) : nonce_(key.iv), short_key_(key.key.size() == 16) {
    // libsodium's core function takes 32 key bytes: the key itself, or a
    // short key twice, which is exactly where the 16-byte expansion puts it.
    std::copy(key.key.begin(), key.key.end(), core_key_.begin());
    if (short_key_) std::copy(key.key.begin(), key.key.end(), core_key_.begin() + 16);
  }
  ~Salsa20() override { sodium_memzero(core_key_.data(), core_key_.size()); }
  Salsa20(const Salsa20 &) = delete;
  Salsa20 &operator=(const Salsa20 &) = delete;

  wc_backend last_backend() const override { return WC_BACKEND_CPU; }

  wc_status transform_at(uint64_t position, const uint8_t *, const uint8_t *in, uint8_t *out,
                         size_t len) override {
    if (len == 0) return WC_OK;
    uint64_t block = position / 64;
    const size_t skip = position % 64;
    if (skip != 0) {
      std::array<uint8_t, 64> keystream{};
      keystream_block(block, keystream.data());
      const size_t n = std::min(64 - skip, len);
      for (size_t i = 0; i < n; ++i) out[i] = in[i] ^ keystream[skip + i];
      sodium_memzero(keystream.data(), keystream.size());
      in += n;
      out += n;
      len -= n;
      ++block;
    }
    if (len != 0) xor_blocks(block, in, out, len);
    return WC_OK;
  }

 private:
  void keystream_block(uint64_t block, uint8_t out[64]) const {
    std::array<uint8_t, 16> input{};  // nonce || little-endian block counter
    std::copy_n(nonce_.data(), 8, input.begin());
    for (int i = 0; i < 8; ++i) input[8 + i] = static_cast<uint8_t>(block >> (8 * i));
    crypto_core_salsa20(out, input.data(), core_key_.data(), short_key_ ? kTau : kSigma);
  }

  void xor_blocks(uint64_t block, const uint8_t *in, uint8_t *out, size_t len) const {
    if (!short_key_) {
      // libsodium's vectorised stream covers the 32-byte key.
      crypto_stream_salsa20_xor_ic(out, in, len, nonce_.data(), block, core_key_.data());
      return;
    }
    std::array<uint8_t, 64> keystream{};
    for (size_t done = 0; done < len; done += 64, ++block) {
      keystream_block(block, keystream.data());
      const size_t n = std::min<size_t>(64, len - done);
      for (size_t i = 0; i < n; ++i) out[done + i] = in[done + i] ^ keystream[i];
    }
    sodium_memzero(keystream.data(), keystream.size());
  }

  std::array<uint8_t, 32> core_key_{};
  SecretBytes nonce_;
  bool short_key_;
};

}  // namespace

std::unique_ptr<RandomAccessCipher> make_salsa20(const KeyMaterial &key) {
  if (!sodium_ready()) return nullptr;
  return std::make_unique<Salsa20>(key);
}

}  // namespace warpcrypt::cpu
