// Counters that wrap while the library works on a buffer. AES-CTR's IV is one
// 128-bit big-endian counter carrying across all 128 bits (2^32, 2^64 and
// the wrap at 2^128); ChaCha20's 32-bit block counter carries into the first
// nonce word, as OpenSSL does. Multi-MiB buffers put each carry inside a
// chunk, at different places for different thread counts; OpenSSL, given
// the whole buffer in one call, is the oracle. Random-access ranges that
// straddle a carry are checked too.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/bytes.h"
#include "support/cipher_table.h"
#include "support/openssl_oracle.h"
#include "support/test_rng.h"
#include "support/warpcrypt_calls.h"

namespace wctest {
namespace {

constexpr size_t kLongLength = 8 * 1024 * 1024 + 7;

// How many blocks before the carry the counter starts: after one block, after
// a few, about 40% in (so one worker's chunk holds the carry) and near the
// end of a kLongLength buffer.
std::vector<uint64_t> blocks_before_carry(size_t block_len) {
  const uint64_t blocks_in_buffer = kLongLength / block_len;
  return {1, 16, blocks_in_buffer * 2 / 5 + 1, blocks_in_buffer - 3};
}

void store_be(uint8_t *out, uint64_t value, int bytes) {
  for (int i = bytes - 1; i >= 0; --i, value >>= 8) out[i] = static_cast<uint8_t>(value);
}

void store_le32(uint8_t *out, uint32_t value) {
  for (int i = 0; i < 4; ++i, value >>= 8) out[i] = static_cast<uint8_t>(value);
}

struct CounterStart {
  std::string description;
  Bytes iv;
  uint64_t carry_after_blocks;  // where the interesting carry happens
};

std::vector<CounterStart> ctr_counter_starts(TestRng &rng) {
  std::vector<CounterStart> starts;
  for (uint64_t before : blocks_before_carry(16)) {
    const std::string suffix = ", " + std::to_string(before) + " blocks before the carry";
    // Low 32 bits about to wrap: the carry leaves the word that fast CTR
    // implementations increment on their own.
    Bytes iv = rng.bytes(16);
    store_be(iv.data() + 12, (uint64_t{1} << 32) - before, 4);
    iv[11] = 0x7f;  // no further carry, so a missing one cannot hide
    starts.push_back({"carry into bit 32" + suffix, iv, before});

    // Low 64 bits about to wrap, into the upper half.
    iv = rng.bytes(16);
    store_be(iv.data() + 8, 0 - before, 8);
    iv[7] = 0x7f;
    starts.push_back({"carry into bit 64" + suffix, iv, before});

    // Only the top bit clear: the carry ripples through 127 bits.
    iv.assign(16, 0xff);
    iv[0] = 0x7f;
    store_be(iv.data() + 8, 0 - before, 8);
    starts.push_back({"carry through 127 bits" + suffix, iv, before});

    // All ones minus a little: the counter wraps to zero at 2^128.
    iv.assign(16, 0xff);
    store_be(iv.data() + 8, 0 - before, 8);
    starts.push_back({"wrap at 2^128" + suffix, iv, before});
  }
  return starts;
}

std::vector<CounterStart> chacha20_counter_starts(TestRng &rng) {
  std::vector<CounterStart> starts;
  for (uint64_t before : blocks_before_carry(64)) {
    const std::string suffix = ", " + std::to_string(before) + " blocks before the carry";
    Bytes iv = rng.bytes(16);
    store_le32(iv.data(), static_cast<uint32_t>((uint64_t{1} << 32) - before));
    store_le32(iv.data() + 4, 0x12345678);
    starts.push_back({"32-bit counter wraps into nonce word 0" + suffix, iv, before});

    // Nonce word 0 is itself all ones, so the carry wraps it too.
    store_le32(iv.data() + 4, 0xffffffff);
    starts.push_back({"counter and nonce word 0 both wrap" + suffix, iv, before});
  }
  return starts;
}

class CounterCarryTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    cipher_ = lookup(spec().name);
    ASSERT_NE(cipher_, nullptr);
  }

