#include "core/aes_tables.h"

namespace warpcrypt::aes {
namespace {

constexpr uint8_t xtime(uint8_t x) { return static_cast<uint8_t>((x << 1) ^ ((x & 0x80) ? 0x1b : 0)); }

constexpr uint8_t gf_mul(uint8_t a, uint8_t b) {
  uint8_t product = 0;
  for (; b != 0; b >>= 1, a = xtime(a)) {
    if (b & 1) product ^= a;
  }
  return product;
}

constexpr uint8_t gf_inverse(uint8_t x) {
  if (x == 0) return 0;
  for (unsigned y = 1; y < 256; ++y) {
    if (gf_mul(x, static_cast<uint8_t>(y)) == 1) return static_cast<uint8_t>(y);
  }
  return 0;
}

constexpr uint8_t rotl8(uint8_t x, int n) { return static_cast<uint8_t>((x << n) | (x >> (8 - n))); }

constexpr uint32_t column(uint8_t r0, uint8_t r1, uint8_t r2, uint8_t r3) {
  return uint32_t{r0} | uint32_t{r1} << 8 | uint32_t{r2} << 16 | uint32_t{r3} << 24;
}

constexpr Tables generate() {
  Tables t{};
  for (unsigned x = 0; x < 256; ++x) {
    // FIPS-197 section 5.1.1: multiplicative inverse, then the affine map.
    const uint8_t b = gf_inverse(static_cast<uint8_t>(x));
    const auto s = static_cast<uint8_t>(b ^ rotl8(b, 1) ^ rotl8(b, 2) ^ rotl8(b, 3) ^ rotl8(b, 4) ^ 0x63);
    t.sbox[x] = s;
    t.inv_sbox[s] = static_cast<uint8_t>(x);
  }
  for (unsigned x = 0; x < 256; ++x) {
    const uint8_t s = t.sbox[x];
    t.enc0[x] = column(gf_mul(s, 2), s, s, gf_mul(s, 3));
    const uint8_t u = t.inv_sbox[x];
    t.dec0[x] = column(gf_mul(u, 14), gf_mul(u, 9), gf_mul(u, 13), gf_mul(u, 11));
  }
  return t;
}

constexpr Tables kTables = generate();
static_assert(kTables.sbox[0x00] == 0x63 && kTables.sbox[0x53] == 0xed, "FIPS-197 S-box");
static_assert(kTables.inv_sbox[0x63] == 0x00, "FIPS-197 inverse S-box");

}  // namespace

const Tables &tables() { return kTables; }

uint32_t inv_mix_column(uint32_t c) {
  const auto b0 = static_cast<uint8_t>(c), b1 = static_cast<uint8_t>(c >> 8),
             b2 = static_cast<uint8_t>(c >> 16), b3 = static_cast<uint8_t>(c >> 24);
  return column(gf_mul(b0, 14) ^ gf_mul(b1, 11) ^ gf_mul(b2, 13) ^ gf_mul(b3, 9),
                gf_mul(b0, 9) ^ gf_mul(b1, 14) ^ gf_mul(b2, 11) ^ gf_mul(b3, 13),
                gf_mul(b0, 13) ^ gf_mul(b1, 9) ^ gf_mul(b2, 14) ^ gf_mul(b3, 11),
                gf_mul(b0, 11) ^ gf_mul(b1, 13) ^ gf_mul(b2, 9) ^ gf_mul(b3, 14));
}

}  // namespace warpcrypt::aes
