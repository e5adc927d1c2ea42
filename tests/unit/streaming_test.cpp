// Streaming contexts: however the input is cut into wc_ctx_update calls, the
// output equals the one-shot call's, and output never lags input by more than
// the header allows.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/bytes.h"
#include "support/cipher_table.h"
#include "support/test_rng.h"
#include "support/warpcrypt_calls.h"

namespace wctest {
namespace {

struct StreamingCase {
  CipherSpec spec;
  bool padding;
  wc_direction direction;
};

std::vector<StreamingCase> streaming_cases() {
  std::vector<StreamingCase> cases;
  for (const CipherSpec &spec : all_cipher_specs()) {
    for (wc_direction direction : {WC_ENCRYPT, WC_DECRYPT}) {
      cases.push_back({spec, true, direction});
      if (spec.padded) cases.push_back({spec, false, direction});
    }
  }
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<StreamingCase> &param_info) {
  std::string name = identifier_from(param_info.param.spec.name);
  if (param_info.param.spec.padded) name += param_info.param.padding ? "_pad" : "_nopad";
  return name + "_" + direction_name(param_info.param.direction);
}

// Cuts `total` bytes into pieces of length in [min_piece, max_piece].
std::vector<size_t> random_pieces(TestRng &rng, size_t total, size_t min_piece,
                                  size_t max_piece) {
  std::vector<size_t> pieces;
  while (total > 0) {
    const size_t piece = std::min(total, rng.uniform(min_piece, max_piece));
    pieces.push_back(piece);
    total -= piece;
  }
  return pieces;
}

std::vector<size_t> fixed_pieces(size_t total, size_t piece) {
  std::vector<size_t> pieces(total / piece, piece);
  if (total % piece != 0) pieces.push_back(total % piece);
  return pieces;
}

class SplitEqualsWholeTest : public ::testing::TestWithParam<StreamingCase> {
 protected:
  void SetUp() override {
    cipher_ = with_padding(lookup(spec().name), GetParam().padding);
    ASSERT_NE(cipher_, nullptr) << spec().name;
    options_ = make_options();
  }

  const CipherSpec &spec() const { return GetParam().spec; }

  // Input of about `length` bytes for this case's direction: a plaintext for
  // encryption, a valid ciphertext (made by the one-shot call) for decryption.
  Bytes make_input(size_t length) {
    if (spec().padded && !GetParam().padding) length -= length % 16;
    Bytes message = rng_.bytes(length);
    if (GetParam().direction == WC_ENCRYPT) return message;
    const LibResult encrypted = lib_crypt(WC_ENCRYPT, cipher_, key_, iv_, message, options_);
    EXPECT_EQ(encrypted.status, WC_OK);
    return encrypted.out;
  }

  void expect_split_equals_whole(const Bytes &input, const std::vector<size_t> &pieces,
                                 const std::string &schedule) {
    SCOPED_TRACE(schedule + ", " + std::to_string(input.size()) + " bytes in " +
                 std::to_string(pieces.size()) + " updates");
    const wc_direction direction = GetParam().direction;
    const LibResult whole = lib_crypt(direction, cipher_, key_, iv_, input, options_);
    ASSERT_EQ(whole.status, WC_OK);
    const LibResult split = lib_stream(direction, cipher_, key_, iv_, input, pieces, options_);
    ASSERT_EQ(split.status, WC_OK);
    EXPECT_TRUE(same_bytes(whole.out, split.out));

    // The header: output lags input by at most one block, and only ECB, CBC
    // and CFB128 decryption (whole blocks) or ECB/CBC (partial blocks, held
    // padding) lag at all.
    EXPECT_LE(split.max_lag, 16u);
    const bool cfb128_decrypt = spec().name.ends_with("-cfb") && direction == WC_DECRYPT;
    if (spec().block_len == 1 && !cfb128_decrypt) {
      EXPECT_EQ(split.max_lag, 0u) << "a stream mode held bytes back";
    }
  }

  const wc_cipher *cipher_ = nullptr;
  wc_options options_{};
  TestRng rng_ = TestRng::for_current_test();
  Bytes key_ = rng_.bytes(spec().key_len);
  Bytes iv_ = rng_.bytes(spec().iv_len);
};

TEST_P(SplitEqualsWholeTest, OneByteUpdates) {
  const Bytes input = make_input(333);
  expect_split_equals_whole(input, fixed_pieces(input.size(), 1), "1-byte pieces");
}

TEST_P(SplitEqualsWholeTest, OddFixedSizeUpdates) {
  const Bytes input = make_input(3001);
  for (size_t piece : {3, 7, 13, 17, 33, 63, 65}) {
    expect_split_equals_whole(input, fixed_pieces(input.size(), piece),
                              std::to_string(piece) + "-byte pieces");
  }
}

TEST_P(SplitEqualsWholeTest, RandomSmallUpdatesWithEmptyOnes) {
  const Bytes input = make_input(5000 + rng_.uniform(0, 100));
  // Zero-length updates must be harmless, wherever they fall.
  expect_split_equals_whole(input, random_pieces(rng_, input.size(), 0, 40),
                            "random 0..40-byte pieces");
}

TEST_P(SplitEqualsWholeTest, RandomLargeUpdatesAcrossChunks) {
  const Bytes input = make_input(3 * 1024 * 1024 + 5);
  std::vector<size_t> pieces = {1, 15, 2, 17};  // tiny and odd first, so the rest is misaligned
  size_t rest = input.size() - 35;
  for (size_t piece : random_pieces(rng_, rest, 1, 1024 * 1024)) pieces.push_back(piece);
  expect_split_equals_whole(input, pieces, "tiny, then random up to 1 MiB pieces");
}

INSTANTIATE_TEST_SUITE_P(AllCiphers, SplitEqualsWholeTest,
                         ::testing::ValuesIn(streaming_cases()), case_name);

}  // namespace
}  // namespace wctest