  const CipherSpec &spec() const { return cipher_spec(GetParam()); }
  size_t block_len() const { return GetParam() == "chacha20" ? 64 : 16; }
  std::vector<CounterStart> starts() {
    return GetParam() == "chacha20" ? chacha20_counter_starts(rng_) : ctr_counter_starts(rng_);
  }

  const wc_cipher *cipher_ = nullptr;
  TestRng rng_ = TestRng::for_current_test();
};

TEST_P(CounterCarryTest, LongBuffersMatchOpenSsl) {
  const Bytes plaintext = rng_.bytes(kLongLength);
  for (const CounterStart &start : starts()) {
    const Bytes key = rng_.bytes(spec().key_len);
    SCOPED_TRACE(start.description + ", iv " + to_hex(start.iv));
    const auto expected = openssl_crypt(spec().name, WC_ENCRYPT, key, start.iv, plaintext, true);
    ASSERT_TRUE(expected.has_value());
    for (unsigned threads : {0u, 7u}) {
      SCOPED_TRACE(threads == 0 ? std::string("default threads") : "7 threads");
      const wc_options options = make_options(threads);
      const LibResult encrypted = lib_crypt(WC_ENCRYPT, cipher_, key, start.iv, plaintext, options);
      ASSERT_EQ(encrypted.status, WC_OK);
      EXPECT_TRUE(same_bytes(*expected, encrypted.out));
      const LibResult decrypted = lib_crypt(WC_DECRYPT, cipher_, key, start.iv, *expected, options);
      ASSERT_EQ(decrypted.status, WC_OK);
      EXPECT_TRUE(same_bytes(plaintext, decrypted.out));
    }
  }
}

// Ranges that begin a little before the carry and end a little after it,
// decrypted on their own, equal the same bytes of OpenSSL's whole output.
TEST_P(CounterCarryTest, RangesAcrossTheCarryMatchOpenSsl) {
  const wc_options options = make_options();
  for (const CounterStart &start : starts()) {
    const Bytes key = rng_.bytes(spec().key_len);
    const uint64_t carry_at = start.carry_after_blocks * block_len();
    const Bytes plaintext = rng_.bytes(carry_at + 3 * block_len() + 5);
    const auto ciphertext = openssl_crypt(spec().name, WC_ENCRYPT, key, start.iv, plaintext, true);
    ASSERT_TRUE(ciphertext.has_value());
    for (uint64_t before : {uint64_t{1}, uint64_t{5}, uint64_t{block_len()}}) {
      const uint64_t offset = carry_at - before;
      const uint64_t length = before + block_len() + 3;
      SCOPED_TRACE(start.description + ", range at " + std::to_string(offset) + " length " +
                   std::to_string(length));
      const RangeWindow window =
          lib_range_window(cipher_, ciphertext->size(), offset, length);
      ASSERT_EQ(window.status, WC_OK);
      ASSERT_LE(window.offset + window.length, ciphertext->size());
      const Bytes window_bytes(ciphertext->begin() + static_cast<ptrdiff_t>(window.offset),
                               ciphertext->begin() +
                                   static_cast<ptrdiff_t>(window.offset + window.length));
      const LibResult got = lib_decrypt_range(options, cipher_, key, start.iv, window_bytes,
                                              ciphertext->size(), offset, length);
      ASSERT_EQ(got.status, WC_OK);
      EXPECT_TRUE(same_bytes(plaintext.data() + offset, length, got.out.data(), got.out.size()));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(CounterModes, CounterCarryTest,
                         ::testing::Values("aes-128-ctr", "aes-192-ctr", "aes-256-ctr",
                                           "chacha20"),
                         [](const ::testing::TestParamInfo<std::string> &param_info) {
                           return identifier_from(param_info.param);
                         });

}  // namespace
}  // namespace wctest
