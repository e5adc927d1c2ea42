// age 1.3's post-quantum hybrid keys (src/age/keys/hybrid_key.cpp) inside
// the library: the Bech32 key spellings, the mlkem768x25519 stanza's round
// trip and who may open it, and the refusals of malformed keys. The stanza's
// bytes are checked against draft-ietf-hpke-pq's vector and a Python
// reference in tests/cli/test_age_pq_reference.py, its HPKE in
// tests/unit/age_tag_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "age/age_keys.h"
#include "age/key_table.h"
#include "core/host_crypto.h"
#include "support/test_rng.h"
#include "warpcrypt/warpcrypt.h"

namespace {

using namespace warpcrypt;
using namespace warpcrypt::age;

constexpr std::string_view kIdentityHrp = "AGE-SECRET-KEY-PQ-";
constexpr std::string_view kRecipientHrp = "age1pq";
constexpr size_t kPublicKeyLen = 1216;  // ML-KEM-768's key, then X25519's

Identity hybrid_identity() {
  Identity identity;
  EXPECT_EQ(generate_identity(kHostCrypto, &identity, KeyType::hybrid), WC_OK);
  return identity;
}

// The hybrid type's answer for a header of the one stanza.
wc_status open_stanza(const Identity &identity, const Stanza &stanza, FileKey *file_key, const char **detail) {
  Header header;
  header.stanzas = {stanza};
  const std::vector<const Identity *> identities = {&identity};
  return key_type(KeyType::hybrid).unwrap(kHostCrypto, identities, header, file_key, detail);
}

TEST(AgePq, KeysRoundTripThroughTheirBech32Spellings) {
  const Identity identity = hybrid_identity();
  const char *detail = nullptr;
  std::string secret;
  ASSERT_EQ(format_identity(identity, &secret, &detail), WC_OK);
  EXPECT_TRUE(secret.starts_with("AGE-SECRET-KEY-PQ-1")) << secret.substr(0, 19);
  Identity parsed;
  ASSERT_EQ(parse_identity(secret, &parsed, &detail), WC_OK);
  EXPECT_EQ(parsed.type, KeyType::hybrid);
  EXPECT_EQ(parsed.secret_key, identity.secret_key);

  Recipient recipient;
  ASSERT_EQ(recipient_of(kHostCrypto, identity, &recipient, &detail), WC_OK);
  std::string text;
  ASSERT_EQ(format_recipient(recipient, &text, &detail), WC_OK);
  EXPECT_TRUE(text.starts_with("age1pq1"));
  EXPECT_LT(text.size(), size_t{WC_AGE_KEY_MAX_LEN});
  Recipient reparsed;
  ASSERT_EQ(parse_recipient(text, &reparsed, &detail), WC_OK);
  EXPECT_EQ(reparsed.type, KeyType::hybrid);
  EXPECT_EQ(reparsed.hybrid_public_key, recipient.hybrid_public_key);
}

TEST(AgePq, MalformedKeysAreFormatErrors) {
  const char *detail = nullptr;
  Identity identity;
  Recipient recipient;
  // Bad checksums.
  EXPECT_EQ(parse_identity("AGE-SECRET-KEY-PQ-1QQQQQQQ", &identity, &detail), WC_ERR_FORMAT);
  EXPECT_EQ(parse_recipient("age1pq1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq", &recipient, &detail), WC_ERR_FORMAT);
  // Valid Bech32 of the wrong lengths.
  const std::array<uint8_t, 33> long_seed{};
  EXPECT_EQ(parse_identity(encode_bech32(kIdentityHrp, long_seed), &identity, &detail), WC_ERR_FORMAT);
  EXPECT_EQ(parse_identity(encode_bech32(kIdentityHrp, std::span(long_seed).first(31)), &identity, &detail),
            WC_ERR_FORMAT);
  const std::vector<uint8_t> short_key(kPublicKeyLen - 1);
  EXPECT_EQ(parse_recipient(encode_bech32(kRecipientHrp, short_key), &recipient, &detail), WC_ERR_FORMAT);
  EXPECT_NE(std::string(detail).find("1216 bytes"), std::string::npos);
  const std::vector<uint8_t> empty;
  EXPECT_EQ(parse_recipient(encode_bech32(kRecipientHrp, empty), &recipient, &detail), WC_ERR_FORMAT);
}

TEST(AgePq, StanzaOpensWithItsIdentityOnly) {
  const Identity identity = hybrid_identity();
  Recipient recipient;
  const char *detail = nullptr;
  ASSERT_EQ(recipient_of(kHostCrypto, identity, &recipient, &detail), WC_OK);
  FileKey file_key;
  auto rng = wctest::TestRng::for_current_test();
  rng.fill(file_key.bytes.data(), file_key.bytes.size());
  Stanza stanza;
  ASSERT_EQ(wrap(kHostCrypto, recipient, file_key, &stanza, &detail), WC_OK);
  EXPECT_EQ(stanza.type, "mlkem768x25519");
  ASSERT_EQ(stanza.args.size(), 1u);
  EXPECT_EQ(stanza.body.size(), kWrappedKeyLen);

  FileKey opened;
  ASSERT_EQ(open_stanza(identity, stanza, &opened, &detail), WC_OK);
  EXPECT_EQ(opened.bytes, file_key.bytes);

  const Identity other = hybrid_identity();
  EXPECT_EQ(open_stanza(other, stanza, &opened, &detail), WC_ERR_NO_IDENTITY);
  Stanza tampered = stanza;
  tampered.body[0] ^= 1;
  EXPECT_EQ(open_stanza(identity, tampered, &opened, &detail), WC_ERR_NO_IDENTITY);
  Stanza x25519 = stanza;
  x25519.type = "X25519";
  EXPECT_EQ(open_stanza(identity, x25519, &opened, &detail), WC_ERR_NO_IDENTITY);
}

// An ML-KEM half with a coefficient of q or more is refused when wrapping,
// as FIPS 203's encapsulation-key check demands.
TEST(AgePq, UnreducedPublicKeyIsRefused) {
  const Identity identity = hybrid_identity();
  Recipient recipient;
  const char *detail = nullptr;
  ASSERT_EQ(recipient_of(kHostCrypto, identity, &recipient, &detail), WC_OK);
  recipient.hybrid_public_key[0] = 0xFF;
  recipient.hybrid_public_key[1] |= 0x0F;
  FileKey file_key;
  Stanza stanza;
  EXPECT_EQ(wrap(kHostCrypto, recipient, file_key, &stanza, &detail), WC_ERR_FORMAT);
  EXPECT_NE(std::string(detail).find("ML-KEM-768"), std::string::npos);
}

// X25519's all-zero secret would leave the stanza to its ML-KEM half alone:
// a recipient whose X25519 half is of low order is refused when wrapping, a
// stanza whose share is when opening, each naming what is wrong.
TEST(AgePq, LowOrderX25519IsRefused) {
  const Identity identity = hybrid_identity();
  Recipient recipient;
  const char *detail = nullptr;
  ASSERT_EQ(recipient_of(kHostCrypto, identity, &recipient, &detail), WC_OK);
  FileKey file_key;
  Stanza stanza;
  ASSERT_EQ(wrap(kHostCrypto, recipient, file_key, &stanza, &detail), WC_OK);
  std::vector<uint8_t> enc = decode_base64(stanza.args[0]).value();
  std::fill(enc.end() - 32, enc.end(), 0);
  stanza.args[0] = encode_base64(enc);
  FileKey opened;
  EXPECT_EQ(open_stanza(identity, stanza, &opened, &detail), WC_ERR_FORMAT);
  EXPECT_NE(std::string(detail).find("X25519 share is a low-order point"), std::string::npos) << detail;

  std::fill(recipient.hybrid_public_key.end() - 32, recipient.hybrid_public_key.end(), 0);
  EXPECT_EQ(wrap(kHostCrypto, recipient, file_key, &stanza, &detail), WC_ERR_FORMAT);
  EXPECT_NE(std::string(detail).find("X25519 half"), std::string::npos) << detail;
}

TEST(AgePq, CApiGeneratesAndFormatsHybridIdentities) {
  wc_age_identities *identities = nullptr;
  ASSERT_EQ(wc_age_identities_new(&identities), WC_OK);
  ASSERT_EQ(wc_age_identities_generate_pq(identities), WC_OK);
  char secret[WC_AGE_KEY_MAX_LEN];
  char recipient[WC_AGE_KEY_MAX_LEN];
  ASSERT_EQ(wc_age_identity_format(identities, 0, secret, sizeof secret, nullptr), WC_OK);
  ASSERT_EQ(wc_age_identity_recipient(identities, 0, recipient, sizeof recipient, nullptr), WC_OK);
  EXPECT_EQ(std::string(secret).rfind("AGE-SECRET-KEY-PQ-1", 0), 0u);
  EXPECT_EQ(std::string(recipient).rfind("age1pq1", 0), 0u);
  char small[128];
  EXPECT_EQ(wc_age_identity_recipient(identities, 0, small, sizeof small, nullptr), WC_ERR_OUTPUT_TOO_SMALL);
  wc_memzero(secret, sizeof secret);
  wc_age_identities_free(identities);
  EXPECT_EQ(wc_age_identities_generate_pq(nullptr), WC_ERR_INVALID_ARGUMENT);
}

}  // namespace
