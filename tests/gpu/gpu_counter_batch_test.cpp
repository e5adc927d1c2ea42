// Counter carries on the GPU, CBC/CFB encryption batches, and which backend
// the dispatch policy picks.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "gpu_support.h"
#include "support/cipher_table.h"
#include "support/openssl_oracle.h"
#include "support/test_rng.h"
#include "support/warpcrypt_calls.h"

namespace wctest {
namespace {

// AES-CTR's 128-bit big-endian counter must carry across the 2^32, 2^64 and
// 2^128 boundaries exactly as OpenSSL carries it; several MiB put the carry
// inside one GPU launch.
TEST(GpuCounterCarry, AesCtrMatchesOpenSsl) {
  WCTEST_REQUIRE_GPU();
  TestRng rng = TestRng::for_current_test();
  struct Start {
    const char *name;
    Bytes iv;
  };
  auto iv_with_tail = [&](size_t ff_bytes, uint8_t last) {
    Bytes iv = rng.bytes(16);
    for (size_t i = 16 - ff_bytes; i < 16; ++i) iv[i] = 0xff;
    iv[15] = last;
    return iv;
  };
  const Start starts[] = {{"2^32", iv_with_tail(4, 0x80)},
                          {"2^64", iv_with_tail(8, 0x80)},
                          {"2^128 - 1", Bytes(16, 0xff)},
                          {"2^128 - 200", iv_with_tail(16, 0x38)}};
  for (const char *cipher_name : {"aes-128-ctr", "aes-192-ctr", "aes-256-ctr"}) {
    for (const Start &start : starts) {
      SCOPED_TRACE(std::string(cipher_name) + " near " + start.name);
      const Bytes key = rng.bytes(wc_cipher_key_len(lookup(cipher_name)));
      const Bytes plaintext = rng.bytes((size_t{5} << 20) + 3);
      const auto expected = openssl_crypt(cipher_name, WC_ENCRYPT, key, start.iv, plaintext, false);
      ASSERT_TRUE(expected.has_value());
      const LibResult got = lib_crypt(WC_ENCRYPT, lookup(cipher_name), key, start.iv, plaintext,
                                      make_options(0, WC_BACKEND_GPU));
      ASSERT_EQ(got.status, WC_OK);
      EXPECT_TRUE(same_bytes(*expected, got.out));
    }
  }
}

// The CTR kernel computes its first two rounds once per group of 256
// counters (those that differ only in byte 15) for each warp's tile, so a
// group ends after whichever lane the IV's last byte puts it: every value of
// that byte, with bytes 12-14 at 0xff so that the first group also carries
// into the top 96 bits, over several whole tiles (16 KiB each).
TEST(GpuCounterCarry, AesCtrEveryLastIvByteMatchesOpenSsl) {
  WCTEST_REQUIRE_GPU();
  TestRng rng = TestRng::for_current_test();
  for (const char *cipher_name : {"aes-128-ctr", "aes-256-ctr"}) {
    const Bytes key = rng.bytes(wc_cipher_key_len(lookup(cipher_name)));
    const Bytes plaintext = rng.bytes(3 * 16 * 1024 + 5);
    Bytes iv = rng.bytes(16);
    iv[12] = iv[13] = iv[14] = 0xff;
    for (int last = 0; last < 256; ++last) {
      iv[15] = static_cast<uint8_t>(last);
      const auto expected = openssl_crypt(cipher_name, WC_ENCRYPT, key, iv, plaintext, false);
      ASSERT_TRUE(expected.has_value());
      const LibResult got =
          lib_crypt(WC_ENCRYPT, lookup(cipher_name), key, iv, plaintext, make_options(0, WC_BACKEND_GPU));
      ASSERT_EQ(got.status, WC_OK);
      ASSERT_TRUE(same_bytes(*expected, got.out)) << cipher_name << ", last IV byte " << last;
    }
  }
}

// OpenSSL's ChaCha20 carries its 32-bit block counter into the first nonce
// word; the GPU's 64-bit counter must agree, including the wrap at 2^64.
TEST(GpuCounterCarry, ChaCha20MatchesOpenSsl) {
  WCTEST_REQUIRE_GPU();
  TestRng rng = TestRng::for_current_test();
  for (uint32_t high_word : {0u, 0xffffffffu}) {
    Bytes iv = rng.bytes(16);
    const uint32_t counter = 0xffffffffu - 1000;
    for (int i = 0; i < 4; ++i) iv[i] = static_cast<uint8_t>(counter >> (8 * i));
    for (int i = 0; i < 4; ++i) iv[4 + i] = static_cast<uint8_t>(high_word >> (8 * i));
    const Bytes key = rng.bytes(32);
    const Bytes plaintext = rng.bytes((size_t{3} << 20) + 11);
    const auto expected = openssl_crypt("chacha20", WC_ENCRYPT, key, iv, plaintext, false);
    ASSERT_TRUE(expected.has_value());
    const LibResult got =
        lib_crypt(WC_ENCRYPT, lookup("chacha20"), key, iv, plaintext, make_options(0, WC_BACKEND_GPU));
    ASSERT_EQ(got.status, WC_OK);
    EXPECT_TRUE(same_bytes(*expected, got.out)) << "nonce word 0 = " << high_word;
  }
}

// 10,000 independent messages of random lengths, one per GPU thread, each
// checked against OpenSSL.
class GpuBatch : public ::testing::TestWithParam<std::tuple<std::string, bool>> {
 protected:
  void SetUp() override { WCTEST_REQUIRE_GPU(); }
};

TEST_P(GpuBatch, TenThousandMessagesMatchOpenSsl) {
  const auto &[cipher_name, padding] = GetParam();
  const wc_cipher *cipher = with_padding(lookup(cipher_name), padding);
  const bool cbc = cipher_name.find("cbc") != std::string::npos;
  TestRng rng = TestRng::for_current_test();
  const size_t count = 10000;

  std::vector<wc_batch_message> messages(count);
  std::vector<Bytes> plaintexts(count);
  Bytes input, ivs = rng.bytes(16 * count);
  size_t out_total = 0;
  for (size_t i = 0; i < count; ++i) {
    size_t len = rng.uniform(0, 700);
    if (cbc && !padding) len = len / 16 * 16;
    plaintexts[i] = rng.bytes(len);
    messages[i] = {input.size(), len, out_total};
    input.insert(input.end(), plaintexts[i].begin(), plaintexts[i].end());
    out_total += wc_encrypt_bound(cipher, len);
  }
  const Bytes key = rng.bytes(wc_cipher_key_len(cipher));
  DeviceBuffer in(input.size()), out(out_total);
  in.upload(input);
  ASSERT_EQ(wc_batch_encrypt_device_async(cipher, out.at(0), in.at(0), messages.data(), count,
                                          key.data(), key.size(), ivs.data(), nullptr),
            WC_OK);
  synchronize_device();
  const Bytes output = out.download(out_total);
  EXPECT_TRUE(out.guard_bytes_intact(out_total));
  for (size_t i = 0; i < count; ++i) {
    const Bytes iv(ivs.begin() + 16 * i, ivs.begin() + 16 * (i + 1));
    const auto expected = openssl_crypt(cipher_name, WC_ENCRYPT, key, iv, plaintexts[i], padding);
    ASSERT_TRUE(expected.has_value());
    const Bytes got(output.begin() + messages[i].out_offset,
                    output.begin() + messages[i].out_offset + expected->size());
    ASSERT_TRUE(same_bytes(*expected, got)) << "message " << i << " of length " << plaintexts[i].size();
  }
}

INSTANTIATE_TEST_SUITE_P(Ciphers, GpuBatch,
                         ::testing::Values(std::make_tuple("aes-128-cbc", true), std::make_tuple("aes-192-cbc", true),
                                           std::make_tuple("aes-256-cbc", true), std::make_tuple("aes-256-cbc", false),
                                           std::make_tuple("aes-128-cfb", false), std::make_tuple("aes-192-cfb", false),
                                           std::make_tuple("aes-256-cfb", false)),
                         [](const auto &param_info) {
                           return identifier_from(std::get<0>(param_info.param)) +
                                  (std::get<1>(param_info.param) ? "_padded" : "_unpadded");
                         });

// Which backend runs, asked of the context after the work. The answers
// without a device are checked by the unit tests (backend_test.cpp).
enum class Memory { pageable, page_locked };

wc_backend backend_after_update(const char *cipher_name, wc_direction direction, wc_backend requested,
                                size_t len, wc_status *status, Memory memory = Memory::pageable) {
  const wc_cipher *cipher = wc_cipher_unpadded(lookup(cipher_name));
  const Bytes key(wc_cipher_key_len(cipher), 7), iv(wc_cipher_iv_len(cipher), 9);
  const wc_options options = make_options(0, requested);
  wc_ctx *ctx = nullptr;
  *status = wc_ctx_new(&ctx, &options, cipher, direction, key.data(), key.size(), data_or_dummy(iv), iv.size());
  if (*status != WC_OK) return WC_BACKEND_AUTO;
  const size_t cap = len + 16;
  Bytes pageable;
  uint8_t *buffer = nullptr;
  if (memory == Memory::page_locked) {
    EXPECT_EQ(cudaMallocHost(reinterpret_cast<void **>(&buffer), cap), cudaSuccess);
  } else {
    pageable.assign(cap, 0x5a);
    buffer = pageable.data();
  }
  size_t produced = 0;
  *status = wc_ctx_update(ctx, buffer, cap, &produced, buffer, len);
  const wc_backend ran = wc_ctx_backend(ctx);
  wc_ctx_free(ctx);
  if (memory == Memory::page_locked) cudaFreeHost(buffer);
  return ran;
}

TEST(GpuDispatch, AutoPicksByDeviceAndSize) {
  WCTEST_REQUIRE_GPU();
  wc_status status;
  const Memory pinned = Memory::page_locked;
  for (const char *name : {"chacha20", "salsa20", "aes-256-cfb"}) {
    SCOPED_TRACE(name);
    const wc_direction direction = std::string(name).find("cfb") != std::string::npos ? WC_DECRYPT : WC_ENCRYPT;
    const size_t break_even = wc_auto_gpu_min_bytes(lookup(name), direction);
    ASSERT_LT(break_even, size_t{64} << 20);
    EXPECT_EQ(backend_after_update(name, direction, WC_BACKEND_AUTO, break_even, &status, pinned), WC_BACKEND_GPU);
    EXPECT_EQ(status, WC_OK);
    EXPECT_EQ(backend_after_update(name, direction, WC_BACKEND_AUTO, break_even - 64, &status, pinned),
              WC_BACKEND_CPU);
    // Pageable memory stays on the CPU: staging it is slower than all cores.
    EXPECT_EQ(backend_after_update(name, direction, WC_BACKEND_AUTO, break_even, &status), WC_BACKEND_CPU);
  }
  // Where all CPU cores beat the GPU at every size, auto never moves.
  EXPECT_EQ(wc_auto_gpu_min_bytes(lookup("aes-128-ctr"), WC_ENCRYPT), SIZE_MAX);
  EXPECT_EQ(backend_after_update("aes-128-ctr", WC_ENCRYPT, WC_BACKEND_AUTO, size_t{64} << 20, &status, pinned),
            WC_BACKEND_CPU);
  // Sequential modes never leave the CPU.
  EXPECT_EQ(wc_auto_gpu_min_bytes(lookup("aes-128-cbc"), WC_ENCRYPT), SIZE_MAX);
  EXPECT_EQ(backend_after_update("aes-128-cbc", WC_ENCRYPT, WC_BACKEND_AUTO, size_t{1} << 20, &status, pinned),
            WC_BACKEND_CPU);
  EXPECT_EQ(status, WC_OK);
}

TEST(GpuDispatch, ExplicitGpuRunsThereOrFails) {
  WCTEST_REQUIRE_GPU();
  wc_status status;
  const wc_backend ran = backend_after_update("chacha20", WC_ENCRYPT, WC_BACKEND_GPU, 4096, &status);
  EXPECT_EQ(status, WC_OK);
  EXPECT_EQ(ran, WC_BACKEND_GPU);
  backend_after_update("aes-128-cbc", WC_ENCRYPT, WC_BACKEND_GPU, 4096, &status);
  EXPECT_EQ(status, WC_ERR_BACKEND_UNAVAILABLE);
  backend_after_update("aes-128-ofb", WC_DECRYPT, WC_BACKEND_GPU, 4096, &status);
  EXPECT_EQ(status, WC_ERR_BACKEND_UNAVAILABLE);
}

}  // namespace
}  // namespace wctest
