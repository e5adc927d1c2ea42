// Passphrase key derivation must give exactly the key and IV `openssl enc`
// derives, so files interoperate. The expected values come from OpenSSL's
// PKCS5_PBKDF2_HMAC and EVP_BytesToKey called here directly.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include "support/bytes.h"
#include "support/cipher_table.h"
#include "support/test_rng.h"
#include "support/warpcrypt_calls.h"

namespace wctest {
namespace {

struct KeyIv {
  Bytes key;
  Bytes iv;
};

// `openssl enc -pbkdf2`: one PBKDF2 output split into key then IV.
KeyIv openssl_pbkdf2(const CipherSpec &spec, const std::string &digest, uint32_t iterations,
                     const std::string &passphrase, const Bytes &salt) {
  Bytes derived(spec.key_len + spec.iv_len);
  const EVP_MD *md = EVP_get_digestbyname(digest.c_str());
  EXPECT_NE(md, nullptr) << digest;
  EXPECT_EQ(PKCS5_PBKDF2_HMAC(passphrase.data(), static_cast<int>(passphrase.size()),
                              salt.empty() ? nullptr : salt.data(), static_cast<int>(salt.size()),
                              static_cast<int>(iterations), md, static_cast<int>(derived.size()),
                              derived.data()),
            1);
  const auto split = derived.begin() + static_cast<ptrdiff_t>(spec.key_len);
  return {Bytes(derived.begin(), split), Bytes(split, derived.end())};
}

// `openssl enc` without -pbkdf2. EVP_BytesToKey produces key bytes then IV
// bytes from one digest chain, so an AES-CBC cipher with the same key length
// gives our key, and the first iv_len bytes of its 16-byte IV give our IV;
// that also covers Salsa20's 8-byte nonce, which no EVP cipher has.
KeyIv openssl_bytes_to_key(const CipherSpec &spec, const std::string &digest,
                           uint32_t iterations, const std::string &passphrase,
                           const Bytes &salt) {
  const std::string same_key_len = "aes-" + std::to_string(spec.key_len * 8) + "-cbc";
  const EVP_CIPHER *cipher = EVP_get_cipherbyname(same_key_len.c_str());
  const EVP_MD *md = EVP_get_digestbyname(digest.c_str());
  EXPECT_NE(cipher, nullptr);
  EXPECT_NE(md, nullptr) << digest;
  Bytes key(EVP_MAX_KEY_LENGTH);
  Bytes iv(EVP_MAX_IV_LENGTH);
  EXPECT_EQ(EVP_BytesToKey(cipher, md, salt.empty() ? nullptr : salt.data(),
                           reinterpret_cast<const unsigned char *>(passphrase.data()),
                           static_cast<int>(passphrase.size()), static_cast<int>(iterations),
                           key.data(), iv.data()),
            static_cast<int>(spec.key_len));
  key.resize(spec.key_len);
  iv.resize(spec.iv_len);
  return {key, iv};
}

KeyIv derive(const CipherSpec &spec, wc_kdf kdf, const std::string &digest, uint32_t iterations,
             const std::string &passphrase, const Bytes &salt, wc_status *status) {
  KeyIv out{Bytes(spec.key_len, 0xa5), Bytes(spec.iv_len, 0xa5)};
  *status = wc_derive_key_iv(lookup(spec.name), out.key.data(), out.key.size(),
                             out.iv.empty() ? nullptr : out.iv.data(), out.iv.size(), kdf,
                             digest.c_str(), iterations,
                             reinterpret_cast<const uint8_t *>(passphrase.data()),
                             passphrase.size(), salt.empty() ? nullptr : salt.data(),
                             salt.size());
  return out;
}

const char *const kCiphers[] = {"aes-128-cbc", "aes-192-ecb", "aes-256-ctr",
                                "chacha20",    "salsa20",     "salsa20-128"};

TEST(KeyDerivationTest, Pbkdf2MatchesOpenSsl) {
  TestRng rng = TestRng::for_current_test();
  for (const char *name : kCiphers) {
    const CipherSpec &spec = cipher_spec(name);
    for (const char *digest : {"sha256", "sha1", "sha512", "md5"}) {
      for (uint32_t iterations : {1u, 1000u, static_cast<uint32_t>(WC_PBKDF2_DEFAULT_ITERATIONS)}) {
        for (const Bytes &salt : {rng.bytes(WC_SALT_LEN), Bytes{}}) {
          const std::string passphrase = "correct horse " + to_hex(rng.bytes(3));
          SCOPED_TRACE(std::string(name) + " " + digest + " iter " +
                       std::to_string(iterations) + " salt '" + to_hex(salt) + "' pass '" +
                       passphrase + "'");
          wc_status status = WC_OK;
          const KeyIv got =
              derive(spec, WC_KDF_PBKDF2, digest, iterations, passphrase, salt, &status);
          ASSERT_EQ(status, WC_OK);
          const KeyIv expected = openssl_pbkdf2(spec, digest, iterations, passphrase, salt);
          EXPECT_EQ(to_hex(got.key), to_hex(expected.key));
          EXPECT_EQ(to_hex(got.iv), to_hex(expected.iv));
        }
      }
    }
  }
}

TEST(KeyDerivationTest, LegacyBytesToKeyMatchesOpenSsl) {
  TestRng rng = TestRng::for_current_test();
  for (const char *name : kCiphers) {
    const CipherSpec &spec = cipher_spec(name);
    for (const char *digest : {"sha256", "md5", "sha1"}) {
      for (uint32_t iterations : {1u, 3u}) {
        for (const Bytes &salt : {rng.bytes(WC_SALT_LEN), Bytes{}}) {
          const std::string passphrase = "legacy " + to_hex(rng.bytes(5));
          SCOPED_TRACE(std::string(name) + " " + digest + " iter " +
                       std::to_string(iterations) + " salt '" + to_hex(salt) + "'");
          wc_status status = WC_OK;
          const KeyIv got =
              derive(spec, WC_KDF_LEGACY, digest, iterations, passphrase, salt, &status);
          ASSERT_EQ(status, WC_OK);
          const KeyIv expected = openssl_bytes_to_key(spec, digest, iterations, passphrase, salt);
          EXPECT_EQ(to_hex(got.key), to_hex(expected.key));
          EXPECT_EQ(to_hex(got.iv), to_hex(expected.iv));
        }
      }
    }
  }
}

TEST(KeyDerivationTest, UnknownDigestIsRejected) {
  const CipherSpec &spec = cipher_spec("aes-256-cbc");
  const Bytes salt(WC_SALT_LEN, 0x01);
  for (wc_kdf kdf : {WC_KDF_PBKDF2, WC_KDF_LEGACY}) {
    for (const char *digest : {"no-such-digest", "", "sha3"}) {
      wc_status status = WC_OK;
      const KeyIv got = derive(spec, kdf, digest, 1, "passphrase", salt, &status);
      EXPECT_EQ(status, WC_ERR_DIGEST) << '"' << digest << '"';
      EXPECT_TRUE(all_zero(got.key.data(), got.key.size())) << '"' << digest << '"';
      EXPECT_TRUE(all_zero(got.iv.data(), got.iv.size())) << '"' << digest << '"';
    }
  }
}

// Lengths must be the cipher's exactly; OpenSSL would zero-pad, we refuse.
TEST(KeyDerivationTest, KeyAndIvLengthsMustMatchTheCipher) {
  const wc_cipher *cipher = lookup("aes-128-cbc");
  ASSERT_NE(cipher, nullptr);
  const std::string passphrase = "passphrase";
  const auto *pass = reinterpret_cast<const uint8_t *>(passphrase.data());
  uint8_t key[32];
  uint8_t iv[16];
  EXPECT_EQ(wc_derive_key_iv(cipher, key, 32, iv, 16, WC_KDF_PBKDF2, "sha256", 1, pass,
                             passphrase.size(), nullptr, 0),
            WC_ERR_KEY_LEN);
  EXPECT_EQ(wc_derive_key_iv(cipher, key, 16, iv, 8, WC_KDF_PBKDF2, "sha256", 1, pass,
                             passphrase.size(), nullptr, 0),
            WC_ERR_IV_LEN);
}

}  // namespace
}  // namespace wctest
