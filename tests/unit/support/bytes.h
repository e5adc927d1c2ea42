// Byte buffers, hex conversion and a buffer comparison that reports the first
// difference instead of dumping megabytes. Deliberately independent of the
// library: expected values are read with this code, never with wc_hex_decode.
#ifndef WARPCRYPT_TESTS_UNIT_SUPPORT_BYTES_H
#define WARPCRYPT_TESTS_UNIT_SUPPORT_BYTES_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace wctest {

using Bytes = std::vector<uint8_t>;

// Decodes hexadecimal text (either case, no separators). Throws
// std::invalid_argument on an odd digit count or a non-hex character.
Bytes from_hex(std::string_view hex);

std::string to_hex(const uint8_t *data, size_t len);
inline std::string to_hex(const Bytes &bytes) { return to_hex(bytes.data(), bytes.size()); }

// Use as EXPECT_TRUE(same_bytes(expected, actual)). On mismatch the message
// gives both lengths, the first differing offset and a few bytes around it.
::testing::AssertionResult same_bytes(const uint8_t *expected, size_t expected_len,
                                      const uint8_t *actual, size_t actual_len);
inline ::testing::AssertionResult same_bytes(const Bytes &expected, const Bytes &actual) {
  return same_bytes(expected.data(), expected.size(), actual.data(), actual.size());
}

// True when every byte of [data, data + len) is zero; used to check the
// "output is zeroed on failure" contract.
::testing::AssertionResult all_zero(const uint8_t *data, size_t len);

}  // namespace wctest

#endif
