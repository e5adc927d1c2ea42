// Keccak-f[1600] as FIPS 202 section 3 defines it, on 25 64-bit lanes in
// little-endian byte order. Nothing here depends on secret values other than
// through arithmetic, so it runs in constant time.
#include "backends/cpu/keccak.h"

#include "core/secret_bytes.h"

namespace warpcrypt::cpu {
namespace {

constexpr std::array<uint64_t, 24> kRoundConstants = {
    0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808aULL, 0x8000000080008000ULL, 0x000000000000808bULL,
    0x0000000080000001ULL, 0x8000000080008081ULL, 0x8000000000008009ULL, 0x000000000000008aULL, 0x0000000000000088ULL,
    0x0000000080008009ULL, 0x000000008000000aULL, 0x000000008000808bULL, 0x800000000000008bULL, 0x8000000000008089ULL,
    0x8000000000008003ULL, 0x8000000000008002ULL, 0x8000000000000080ULL, 0x000000000000800aULL, 0x800000008000000aULL,
    0x8000000080008081ULL, 0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL,
};

// rho's rotation of lane x + 5y, and pi's destination of each lane, in the
// order pi visits them starting from lane 1.
constexpr std::array<unsigned, 24> kRotations = {1,  3,  6,  10, 15, 21, 28, 36, 45, 55, 2,  14,
                                                 27, 41, 56, 8,  25, 43, 62, 18, 39, 61, 20, 44};
constexpr std::array<unsigned, 24> kPiLanes = {10, 7,  11, 17, 18, 3, 5,  16, 8,  21, 24, 4,
                                               15, 23, 19, 13, 12, 2, 20, 14, 22, 9,  6,  1};

// Every rotation in the tables is 1..63, so neither shift is by 64.
uint64_t rotate_left(uint64_t lane, unsigned bits) { return (lane << bits) | (lane >> (64 - bits)); }

void keccak_f1600(std::array<uint64_t, 25> &a) {
  for (uint64_t round_constant : kRoundConstants) {
    // theta
    std::array<uint64_t, 5> column{};
    for (unsigned x = 0; x < 5; ++x) column[x] = a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20];
    for (unsigned x = 0; x < 5; ++x) {
      const uint64_t d = column[(x + 4) % 5] ^ rotate_left(column[(x + 1) % 5], 1);
      for (unsigned y = 0; y < 25; y += 5) a[y + x] ^= d;
    }
    // rho and pi together: carry each lane to its new place, rotated
    uint64_t carried = a[1];
    for (unsigned i = 0; i < 24; ++i) {
      const uint64_t next = a[kPiLanes[i]];
      a[kPiLanes[i]] = rotate_left(carried, kRotations[i]);
      carried = next;
    }
    // chi
    for (unsigned y = 0; y < 25; y += 5) {
      const std::array<uint64_t, 5> row = {a[y], a[y + 1], a[y + 2], a[y + 3], a[y + 4]};
      for (unsigned x = 0; x < 5; ++x) a[y + x] = row[x] ^ (~row[(x + 1) % 5] & row[(x + 2) % 5]);
    }
    // iota
    a[0] ^= round_constant;
  }
}

void xor_byte(std::array<uint64_t, 25> &state, size_t index, uint8_t byte) {
  state[index / 8] ^= static_cast<uint64_t>(byte) << (8 * (index % 8));
}

uint8_t read_byte(const std::array<uint64_t, 25> &state, size_t index) {
  return static_cast<uint8_t>(state[index / 8] >> (8 * (index % 8)));
}

}  // namespace

KeccakSponge::~KeccakSponge() { secure_wipe(state_.data(), sizeof(state_)); }

void KeccakSponge::absorb(std::span<const uint8_t> in) {
  for (uint8_t byte : in) {
    xor_byte(state_, offset_++, byte);
    if (offset_ == rate_) {
      keccak_f1600(state_);
      offset_ = 0;
    }
  }
}

void KeccakSponge::pad() {
  xor_byte(state_, offset_, domain_);
  xor_byte(state_, rate_ - 1, 0x80);
  keccak_f1600(state_);
  offset_ = 0;
  squeezing_ = true;
}

void KeccakSponge::squeeze(std::span<uint8_t> out) {
  if (!squeezing_) pad();
  for (uint8_t &byte : out) {
    if (offset_ == rate_) {
      keccak_f1600(state_);
      offset_ = 0;
    }
    byte = read_byte(state_, offset_++);
  }
}

void sha3_256(std::span<uint8_t, 32> out, std::span<const uint8_t> in) {
  KeccakSponge sponge(136, 0x06);
  sponge.absorb(in);
  sponge.squeeze(out);
}

void sha3_512(std::span<uint8_t, 64> out, std::span<const uint8_t> in) {
  KeccakSponge sponge(72, 0x06);
  sponge.absorb(in);
  sponge.squeeze(out);
}

void shake256(std::span<uint8_t> out, std::span<const uint8_t> in) {
  KeccakSponge sponge(kShake256Rate, kShakeDomain);
  sponge.absorb(in);
  sponge.squeeze(out);
}

}  // namespace warpcrypt::cpu
