// Keccak-f[1600] and the FIPS 202 functions ML-KEM needs: SHA3-256,
// SHA3-512 and the SHAKE XOFs. Written here because OpenSSL 3.0's EVP
// squeezes SHAKE only once, while ML-KEM's matrix sampling reads SHAKE128 a
// block at a time until it has enough coefficients.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace warpcrypt::cpu {

// A sponge with the FIPS 202 padding: absorb all input, then squeeze as many
// whole rate-sized blocks as wanted. Wipes its state on destruction, since
// every use in ML-KEM absorbs secret bytes.
class KeccakSponge {
 public:
  // `rate` in bytes (168 for SHAKE128, 136 for SHAKE256 and SHA3-256, 72 for
  // SHA3-512); `domain` the suffix bits (0x1F for SHAKE, 0x06 for SHA3).
  KeccakSponge(size_t rate, uint8_t domain) : rate_(rate), domain_(domain) {}
  ~KeccakSponge();
  KeccakSponge(const KeccakSponge &) = delete;
  KeccakSponge &operator=(const KeccakSponge &) = delete;

  void absorb(std::span<const uint8_t> in);
  // Pads after the last absorb; the first squeeze call does it.
  void squeeze(std::span<uint8_t> out);
  size_t rate() const { return rate_; }

 private:
  void pad();
  std::array<uint64_t, 25> state_{};
  size_t rate_;
  uint8_t domain_;
  size_t offset_ = 0;  // the next byte of the block to absorb or squeeze
  bool squeezing_ = false;
};

inline constexpr size_t kShake128Rate = 168;
inline constexpr size_t kShake256Rate = 136;
inline constexpr uint8_t kShakeDomain = 0x1F;

void sha3_256(std::span<uint8_t, 32> out, std::span<const uint8_t> in);
void sha3_512(std::span<uint8_t, 64> out, std::span<const uint8_t> in);
void shake256(std::span<uint8_t> out, std::span<const uint8_t> in);

}  // namespace warpcrypt::cpu
