// Each way a call can be misused returns its own status, and (the header's
// promise) leaves zeros, not partial results, in the output buffer.
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/bytes.h"
#include "support/openssl_oracle.h"
#include "support/test_rng.h"
#include "support/warpcrypt_calls.h"

namespace wctest {
namespace {

constexpr uint8_t kPoison = 0xa5;  // what output buffers hold before a call

struct RawCall {
  wc_status status;
  Bytes out;  // the whole buffer, out_cap bytes, whatever the call left there
};

// wc_encrypt / wc_decrypt into a poisoned buffer of `out_cap` bytes.
RawCall raw_crypt(wc_direction direction, const wc_options &options, const wc_cipher *cipher,
                  size_t out_cap, const Bytes &key, const Bytes &iv, const Bytes &in) {
  RawCall call{WC_OK, Bytes(out_cap + 1, kPoison)};
  size_t out_len = 0;
  auto *function = direction == WC_ENCRYPT ? wc_encrypt : wc_decrypt;
  call.status = function(&options, cipher, call.out.data(), out_cap, &out_len,
                         data_or_dummy(key), key.size(), data_or_dummy(iv), iv.size(),
                         data_or_dummy(in), in.size());
  call.out.resize(out_cap);
  return call;
}

// The most a successful call could have written: what "zeroed" must cover.
size_t room_for(wc_direction direction, const wc_cipher *cipher,
                size_t in_len) {
  return direction == WC_ENCRYPT ? wc_encrypt_bound(cipher, in_len) : in_len;
}

TEST(ApiErrorsTest, WrongKeyLength) {
  struct Case {
    const char *cipher;
    size_t key_len;
  };
  const Case cases[] = {{"aes-128-cbc", 15}, {"aes-128-cbc", 17}, {"aes-128-ctr", 32},
                        {"aes-256-ecb", 16}, {"aes-192-cfb", 0},  {"chacha20", 16},
                        {"salsa20", 16},     {"salsa20-128", 32}};
  const wc_options options = make_options();
  const Bytes message(96, 0x42);
  for (const Case &c : cases) {
    SCOPED_TRACE(std::string(c.cipher) + " with a " + std::to_string(c.key_len) + "-byte key");
    const wc_cipher *cipher = lookup(c.cipher);
    ASSERT_NE(cipher, nullptr);
    const Bytes key(c.key_len, 0x01);
    const Bytes iv(wc_cipher_iv_len(cipher), 0x02);
    for (wc_direction direction : {WC_ENCRYPT, WC_DECRYPT}) {
      const RawCall call = raw_crypt(direction, options, cipher,
                                     room_for(direction, cipher, message.size()), key,
                                     iv, message);
      EXPECT_EQ(call.status, WC_ERR_KEY_LEN) << direction_name(direction);
      EXPECT_TRUE(all_zero(call.out.data(), call.out.size())) << direction_name(direction);
    }
    wc_ctx *ctx = nullptr;
    EXPECT_EQ(wc_ctx_new(&ctx, &options, cipher, WC_ENCRYPT, data_or_dummy(key), key.size(),
                         data_or_dummy(iv), iv.size()),
              WC_ERR_KEY_LEN);
    wc_ctx_free(ctx);
  }
}

TEST(ApiErrorsTest, WrongIvLength) {
  struct Case {
    const char *cipher;
    size_t iv_len;
  };
  // ECB takes no IV at all; ChaCha20's is OpenSSL's 16 bytes, not RFC 8439's 12.
  const Case cases[] = {{"aes-128-cbc", 15}, {"aes-128-cbc", 0},  {"aes-256-ctr", 17},
                        {"aes-128-ecb", 16}, {"aes-192-ofb", 8},  {"aes-128-cfb8", 32},
                        {"chacha20", 12},    {"salsa20", 16},     {"salsa20-128", 0}};
  const wc_options options = make_options();
  const Bytes message(96, 0x42);
  for (const Case &c : cases) {
    SCOPED_TRACE(std::string(c.cipher) + " with a " + std::to_string(c.iv_len) + "-byte IV");
    const wc_cipher *cipher = lookup(c.cipher);
    ASSERT_NE(cipher, nullptr);
    const Bytes key(wc_cipher_key_len(cipher), 0x01);
    const Bytes iv(c.iv_len, 0x02);
    for (wc_direction direction : {WC_ENCRYPT, WC_DECRYPT}) {
      const RawCall call = raw_crypt(direction, options, cipher,
                                     room_for(direction, cipher, message.size()), key,
                                     iv, message);
      EXPECT_EQ(call.status, WC_ERR_IV_LEN) << direction_name(direction);
      EXPECT_TRUE(all_zero(call.out.data(), call.out.size())) << direction_name(direction);
    }
    wc_ctx *ctx = nullptr;
    EXPECT_EQ(wc_ctx_new(&ctx, &options, cipher, WC_DECRYPT, key.data(), key.size(),
                         data_or_dummy(iv), iv.size()),
              WC_ERR_IV_LEN);
    wc_ctx_free(ctx);
  }
}

TEST(ApiErrorsTest, UnknownCipherNameGivesNull) {
  for (const char *name : {"", "aes", "aes-128", "aes-128-xts", "aes-128-gcm", "aes-128-cfb1",
                           "aes-512-cbc", "des-ede3-cbc", "chacha20-poly1305", "salsa20-256",
                           "aes-128-cbc ", " aes-128-cbc", "aes_128_cbc"}) {
    EXPECT_EQ(wc_cipher_by_name(name), nullptr) << '"' << name << '"';
  }
}

// Ciphertexts whose last block decrypts to an invalid PKCS#7 pad: a zero pad
// byte, a pad byte above 16, and a pad of 3 whose third byte is not 3.
std::vector<Bytes> plaintexts_with_bad_padding() {
  std::vector<Bytes> plaintexts;
  Bytes zero_pad(48, 0x5c);
  zero_pad.back() = 0x00;
  plaintexts.push_back(zero_pad);
  Bytes oversized_pad(32, 0x11);
  plaintexts.push_back(oversized_pad);
  Bytes inconsistent_pad(32, 0x5c);
  inconsistent_pad[29] = 0x02;
  inconsistent_pad[30] = 0x03;
  inconsistent_pad[31] = 0x03;
  plaintexts.push_back(inconsistent_pad);
  return plaintexts;
}

TEST(ApiErrorsTest, BadPaddingOnDecryptIsRejectedAndOutputZeroed) {
  TestRng rng = TestRng::for_current_test();
  const wc_options padded = make_options();
  for (const char *name : {"aes-128-ecb", "aes-256-ecb", "aes-128-cbc", "aes-192-cbc"}) {
    const wc_cipher *cipher = lookup(name);
    ASSERT_NE(cipher, nullptr);
    const Bytes key = rng.bytes(wc_cipher_key_len(cipher));
    const Bytes iv = rng.bytes(wc_cipher_iv_len(cipher));
    for (const Bytes &bad_plaintext : plaintexts_with_bad_padding()) {
      SCOPED_TRACE(std::string(name) + ", last plaintext block " +
                   to_hex(bad_plaintext.data() + bad_plaintext.size() - 16, 16));
      const auto ciphertext =
          openssl_crypt(name, WC_ENCRYPT, key, iv, bad_plaintext, /*padding=*/false);
      ASSERT_TRUE(ciphertext.has_value());
      // OpenSSL agrees these do not decrypt, so the test is about the library.
      ASSERT_FALSE(openssl_crypt(name, WC_DECRYPT, key, iv, *ciphertext, true).has_value());

      const RawCall call = raw_crypt(WC_DECRYPT, padded, cipher, ciphertext->size(), key, iv,
                                     *ciphertext);
      EXPECT_EQ(call.status, WC_ERR_BAD_DECRYPT);
      EXPECT_TRUE(all_zero(call.out.data(), call.out.size()))
          << "a failed decryption must not leave plaintext behind";

      // The streaming path finds it at wc_ctx_final.
      const LibResult streamed =
          lib_stream(WC_DECRYPT, cipher, key, iv, *ciphertext, {ciphertext->size()}, padded);
      EXPECT_EQ(streamed.status, WC_ERR_BAD_DECRYPT);
    }
  }
}

TEST(ApiErrorsTest, NoPaddingNeedsWholeBlocks) {
  const wc_options defaults = make_options();
  for (const char *name : {"aes-128-ecb", "aes-256-cbc"}) {
    const wc_cipher *cipher = wc_cipher_unpadded(lookup(name));
    ASSERT_NE(cipher, nullptr);
    const Bytes key(wc_cipher_key_len(cipher), 0x01);
    const Bytes iv(wc_cipher_iv_len(cipher), 0x02);
    for (size_t length : {1, 15, 17, 33, 4095}) {
      const Bytes input(length, 0x42);
      for (wc_direction direction : {WC_ENCRYPT, WC_DECRYPT}) {
        SCOPED_TRACE(std::string(name) + " " + direction_name(direction) + " of " +
                     std::to_string(length) + " bytes");
        const RawCall call = raw_crypt(direction, defaults, cipher,
                                       room_for(direction, cipher, length), key, iv,
                                       input);
        EXPECT_EQ(call.status, WC_ERR_NOT_BLOCK_ALIGNED);
        EXPECT_TRUE(all_zero(call.out.data(), call.out.size()));
        // Streaming accepts the pieces and refuses at wc_ctx_final.
        const LibResult streamed =
            lib_stream(direction, cipher, key, iv, input, {length / 2, length - length / 2},
                       defaults);
        EXPECT_EQ(streamed.status, WC_ERR_NOT_BLOCK_ALIGNED);
      }
    }
  }
}

TEST(ApiErrorsTest, OutputBufferTooSmall) {
  const wc_options options = make_options();
  const Bytes message(1000, 0x42);
  for (const char *name : {"aes-128-cbc", "aes-128-ecb", "aes-128-ctr", "aes-256-cfb8",
                           "chacha20", "salsa20"}) {
    const wc_cipher *cipher = lookup(name);
    ASSERT_NE(cipher, nullptr);
    const Bytes key(wc_cipher_key_len(cipher), 0x01);
    const Bytes iv(wc_cipher_iv_len(cipher), 0x02);
    const LibResult ciphertext = lib_crypt(WC_ENCRYPT, cipher, key, iv, message, options);
    ASSERT_EQ(ciphertext.status, WC_OK) << name;

    SCOPED_TRACE(name);
    const size_t bound = wc_encrypt_bound(cipher, message.size());
    EXPECT_GE(bound, ciphertext.out.size());
    const RawCall encrypt = raw_crypt(WC_ENCRYPT, options, cipher, bound - 1, key, iv, message);
    EXPECT_EQ(encrypt.status, WC_ERR_OUTPUT_TOO_SMALL);
    EXPECT_TRUE(all_zero(encrypt.out.data(), encrypt.out.size()));

    // Smaller than the plaintext itself, so too small for any reading of the rule.
    const RawCall decrypt =
        raw_crypt(WC_DECRYPT, options, cipher, message.size() - 1, key, iv, ciphertext.out);
    EXPECT_EQ(decrypt.status, WC_ERR_OUTPUT_TOO_SMALL);
    EXPECT_TRUE(all_zero(decrypt.out.data(), decrypt.out.size()));

    // A streaming update is held to wc_ctx_update_bound.
    wc_ctx *ctx = nullptr;
    ASSERT_EQ(wc_ctx_new(&ctx, &options, cipher, WC_ENCRYPT, key.data(), key.size(),
                         data_or_dummy(iv), iv.size()),
              WC_OK);
    const size_t update_bound = wc_ctx_update_bound(ctx, message.size());
    Bytes out(update_bound, kPoison);
    size_t out_len = 0;
    EXPECT_EQ(wc_ctx_update(ctx, out.data(), update_bound - 1, &out_len, message.data(),
                            message.size()),
              WC_ERR_OUTPUT_TOO_SMALL);
    EXPECT_TRUE(all_zero(out.data(), update_bound - 1));
    wc_ctx_free(ctx);
  }
}

// Opens a context for an AES-128 mode with a 16-byte IV, padding on.
wc_ctx *new_aes128_context(const char *name, wc_direction direction) {
  const wc_options options = make_options();
  const Bytes key(16, 0x01);
  const Bytes iv(16, 0x02);
  wc_ctx *ctx = nullptr;
  EXPECT_EQ(wc_ctx_new(&ctx, &options, lookup(name), direction, key.data(), key.size(),
                       iv.data(), iv.size()),
            WC_OK);
  return ctx;
}

TEST(ApiErrorsTest, ContextUsedAfterFinal) {
  wc_ctx *ctx = new_aes128_context("aes-128-cbc", WC_ENCRYPT);
  ASSERT_NE(ctx, nullptr);
  const Bytes message(40, 0x42);
  Bytes out(256, 0);
  size_t out_len = 0;
  ASSERT_EQ(wc_ctx_update(ctx, out.data(), out.size(), &out_len, message.data(), message.size()),
            WC_OK);
  ASSERT_EQ(wc_ctx_final(ctx, out.data(), out.size(), &out_len), WC_OK);

  EXPECT_EQ(wc_ctx_update(ctx, out.data(), out.size(), &out_len, message.data(), message.size()),
            WC_ERR_CONTEXT_STATE);
  EXPECT_EQ(wc_ctx_final(ctx, out.data(), out.size(), &out_len), WC_ERR_CONTEXT_STATE);
  wc_ctx_free(ctx);
}

TEST(ApiErrorsTest, ContextIsDeadAfterAnError) {
  wc_ctx *ctx = new_aes128_context("aes-128-ctr", WC_ENCRYPT);
  ASSERT_NE(ctx, nullptr);
  const Bytes block(16, 0x42);
  Bytes out(256, 0);
  size_t out_len = 0;
  // Too little room: the update fails, and from then on the context refuses work.
  ASSERT_EQ(wc_ctx_update(ctx, out.data(), 0, &out_len, block.data(), block.size()),
            WC_ERR_OUTPUT_TOO_SMALL);
  EXPECT_EQ(wc_ctx_update(ctx, out.data(), out.size(), &out_len, block.data(), block.size()),
            WC_ERR_CONTEXT_STATE);
  EXPECT_EQ(wc_ctx_final(ctx, out.data(), out.size(), &out_len), WC_ERR_CONTEXT_STATE);
  wc_ctx_free(ctx);
}

TEST(ApiErrorsTest, NullPointersAreInvalidArguments) {
  const wc_options options = make_options();
  const wc_cipher *cipher = lookup("aes-128-ctr");
  ASSERT_NE(cipher, nullptr);
  const Bytes key(16, 0x01);
  const Bytes iv(16, 0x02);
  const Bytes message(64, 0x42);
  Bytes out(64, kPoison);
  size_t out_len = 0;
  EXPECT_EQ(wc_encrypt(&options, cipher, out.data(), out.size(), &out_len, key.data(),
                       key.size(), iv.data(), iv.size(), nullptr, message.size()),
            WC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(all_zero(out.data(), out.size()));
  EXPECT_EQ(wc_encrypt(&options, cipher, out.data(), out.size(), nullptr, key.data(),
                       key.size(), iv.data(), iv.size(), message.data(), message.size()),
            WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_encrypt(&options, cipher, nullptr, out.size(), &out_len, key.data(), key.size(),
                       iv.data(), iv.size(), message.data(), message.size()),
            WC_ERR_INVALID_ARGUMENT);
  // A NULL cipher is what a failed wc_cipher_by_name returns: the header
  // names it WC_ERR_UNKNOWN_CIPHER rather than a plain invalid argument.
  EXPECT_EQ(wc_encrypt(&options, nullptr, out.data(), out.size(), &out_len, key.data(),
                       key.size(), iv.data(), iv.size(), message.data(), message.size()),
            WC_ERR_UNKNOWN_CIPHER);
  EXPECT_EQ(wc_encrypt(&options, cipher, out.data(), out.size(), &out_len, nullptr, key.size(),
                       iv.data(), iv.size(), message.data(), message.size()),
            WC_ERR_INVALID_ARGUMENT);
}

// out == in is allowed; any other overlap is not.
TEST(ApiErrorsTest, PartiallyOverlappingBuffersAreInvalidArguments) {
  const wc_options options = make_options();
  const wc_cipher *cipher = lookup("aes-128-ctr");
  ASSERT_NE(cipher, nullptr);
  const Bytes key(16, 0x01);
  const Bytes iv(16, 0x02);
  Bytes buffer(200, 0x42);
  size_t out_len = 0;
  for (size_t shift : {1, 16, 99}) {
    SCOPED_TRACE("out = in + " + std::to_string(shift));
    EXPECT_EQ(wc_encrypt(&options, cipher, buffer.data() + shift, 100, &out_len, key.data(),
                         key.size(), iv.data(), iv.size(), buffer.data(), 100),
              WC_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(wc_decrypt(&options, cipher, buffer.data(), 100, &out_len, key.data(),
                         key.size(), iv.data(), iv.size(), buffer.data() + shift, 100),
              WC_ERR_INVALID_ARGUMENT);
  }
}

}  // namespace
}  // namespace wctest
