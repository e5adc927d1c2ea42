// The cipher registry against the tests' own table (support/cipher_table.cpp):
// every name the header lists is found, in any case, with the right sizes.
#include <openssl/crypto.h>

#include <cctype>
#include <optional>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "support/cipher_table.h"
#include "support/openssl_oracle.h"
#include "support/warpcrypt_calls.h"

namespace wctest {
namespace {

std::string upper_case(std::string text) {
  for (char &c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

// "aes-128-cbc" -> "Aes-128-Cbc", "chacha20" -> "Chacha20".
std::string title_case(std::string text) {
  bool word_start = true;
  for (char &c : text) {
    if (word_start) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    word_start = c == '-';
  }
  return text;
}

TEST(RegistryTest, EveryCipherHasTheRightSizesAndTraits) {
  for (const CipherSpec &spec : all_cipher_specs()) {
    SCOPED_TRACE(spec.name);
    const wc_cipher *cipher = lookup(spec.name);
    ASSERT_NE(cipher, nullptr);
    EXPECT_STREQ(wc_cipher_name(cipher), spec.name.c_str());
    EXPECT_EQ(wc_cipher_key_len(cipher), spec.key_len);
    EXPECT_EQ(wc_cipher_iv_len(cipher), spec.iv_len);
    EXPECT_EQ(wc_cipher_block_len(cipher), spec.block_len);
    EXPECT_EQ(wc_cipher_is_padded(cipher) != 0, spec.padded);
    EXPECT_EQ(wc_cipher_has_random_access(cipher) != 0, spec.random_access);
    EXPECT_LE(wc_cipher_key_len(cipher), size_t{WC_MAX_KEY_LEN});
    EXPECT_LE(wc_cipher_iv_len(cipher), size_t{WC_MAX_IV_LEN});
    EXPECT_LE(wc_cipher_block_len(cipher), size_t{WC_MAX_BLOCK_LEN});
  }
}

TEST(RegistryTest, LookupIgnoresCase) {
  for (const CipherSpec &spec : all_cipher_specs()) {
    const wc_cipher *canonical = lookup(spec.name);
    ASSERT_NE(canonical, nullptr) << spec.name;
    EXPECT_EQ(lookup(upper_case(spec.name)), canonical) << upper_case(spec.name);
    EXPECT_EQ(lookup(title_case(spec.name)), canonical) << title_case(spec.name);
  }
}

TEST(RegistryTest, OpenSslAliasesNameCbc) {
  for (int bits : {128, 192, 256}) {
    const std::string alias = "aes" + std::to_string(bits);
    const wc_cipher *cbc = lookup("aes-" + std::to_string(bits) + "-cbc");
    ASSERT_NE(cbc, nullptr);
    EXPECT_EQ(lookup(alias), cbc) << alias;
    EXPECT_EQ(lookup(upper_case(alias)), cbc) << upper_case(alias);
  }
}

TEST(RegistryTest, IterationVisitsEveryCipherOnce) {
  std::set<std::string> listed;
  for (size_t i = 0; i < wc_cipher_count(); ++i) {
    const wc_cipher *cipher = wc_cipher_at(i);
    ASSERT_NE(cipher, nullptr) << "index " << i;
    EXPECT_TRUE(listed.insert(wc_cipher_name(cipher)).second)
        << wc_cipher_name(cipher) << " listed twice";
    EXPECT_EQ(lookup(wc_cipher_name(cipher)), cipher);
  }
  for (const CipherSpec &spec : all_cipher_specs()) {
    EXPECT_EQ(listed.count(spec.name), 1u) << spec.name << " missing from the iteration";
  }
}

TEST(RegistryTest, StatusStringsAndVersion) {
  std::set<std::string> texts;
  for (size_t status = 0; status < wc_status_count(); ++status) {
    const char *text = wc_status_string(static_cast<wc_status>(status));
    ASSERT_NE(text, nullptr) << status;
    EXPECT_STRNE(text, "unknown status") << status;
    EXPECT_TRUE(texts.insert(text).second) << "status " << status << " shares its text";
  }
  const std::string expected_version = std::to_string(WARPCRYPT_VERSION_MAJOR) + "." +
                                       std::to_string(WARPCRYPT_VERSION_MINOR) + "." +
                                       std::to_string(WARPCRYPT_VERSION_PATCH);
  EXPECT_STREQ(wc_version(), expected_version.c_str());
  EXPECT_STREQ(wc_openssl_version(), OpenSSL_version(OPENSSL_VERSION));
}

// wc_status_name gives the header's identifiers without WC_ERR_ or WC_, and
// wc_status_count reaches exactly the end of the enum: the first code past it
// has neither a name nor a text.
TEST(RegistryTest, StatusNamesAndCount) {
  EXPECT_STREQ(wc_status_name(WC_OK), "OK");
  EXPECT_STREQ(wc_status_name(WC_ERR_INVALID_ARGUMENT), "INVALID_ARGUMENT");
  EXPECT_STREQ(wc_status_name(WC_ERR_KEY_LEN), "KEY_LEN");
  EXPECT_STREQ(wc_status_name(WC_ERR_AUTH), "AUTH");
  EXPECT_STREQ(wc_status_name(WC_ERR_FORMAT), "FORMAT");
  EXPECT_GT(wc_status_count(), static_cast<size_t>(WC_ERR_FORMAT));
  std::set<std::string> names;
  for (size_t status = 0; status < wc_status_count(); ++status) {
    const char *name = wc_status_name(static_cast<wc_status>(status));
    ASSERT_NE(name, nullptr) << status;
    EXPECT_EQ(upper_case(name), name) << status;
    EXPECT_TRUE(names.insert(name).second) << name << " named twice";
  }
  const auto past_the_end = static_cast<wc_status>(wc_status_count());
  EXPECT_EQ(wc_status_name(past_the_end), nullptr);
  EXPECT_STREQ(wc_status_string(past_the_end), "unknown status");
}

// The header promises room for PKCS#7's extra block and nothing for the
// unpadded modes. A bound may be tight (the padded length itself) or the
// header's in_len + 16; either way it must hold OpenSSL's output.
TEST(RegistryTest, EncryptBoundCoversPaddingOnlyForPaddedModes) {
  for (const CipherSpec &spec : all_cipher_specs()) {
    SCOPED_TRACE(spec.name);
    const wc_cipher *cipher = lookup(spec.name);
    ASSERT_NE(cipher, nullptr);
    for (size_t length : {0, 1, 15, 16, 17, 1000}) {
      SCOPED_TRACE("length " + std::to_string(length));
      if (spec.padded) {
        const size_t pkcs7_length = (length / 16 + 1) * 16;
        EXPECT_GE(wc_encrypt_bound(cipher, length), pkcs7_length);
        EXPECT_LE(wc_encrypt_bound(cipher, length), length + 16);
      } else {
        EXPECT_EQ(wc_encrypt_bound(cipher, length), length);
      }
      EXPECT_EQ(wc_encrypt_bound(wc_cipher_unpadded(cipher), length), length);
    }
  }
}

// Padding belongs to the cipher: the unpadded twin is the same cipher under
// the same name, without PKCS#7, and runs as `openssl enc -nopad`.
TEST(RegistryTest, UnpaddedTwinsRunAsPaddingOff) {
  const Bytes key(32, 7), iv(16, 9), whole_blocks(64, 3);
  for (const CipherSpec &spec : all_cipher_specs()) {
    SCOPED_TRACE(spec.name);
    const wc_cipher *cipher = lookup(spec.name);
    const wc_cipher *twin = wc_cipher_unpadded(cipher);
    ASSERT_NE(twin, nullptr);
    EXPECT_STREQ(wc_cipher_name(twin), wc_cipher_name(cipher));
    EXPECT_EQ(wc_cipher_is_padded(twin), 0);
    EXPECT_EQ(wc_cipher_unpadded(twin), twin);
    EXPECT_EQ(wc_cipher_by_name(spec.name.c_str()), cipher) << "names find the padded cipher";
    if (!spec.padded) {
      EXPECT_EQ(twin, cipher) << "a mode that never pads is its own twin";
      continue;
    }
    const Bytes cipher_key(key.begin(), key.begin() + static_cast<std::ptrdiff_t>(wc_cipher_key_len(cipher)));
    const Bytes cipher_iv(iv.begin(), iv.begin() + static_cast<std::ptrdiff_t>(wc_cipher_iv_len(cipher)));
    const LibResult as_twin = lib_crypt(WC_ENCRYPT, twin, cipher_key, cipher_iv, whole_blocks, make_options());
    const std::optional<Bytes> nopad = openssl_crypt(spec.name, WC_ENCRYPT, cipher_key, cipher_iv, whole_blocks, false);
    ASSERT_EQ(as_twin.status, WC_OK);
    ASSERT_TRUE(nopad.has_value());
    EXPECT_TRUE(same_bytes(*nopad, as_twin.out));
    EXPECT_EQ(as_twin.out.size(), whole_blocks.size()) << "no padding block";
    EXPECT_EQ(lib_crypt(WC_ENCRYPT, twin, cipher_key, cipher_iv, Bytes(17, 1), make_options()).status,
              WC_ERR_NOT_BLOCK_ALIGNED);
    EXPECT_EQ(wc_encrypt_bound(twin, 17), 17u);
  }
  EXPECT_EQ(wc_cipher_unpadded(nullptr), nullptr);
}

}  // namespace
}  // namespace wctest
