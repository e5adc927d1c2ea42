// wc_hex_decode reads keys and IVs given on the command line, so it must
// reject anything that is not an even run of hex digits rather than guess.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/bytes.h"
#include "support/warpcrypt_calls.h"

namespace wctest {
namespace {

struct HexDecode {
  wc_status status;
  Bytes out;  // all out_cap bytes of the buffer, so zeroing can be checked
  size_t out_len;
};

HexDecode hex_decode(const std::string &hex, size_t out_cap) {
  HexDecode result{WC_OK, Bytes(out_cap + 1, 0xa5), 12345};
  result.status = wc_hex_decode(result.out.data(), out_cap, &result.out_len, hex.data(),
                                hex.size());
  result.out.resize(out_cap);
  return result;
}

TEST(HexDecodeTest, DecodesEitherCase) {
  const HexDecode got = hex_decode("00ff7Fa0DeadBEEF", 8);
  ASSERT_EQ(got.status, WC_OK);
  EXPECT_EQ(got.out_len, 8u);
  EXPECT_EQ(got.out, (Bytes{0x00, 0xff, 0x7f, 0xa0, 0xde, 0xad, 0xbe, 0xef}));
}

TEST(HexDecodeTest, EmptyInputDecodesToNothing) {
  const HexDecode got = hex_decode("", 4);
  EXPECT_EQ(got.status, WC_OK);
  EXPECT_EQ(got.out_len, 0u);
}

TEST(HexDecodeTest, OddDigitCountIsRejected) {
  for (const char *hex : {"0", "abc", "0011223"}) {
    const HexDecode got = hex_decode(hex, 8);
    EXPECT_EQ(got.status, WC_ERR_INVALID_ARGUMENT) << hex;
    EXPECT_TRUE(all_zero(got.out.data(), got.out.size())) << hex;
  }
}

TEST(HexDecodeTest, NonHexCharactersAreRejected) {
  const std::vector<std::string> not_hex = {"0g",    "zz", "00 11", "0x00",
                                            "00-11", "+1", "ab:cd", std::string("00\0" "1", 4)};
  for (const std::string &hex : not_hex) {
    const HexDecode got = hex_decode(hex, 8);
    EXPECT_EQ(got.status, WC_ERR_INVALID_ARGUMENT) << '"' << hex << '"';
    EXPECT_TRUE(all_zero(got.out.data(), got.out.size())) << '"' << hex << '"';
  }
}

TEST(HexDecodeTest, OutputBufferTooSmall) {
  const HexDecode got = hex_decode("00112233", 3);
  EXPECT_EQ(got.status, WC_ERR_OUTPUT_TOO_SMALL);
  EXPECT_TRUE(all_zero(got.out.data(), got.out.size()));
}

}  // namespace
}  // namespace wctest
