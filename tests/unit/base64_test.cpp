// wc_base64_* (warpcrypt/text.h): RFC 4648's test vectors in `openssl enc
// -a`'s layout, input in pieces of every size giving the same text, -A's
// one line, and decoding that refuses what is not base64 in one status.
// tests/cli/test_openssl_flags.py holds the text byte for byte to the
// `openssl` tool's.
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/bytes.h"
#include "support/test_rng.h"
#include "warpcrypt/warpcrypt.h"

namespace wctest {
namespace {

using Coder = std::unique_ptr<wc_base64, decltype(&wc_base64_free)>;

Coder make(wc_direction direction, bool one_line) {
  wc_base64 *coder = nullptr;
  EXPECT_EQ(wc_base64_new(&coder, direction, one_line ? 1 : 0), WC_OK);
  return Coder(coder, wc_base64_free);
}

// Codes `in` in pieces of `piece` bytes (all at once for 0); the status of
// the first call that failed, else WC_OK.
wc_status code(wc_direction direction, bool one_line, const Bytes &in, size_t piece, Bytes *out) {
  Coder coder = make(direction, one_line);
  out->clear();
  const size_t step = piece == 0 ? std::max<size_t>(in.size(), 1) : piece;
  for (size_t at = 0; at < in.size(); at += step) {
    const size_t n = std::min(step, in.size() - at);
    Bytes room(wc_base64_update_bound(coder.get(), n));
    size_t written = 0;
    const wc_status status = wc_base64_update(coder.get(), room.data(), room.size(), &written, in.data() + at, n);
    if (status != WC_OK) return status;
    out->insert(out->end(), room.begin(), room.begin() + static_cast<std::ptrdiff_t>(written));
  }
  Bytes room(wc_base64_final_bound());
  size_t written = 0;
  const wc_status status = wc_base64_final(coder.get(), room.data(), room.size(), &written);
  out->insert(out->end(), room.begin(), room.begin() + static_cast<std::ptrdiff_t>(written));
  return status;
}

Bytes text(const std::string &s) { return Bytes(s.begin(), s.end()); }

TEST(Base64, Rfc4648VectorsAsOpensslEncWritesThem) {
  const std::vector<std::pair<std::string, std::string>> vectors = {
      {"", ""},          {"f", "Zg==\n"},         {"fo", "Zm8=\n"},        {"foo", "Zm9v\n"},
      {"foob", "Zm9vYg==\n"}, {"fooba", "Zm9vYmE=\n"}, {"foobar", "Zm9vYmFy\n"},
  };
  for (const auto &[plain, encoded] : vectors) {
    SCOPED_TRACE(plain);
    Bytes out;
    ASSERT_EQ(code(WC_ENCRYPT, false, text(plain), 0, &out), WC_OK);
    EXPECT_EQ(out, text(encoded));
    ASSERT_EQ(code(WC_ENCRYPT, true, text(plain), 0, &out), WC_OK);
    EXPECT_EQ(out, text(encoded.empty() ? "" : encoded.substr(0, encoded.size() - 1))) << "-A: one line, no LF";
    ASSERT_EQ(code(WC_DECRYPT, false, text(encoded), 0, &out), WC_OK);
    EXPECT_EQ(out, text(plain));
  }
}

TEST(Base64, LinesOf64CharactersAndPiecesOfAnySize) {
  TestRng rng = TestRng::for_current_test();
  const Bytes plain = rng.bytes(48 * 5 + 7);
  Bytes whole;
  ASSERT_EQ(code(WC_ENCRYPT, false, plain, 0, &whole), WC_OK);
  // Five full lines of 64 characters and a last one of 12, each with its LF.
  ASSERT_EQ(whole.size(), 5 * 65 + 13);
  for (size_t line = 0; line < 6; ++line) EXPECT_EQ(whole[std::min(line * 65 + 64, whole.size() - 1)], '\n');
  Bytes one_line;
  ASSERT_EQ(code(WC_ENCRYPT, true, plain, 0, &one_line), WC_OK);
  for (size_t piece : {1, 2, 3, 5, 47, 48, 49, 100}) {
    SCOPED_TRACE(piece);
    Bytes out;
    ASSERT_EQ(code(WC_ENCRYPT, false, plain, piece, &out), WC_OK);
    EXPECT_EQ(out, whole);
    ASSERT_EQ(code(WC_ENCRYPT, true, plain, piece, &out), WC_OK);
    EXPECT_EQ(out, one_line);
    ASSERT_EQ(code(WC_DECRYPT, false, whole, piece, &out), WC_OK);
    EXPECT_EQ(out, plain);
    ASSERT_EQ(code(WC_DECRYPT, false, one_line, piece, &out), WC_OK);
    EXPECT_EQ(out, plain);
  }
}

TEST(Base64, DecodingIgnoresSpacesAndLineBreaks) {
  Bytes out;
  ASSERT_EQ(code(WC_DECRYPT, false, text("Zm9v\r\n Ym Fy\n\n"), 0, &out), WC_OK);
  EXPECT_EQ(out, text("foobar"));
}

TEST(Base64, WhatIsNotBase64IsAFormatErrorAndTheCoderStaysDead) {
  Coder coder = make(WC_DECRYPT, false);
  const Bytes bad = text("Zm9v*mFy\n");
  Bytes room(wc_base64_update_bound(coder.get(), bad.size()), 0xa5);
  size_t written = 99;
  EXPECT_EQ(wc_base64_update(coder.get(), room.data(), room.size(), &written, bad.data(), bad.size()),
            WC_ERR_FORMAT);
  EXPECT_EQ(written, 0u);
  const Bytes good = text("Zm9v\n");
  EXPECT_EQ(wc_base64_update(coder.get(), room.data(), room.size(), &written, good.data(), good.size()),
            WC_ERR_FORMAT)
      << "a coder that failed is not used again";
}

TEST(Base64, TextEndingInsideAGroupIsAFormatErrorAtTheEnd) {
  Bytes out;
  EXPECT_EQ(code(WC_DECRYPT, false, text("Zm9vY"), 0, &out), WC_ERR_FORMAT);
  EXPECT_TRUE(out.empty());
}

TEST(Base64, MisuseIsRefused) {
  wc_base64 *coder = nullptr;
  EXPECT_EQ(wc_base64_new(nullptr, WC_ENCRYPT, 0), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_base64_new(&coder, static_cast<wc_direction>(7), 0), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(coder, nullptr);
  Coder made = make(WC_ENCRYPT, false);
  Bytes in(100, 1);
  Bytes small(10);
  size_t written = 0;
  EXPECT_EQ(wc_base64_update(made.get(), small.data(), small.size(), &written, in.data(), in.size()),
            WC_ERR_OUTPUT_TOO_SMALL);
  EXPECT_EQ(wc_base64_update(made.get(), small.data(), small.size(), nullptr, in.data(), in.size()),
            WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_base64_final(made.get(), small.data(), small.size(), &written), WC_ERR_OUTPUT_TOO_SMALL);
  Bytes room(wc_base64_final_bound());
  EXPECT_EQ(wc_base64_final(made.get(), room.data(), room.size(), &written), WC_OK);
  EXPECT_EQ(wc_base64_final(made.get(), room.data(), room.size(), &written), WC_ERR_FORMAT) << "a coder ends once";
  wc_base64_free(nullptr);
}

}  // namespace
}  // namespace wctest
