// The vector-file reader must parse what the known-answer tests feed it; a
// reader that silently drops records would make those tests pass vacuously.
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "vector_file.h"

namespace wctest {
namespace {

TEST(VectorFileTest, ReadsSectionsRecordsCommentsAndCrlf) {
  const std::string text =
      "# CAVS 11.1\r\n"
      "# State : Encrypt and Decrypt\r\n"
      "\r\n"
      "[ENCRYPT]\r\n"
      "\r\n"
      "COUNT = 0\r\n"
      "KEY = 00112233\r\n"
      "PLAINTEXT = aabb\r\n"
      "CIPHERTEXT = CCDD\r\n"
      "\r\n"
      "COUNT = 1\r\n"
      "KEY = 44556677\r\n"
      "[DECRYPT]\r\n"
      "COUNT = 0\r\n"
      "CIPHERTEXT = 01\r\n"
      "PLAINTEXT =\r\n";
  const auto records = parse_vector_text(text);
  ASSERT_EQ(records.size(), 3u);

  EXPECT_EQ(records[0].section, VectorSection::kEncrypt);
  EXPECT_EQ(records[0].line, 6);
  EXPECT_EQ(records[0].text("COUNT"), "0");
  EXPECT_EQ(records[0].hex("KEY"), (Bytes{0x00, 0x11, 0x22, 0x33}));
  EXPECT_EQ(records[0].hex("CIPHERTEXT"), (Bytes{0xcc, 0xdd}));

  // A section header ends the record before it, even without a blank line.
  EXPECT_EQ(records[1].section, VectorSection::kEncrypt);
  EXPECT_EQ(records[1].hex("KEY"), (Bytes{0x44, 0x55, 0x66, 0x77}));
  EXPECT_FALSE(records[1].has("PLAINTEXT"));

  EXPECT_EQ(records[2].section, VectorSection::kDecrypt);
  EXPECT_EQ(records[2].hex("CIPHERTEXT"), (Bytes{0x01}));
  EXPECT_TRUE(records[2].hex("PLAINTEXT").empty());
}

TEST(VectorFileTest, CountStartsANewRecordWithoutABlankLine) {
  const auto records = parse_vector_text("COUNT = 0\nKEY = 00\nCOUNT = 1\nKEY = 01\n");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].section, VectorSection::kNone);
  EXPECT_EQ(records[1].text("KEY"), "01");
}

// The ML-KEM KAT files' lower-case spelling.
TEST(VectorFileTest, LowerCaseCountStartsANewRecord) {
  const auto records = parse_vector_text("count = 0\nz = 00\ncount = 1\nz = 01\n");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].text("z"), "01");
}

TEST(VectorFileTest, IgnoresOtherBracketedHeadersAndTrailingTextWithoutNewline) {
  const auto records = parse_vector_text("[Keylen = 128]\nCOUNT = 7\nKEY = ff");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].text("COUNT"), "7");
  EXPECT_EQ(records[0].hex("KEY"), (Bytes{0xff}));
}

TEST(VectorFileTest, BareUpperCaseWordIsAFlag) {
  const auto records = parse_vector_text("Count = 1\nTag = 00\nFAIL\n\nCount = 2\nTag = 01\nPT = \n");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_TRUE(records[0].has("FAIL"));
  EXPECT_EQ(records[0].text("FAIL"), "");
  EXPECT_FALSE(records[1].has("FAIL"));
  EXPECT_THROW(parse_vector_text("Count = 1\nFail here\n"), std::runtime_error);
}

TEST(VectorFileTest, RejectsMalformedLinesAndMissingFields) {
  EXPECT_THROW(parse_vector_text("COUNT = 0\nthis line has no equals sign\n"), std::runtime_error);
  const auto records = parse_vector_text("COUNT = 0\n");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_THROW(records[0].text("KEY"), std::out_of_range);
}

TEST(VectorFileTest, MissingFileIsAnError) {
  EXPECT_THROW(read_vector_file("/nonexistent/warpcrypt/vectors.rsp"), std::runtime_error);
}

}  // namespace
}  // namespace wctest
