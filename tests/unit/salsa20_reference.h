// A deliberately plain Salsa20, written from djb's specification ("Salsa20
// specification", sections 2-10) and checked against its examples, so the
// library can be compared with something that shares none of its code: the
// library uses libsodium, which cannot take 16-byte keys or reach every
// counter value.
#ifndef WARPCRYPT_TESTS_UNIT_SALSA20_REFERENCE_H
#define WARPCRYPT_TESTS_UNIT_SALSA20_REFERENCE_H

#include <array>
#include <cstdint>

#include "support/bytes.h"

namespace wctest::salsa20_reference {

using Words4 = std::array<uint32_t, 4>;

// The spec's quarterround, exposed so its own examples can be checked.
Words4 quarterround(const Words4 &y);

// Salsa20_k(n) for a 16-byte n: the expansion function of section 9. `key` is
// 32 bytes (k0 || k1, "expand 32-byte k") or 16 bytes ("expand 16-byte k").
std::array<uint8_t, 64> expand(const Bytes &key, const std::array<uint8_t, 16> &n);

// Keystream bytes [block_counter * 64, block_counter * 64 + length) for an
// 8-byte nonce: block i is Salsa20_k(nonce || little-endian 64-bit i).
Bytes keystream(const Bytes &key, const Bytes &nonce, uint64_t block_counter, size_t length);

}  // namespace wctest::salsa20_reference

#endif
