// Salsa20 and Salsa20 with a 16-byte key: djb's specification examples, then
// the library against an independent reference (salsa20_reference.cpp) and
// against libsodium's crypto_stream_salsa20_xor_ic.
#include <array>
#include <cstdint>
#include <numeric>
#include <string>

#include <gtest/gtest.h>
#include <sodium.h>

#include "salsa20_reference.h"
#include "support/bytes.h"
#include "support/test_rng.h"
#include "support/warpcrypt_calls.h"

namespace wctest {
namespace {

namespace ref = salsa20_reference;

// The spec's expansion examples: k0 = (1..16), k1 = (201..216), n = (101..116).
Bytes consecutive_bytes(uint8_t first, size_t count) {
  Bytes out(count);
  std::iota(out.begin(), out.end(), first);
  return out;
}

Bytes spec_key(size_t key_len) {
  Bytes key = consecutive_bytes(1, 16);
  if (key_len == 32) {
    const Bytes k1 = consecutive_bytes(201, 16);
    key.insert(key.end(), k1.begin(), k1.end());
  }
  return key;
}

// The first 8 bytes of the spec's n are the nonce.
Bytes spec_nonce() { return consecutive_bytes(101, 8); }

TEST(Salsa20ReferenceTest, QuarterroundMatchesSpecExamples) {
  EXPECT_EQ(ref::quarterround({0, 0, 0, 0}), (ref::Words4{0, 0, 0, 0}));
  EXPECT_EQ(ref::quarterround({1, 0, 0, 0}),
            (ref::Words4{0x08008145, 0x00000080, 0x00010200, 0x20500000}));
  EXPECT_EQ(ref::quarterround({0, 1, 0, 0}),
            (ref::Words4{0x88000100, 0x00000001, 0x00000200, 0x00402000}));
}

TEST(Salsa20ReferenceTest, ExpansionMatchesSpecExamples) {
  std::array<uint8_t, 16> n{};
  const Bytes n_bytes = consecutive_bytes(101, 16);
  std::copy(n_bytes.begin(), n_bytes.end(), n.begin());

  const std::array<uint8_t, 64> expected_32_byte_key = {
      69,  37,  68,  39,  41,  15,  107, 193, 255, 139, 122, 6,   170, 233, 217, 98,
      89,  144, 182, 106, 21,  51,  200, 65,  239, 49,  222, 34,  215, 114, 40,  126,
      104, 197, 7,   225, 197, 153, 31,  2,   102, 78,  76,  176, 84,  245, 246, 184,
      177, 160, 133, 130, 6,   72,  149, 119, 192, 195, 132, 236, 234, 103, 246, 74};
  const std::array<uint8_t, 64> expected_16_byte_key = {
      39,  173, 46,  248, 30,  200, 82,  17,  48,  67,  254, 239, 37,  18,  13,  247,
      241, 200, 61,  144, 10,  55,  50,  185, 6,   47,  246, 253, 143, 86,  187, 225,
      134, 85,  110, 246, 161, 163, 43,  235, 231, 94,  171, 51,  145, 214, 112, 29,
      14,  232, 5,   16,  151, 140, 183, 141, 171, 9,   122, 181, 104, 182, 177, 193};
  EXPECT_EQ(ref::expand(spec_key(32), n), expected_32_byte_key);
  EXPECT_EQ(ref::expand(spec_key(16), n), expected_16_byte_key);
}

struct Salsa20Variant {
  const char *cipher_name;
  size_t key_len;
};

class Salsa20VsReferenceTest : public ::testing::TestWithParam<Salsa20Variant> {};

// Encrypting zeros from the start of the stream yields the keystream.
TEST_P(Salsa20VsReferenceTest, KeystreamFromCounterZero) {
  const wc_cipher *cipher = lookup(GetParam().cipher_name);
  ASSERT_NE(cipher, nullptr);
  const Bytes key = spec_key(GetParam().key_len);
  for (size_t length : {size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{64 * 5 + 7},
                        size_t{100000}}) {
    SCOPED_TRACE("length " + std::to_string(length));
    const LibResult got = lib_crypt(WC_ENCRYPT, cipher, key, spec_nonce(), Bytes(length, 0),
                                    make_options());
    ASSERT_EQ(got.status, WC_OK);
    EXPECT_TRUE(same_bytes(ref::keystream(key, spec_nonce(), 0, length), got.out));
  }
}

// The spec example's counter (bytes 109..116 = 0x74737271706f6e6d) is out of
// reach: its byte position overflows 64 bits. These block counters are not,
// and they cross the 2^32 carry between the two counter words, via
// random-access decryption of an all-zero ciphertext window.
TEST_P(Salsa20VsReferenceTest, KeystreamAtHighBlockCounters) {
  const wc_cipher *cipher = lookup(GetParam().cipher_name);
  ASSERT_NE(cipher, nullptr);
  TestRng rng = TestRng::for_current_test();
  const Bytes key = spec_key(GetParam().key_len);
  const wc_options options = make_options();
  const uint64_t largest_counter = (uint64_t{1} << 58) - 4;  // 4 blocks end at 2^64 - 64
  const uint64_t counters[] = {0xfffffffe, uint64_t{1} << 32, (uint64_t{1} << 40) - 1,
                               uint64_t{1} << 40, largest_counter,
                               rng.next() % largest_counter};
  for (uint64_t counter : counters) {
    for (uint64_t skip : {uint64_t{0}, uint64_t{17}}) {
      const uint64_t offset = counter * 64 + skip;
      const uint64_t length = 3 * 64 + 5;
      const uint64_t ciphertext_len = offset + length;
      SCOPED_TRACE("block counter " + std::to_string(counter) + " skip " + std::to_string(skip));
      const RangeWindow window = lib_range_window(cipher, ciphertext_len, offset, length);
      ASSERT_EQ(window.status, WC_OK);
      // A stream cipher needs exactly the ciphertext bytes of the range.
      EXPECT_EQ(window.offset, offset);
      EXPECT_EQ(window.length, length);
      const LibResult got = lib_decrypt_range(options, cipher, key, spec_nonce(),
                                              Bytes(length, 0), ciphertext_len, offset, length);
      ASSERT_EQ(got.status, WC_OK);
      const Bytes stream = ref::keystream(key, spec_nonce(), counter, skip + length);
      EXPECT_TRUE(same_bytes(Bytes(stream.begin() + static_cast<ptrdiff_t>(skip), stream.end()),
                             got.out));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Salsa20, Salsa20VsReferenceTest,
                         ::testing::Values(Salsa20Variant{"salsa20", 32},
                                           Salsa20Variant{"salsa20-128", 16}),
                         [](const ::testing::TestParamInfo<Salsa20Variant> &param_info) {
                           return param_info.param.key_len == 32 ? std::string("key32")
                                                           : std::string("key16");
                         });

class Salsa20VsLibsodiumTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_GE(sodium_init(), 0); }

  // libsodium's Salsa20 from block `counter` on, XORed into `in`.
  static Bytes sodium_xor(const Bytes &key, const Bytes &nonce, uint64_t counter,
                          const Bytes &in) {
    Bytes out(in.size() + 1);  // +1: libsodium wants valid pointers even for no bytes
    crypto_stream_salsa20_xor_ic(out.data(), data_or_dummy(in), in.size(), nonce.data(), counter,
                                 key.data());
    out.pop_back();
    return out;
  }
};

TEST_F(Salsa20VsLibsodiumTest, WholeMessagesBothDirections) {
  TestRng rng = TestRng::for_current_test();
  const wc_cipher *cipher = lookup("salsa20");
  ASSERT_NE(cipher, nullptr);
  for (size_t length : {size_t{0}, size_t{1}, size_t{64}, size_t{1000}, size_t{4096},
                        rng.uniform(1, 4096), size_t{3 * 1024 * 1024 + 5}}) {
    SCOPED_TRACE("length " + std::to_string(length));
    const Bytes key = rng.bytes(32);
    const Bytes nonce = rng.bytes(8);
    const Bytes message = rng.bytes(length);
    const Bytes expected = sodium_xor(key, nonce, 0, message);
    const LibResult encrypted = lib_crypt(WC_ENCRYPT, cipher, key, nonce, message, make_options());
    ASSERT_EQ(encrypted.status, WC_OK);
    EXPECT_TRUE(same_bytes(expected, encrypted.out));
    const LibResult decrypted = lib_crypt(WC_DECRYPT, cipher, key, nonce, expected, make_options());
    ASSERT_EQ(decrypted.status, WC_OK);
    EXPECT_TRUE(same_bytes(message, decrypted.out));
  }
}

// Random access at block counter ic equals libsodium's xor_ic with that ic,
// over a window long enough to be split across worker threads.
TEST_F(Salsa20VsLibsodiumTest, RangesStartingAtArbitraryBlockCounters) {
  TestRng rng = TestRng::for_current_test();
  const wc_cipher *cipher = lookup("salsa20");
  ASSERT_NE(cipher, nullptr);
  const wc_options options = make_options();
  for (uint64_t counter : {uint64_t{1}, uint64_t{0xffffffff} - 3, uint64_t{1} << 36,
                           rng.next() >> 8}) {
    SCOPED_TRACE("block counter " + std::to_string(counter));
    const Bytes key = rng.bytes(32);
    const Bytes nonce = rng.bytes(8);
    const Bytes window = rng.bytes(1024 * 1024 + 3);
    const uint64_t offset = counter * 64;
    const LibResult got = lib_decrypt_range(options, cipher, key, nonce, window,
                                            offset + window.size(), offset, window.size());
    ASSERT_EQ(got.status, WC_OK);
    EXPECT_TRUE(same_bytes(sodium_xor(key, nonce, counter, window), got.out));
  }
}

}  // namespace
}  // namespace wctest
