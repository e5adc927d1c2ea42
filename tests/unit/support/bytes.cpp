#include "support/bytes.h"

#include <algorithm>
#include <stdexcept>

namespace wctest {
namespace {

int hex_digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A short hex excerpt of [data, data + len) around `center`, for messages.
std::string excerpt(const uint8_t *data, size_t len, size_t center) {
  const size_t begin = center >= 8 ? center - 8 : 0;
  const size_t end = std::min(len, center + 8);
  if (begin >= end) return "<none>";
  return "[" + std::to_string(begin) + ".." + std::to_string(end) + ") " +
         to_hex(data + begin, end - begin);
}

}  // namespace

Bytes from_hex(std::string_view hex) {
  if (hex.size() % 2 != 0) {
    throw std::invalid_argument("odd number of hex digits: " + std::string(hex));
  }
  Bytes out(hex.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    const int high = hex_digit_value(hex[2 * i]);
    const int low = hex_digit_value(hex[2 * i + 1]);
    if (high < 0 || low < 0) {
      throw std::invalid_argument("not a hex digit in: " + std::string(hex));
    }
    out[i] = static_cast<uint8_t>(high << 4 | low);
  }
  return out;
}

std::string to_hex(const uint8_t *data, size_t len) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * len);
  for (size_t i = 0; i < len; ++i) {
    out.push_back(kDigits[data[i] >> 4]);
    out.push_back(kDigits[data[i] & 0xf]);
  }
  return out;
}

::testing::AssertionResult same_bytes(const uint8_t *expected, size_t expected_len,
                                      const uint8_t *actual, size_t actual_len) {
  const size_t common = std::min(expected_len, actual_len);
  size_t first_difference = 0;
  while (first_difference < common && expected[first_difference] == actual[first_difference]) {
    ++first_difference;
  }
  if (first_difference == common && expected_len == actual_len) {
    return ::testing::AssertionSuccess();
  }
  auto failure = ::testing::AssertionFailure();
  if (expected_len != actual_len) {
    failure << "lengths differ: expected " << expected_len << " bytes, got " << actual_len
            << "; ";
  }
  if (first_difference < common) {
    failure << "first difference at offset " << first_difference << "\n  expected "
            << excerpt(expected, expected_len, first_difference) << "\n  actual   "
            << excerpt(actual, actual_len, first_difference);
  } else {
    failure << "the shorter buffer is a prefix of the longer";
  }
  return failure;
}

::testing::AssertionResult all_zero(const uint8_t *data, size_t len) {
  for (size_t i = 0; i < len; ++i) {
    if (data[i] != 0) {
      return ::testing::AssertionFailure()
             << "byte " << i << " of " << len << " is nonzero: " << excerpt(data, len, i);
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace wctest
