// Random-access decryption: for any byte range, wc_range_window names a
// ciphertext window, and wc_decrypt_range on just that window gives the same
// bytes as the matching slice of a full wc_decrypt. OFB cannot do this.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "support/bytes.h"
#include "support/cipher_table.h"
#include "support/test_rng.h"
#include "support/warpcrypt_calls.h"

namespace wctest {
namespace {

struct RandomAccessCase {
  CipherSpec spec;
  bool padding;
};

std::vector<RandomAccessCase> random_access_cases() {
  std::vector<RandomAccessCase> cases;
  for (const CipherSpec &spec : all_cipher_specs()) {
    if (!spec.random_access) continue;
    cases.push_back({spec, true});
    if (spec.padded) cases.push_back({spec, false});
  }
  return cases;
}

// Ciphers whose keystream depends on the position alone, so the window is
// exactly the requested range (clipped to the ciphertext).
bool is_pure_stream_cipher(const std::string &name) {
  return name.ends_with("-ctr") || name.starts_with("chacha20") || name.starts_with("salsa20");
}

class RandomAccessTest : public ::testing::TestWithParam<RandomAccessCase> {};

TEST_P(RandomAccessTest, RangesEqualSlicesOfFullDecryption) {
  const CipherSpec &spec = GetParam().spec;
  const wc_cipher *cipher = with_padding(lookup(spec.name), GetParam().padding);
  ASSERT_NE(cipher, nullptr);
  TestRng rng = TestRng::for_current_test();
  const wc_options options = make_options();
  const Bytes key = rng.bytes(spec.key_len);
  const Bytes iv = rng.bytes(spec.iv_len);
  size_t length = rng.uniform(200000, 260000);
  if (spec.padded && !GetParam().padding) length -= length % 16;

  const LibResult ciphertext = lib_crypt(WC_ENCRYPT, cipher, key, iv, rng.bytes(length), options);
  ASSERT_EQ(ciphertext.status, WC_OK);
  const LibResult plaintext = lib_crypt(WC_DECRYPT, cipher, key, iv, ciphertext.out, options);
  ASSERT_EQ(plaintext.status, WC_OK);
  const uint64_t plain_len = plaintext.out.size();
  const uint64_t cipher_len = ciphertext.out.size();

  // Edges first (start, end, last block, padding, past the end), then random.
  std::vector<std::pair<uint64_t, uint64_t>> ranges = {
      {0, 0},          {0, 1},
      {0, plain_len},  {1, 15},
      {15, 2},         {16, 16},
      {plain_len - 1, 1},     {plain_len - 1, 100},
      {plain_len - 17, 17},   {plain_len - 40, 1000},
      {cipher_len - 16, 16},  {plain_len, 10},
      {cipher_len, 5},        {cipher_len + 100, 5}};
  for (int i = 0; i < 120; ++i) {
    ranges.emplace_back(rng.uniform(0, cipher_len + 32), rng.uniform(0, 3000));
  }
  for (int i = 0; i < 6; ++i) {
    ranges.emplace_back(rng.uniform(0, cipher_len), rng.uniform(0, cipher_len));
  }

  for (const auto &[offset, range_len] : ranges) {
    SCOPED_TRACE("range at " + std::to_string(offset) + " length " + std::to_string(range_len) +
                 " of " + std::to_string(plain_len) + " plaintext bytes");
    const RangeWindow window = lib_range_window(cipher, cipher_len, offset, range_len);
    ASSERT_EQ(window.status, WC_OK);
    ASSERT_LE(window.offset + window.length, cipher_len) << "window runs past the ciphertext";
    if (offset >= cipher_len) {
      EXPECT_EQ(window.length, 0u) << "past the end: empty window";
    }
    if (is_pure_stream_cipher(spec.name) && offset < cipher_len) {
      EXPECT_EQ(window.offset, offset);
      EXPECT_EQ(window.length, std::min(range_len, cipher_len - offset));
    }

    // The window in its own allocation: the call may read nothing else.
    const Bytes window_bytes(ciphertext.out.begin() + static_cast<ptrdiff_t>(window.offset),
                             ciphertext.out.begin() +
                                 static_cast<ptrdiff_t>(window.offset + window.length));
    const LibResult got =
        lib_decrypt_range(options, cipher, key, iv, window_bytes, cipher_len, offset, range_len);
    ASSERT_EQ(got.status, WC_OK);
    const uint64_t begin = std::min(offset, plain_len);
    const uint64_t end = std::min(offset + range_len, plain_len);
    EXPECT_TRUE(same_bytes(plaintext.out.data() + begin, end - begin, got.out.data(),
                           got.out.size()));
  }
}

INSTANTIATE_TEST_SUITE_P(RandomAccessCiphers, RandomAccessTest,
                         ::testing::ValuesIn(random_access_cases()),
                         [](const ::testing::TestParamInfo<RandomAccessCase> &param_info) {
                           std::string name = identifier_from(param_info.param.spec.name);
                           if (param_info.param.spec.padded) {
                             name += param_info.param.padding ? "_pad" : "_nopad";
                           }
                           return name;
                         });

// OFB's keystream is sequential: random access is refused, never faked.
TEST(RandomAccessOfbTest, IsUnsupported) {
  for (const char *name : {"aes-128-ofb", "aes-192-ofb", "aes-256-ofb"}) {
    SCOPED_TRACE(name);
    const wc_cipher *cipher = lookup(name);
    ASSERT_NE(cipher, nullptr);
    const wc_options options = make_options();
    EXPECT_EQ(wc_cipher_has_random_access(cipher), 0);
    EXPECT_EQ(lib_range_window(cipher, 1000, 100, 50).status, WC_ERR_UNSUPPORTED);

    const Bytes key(wc_cipher_key_len(cipher), 0x11);
    const Bytes iv(16, 0x22);
    const Bytes ciphertext(1000, 0x33);
    Bytes out(50, 0xaa);
    size_t out_len = 0;
    EXPECT_EQ(wc_decrypt_range(&options, cipher, out.data(), out.size(), &out_len, key.data(),
                               key.size(), iv.data(), iv.size(), ciphertext.data(),
                               ciphertext.size(), ciphertext.size(), 100, 50),
              WC_ERR_UNSUPPORTED);
    EXPECT_TRUE(all_zero(out.data(), out.size())) << "output must be zeroed on failure";
  }
}

}  // namespace
}  // namespace wctest
