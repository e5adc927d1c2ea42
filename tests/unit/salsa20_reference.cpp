#include "salsa20_reference.h"

#include <algorithm>
#include <stdexcept>

namespace wctest::salsa20_reference {
namespace {

uint32_t rotl(uint32_t value, int shift) { return value << shift | value >> (32 - shift); }

uint32_t load_le32(const uint8_t *bytes) {
  return uint32_t{bytes[0]} | uint32_t{bytes[1]} << 8 | uint32_t{bytes[2]} << 16 |
         uint32_t{bytes[3]} << 24;
}

using State = std::array<uint32_t, 16>;

// Applies quarterround to the state words at positions a, b, c, d, in the
// argument order the spec lists them.
void quarterround_at(State &x, int a, int b, int c, int d) {
  const Words4 z = quarterround({x[a], x[b], x[c], x[d]});
  x[a] = z[0];
  x[b] = z[1];
  x[c] = z[2];
  x[d] = z[3];
}

void rowround(State &y) {
  quarterround_at(y, 0, 1, 2, 3);
  quarterround_at(y, 5, 6, 7, 4);
  quarterround_at(y, 10, 11, 8, 9);
  quarterround_at(y, 15, 12, 13, 14);
}

void columnround(State &x) {
  quarterround_at(x, 0, 4, 8, 12);
  quarterround_at(x, 5, 9, 13, 1);
  quarterround_at(x, 10, 14, 2, 6);
  quarterround_at(x, 15, 3, 7, 11);
}

// The Salsa20 hash function of section 8: ten doublerounds, then x + z.
std::array<uint8_t, 64> salsa20_hash(const State &x) {
  State z = x;
  for (int i = 0; i < 10; ++i) {
    columnround(z);
    rowround(z);
  }
  std::array<uint8_t, 64> out{};
  for (int i = 0; i < 16; ++i) {
    const uint32_t word = z[i] + x[i];
    for (int b = 0; b < 4; ++b) out[4 * i + b] = static_cast<uint8_t>(word >> (8 * b));
  }
  return out;
}

}  // namespace

Words4 quarterround(const Words4 &y) {
  Words4 z{};
  z[1] = y[1] ^ rotl(y[0] + y[3], 7);
  z[2] = y[2] ^ rotl(z[1] + y[0], 9);
  z[3] = y[3] ^ rotl(z[2] + z[1], 13);
  z[0] = y[0] ^ rotl(z[3] + z[2], 18);
  return z;
}

std::array<uint8_t, 64> expand(const Bytes &key, const std::array<uint8_t, 16> &n) {
  if (key.size() != 32 && key.size() != 16) {
    throw std::invalid_argument("Salsa20 keys are 16 or 32 bytes");
  }
  // sigma / tau, the four constant words that fill the diagonal.
  const char *constant = key.size() == 32 ? "expand 32-byte k" : "expand 16-byte k";
  const uint8_t *k0 = key.data();
  const uint8_t *k1 = key.size() == 32 ? key.data() + 16 : key.data();
  State x{};
  for (int i = 0; i < 4; ++i) {
    x[5 * i] = load_le32(reinterpret_cast<const uint8_t *>(constant) + 4 * i);
    x[1 + i] = load_le32(k0 + 4 * i);
    x[6 + i] = load_le32(n.data() + 4 * i);
    x[11 + i] = load_le32(k1 + 4 * i);
  }
  return salsa20_hash(x);
}

Bytes keystream(const Bytes &key, const Bytes &nonce, uint64_t block_counter, size_t length) {
  if (nonce.size() != 8) throw std::invalid_argument("Salsa20 nonces are 8 bytes");
  Bytes out;
  out.reserve(length);
  for (uint64_t block = block_counter; out.size() < length; ++block) {
    std::array<uint8_t, 16> n{};
    for (int i = 0; i < 8; ++i) {
      n[i] = nonce[i];
      n[8 + i] = static_cast<uint8_t>(block >> (8 * i));
    }
    const auto block_bytes = expand(key, n);
    const size_t take = std::min<size_t>(64, length - out.size());
    out.insert(out.end(), block_bytes.begin(), block_bytes.begin() + take);
  }
  return out;
}

}  // namespace wctest::salsa20_reference
