// age 1.3's post-quantum hybrid keys (src/age/age_pq.h) inside the library:
// the Bech32 key spellings, the mlkem768x25519 stanza's round trip and who
// may open it, and the refusals of malformed keys. The stanza's bytes are
// checked against draft-ietf-hpke-pq's vector and a Python reference in
// tests/cli/test_age_pq_reference.py.
#include "age/age_pq.h"

#include <gtest/gtest.h>

#include <string>

#include "age/age_keys.h"
#include "core/host_crypto.h"
#include "support/test_rng.h"
#include "warpcrypt/warpcrypt.h"

namespace {

using namespace warpcrypt;
using namespace warpcrypt::age;

Identity hybrid_identity() {
  Identity identity;
  EXPECT_EQ(generate_identity(kHostCrypto, &identity, KeyType::hybrid), WC_OK);
  return identity;
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
  EXPECT_EQ(parse_identity(encode_bech32(kHybridIdentityHrp, long_seed), &identity, &detail), WC_ERR_FORMAT);
  EXPECT_EQ(parse_identity(encode_bech32(kHybridIdentityHrp, std::span(long_seed).first(31)), &identity, &detail),
            WC_ERR_FORMAT);
  const std::vector<uint8_t> short_key(kHybridPublicKeyLen - 1);
  EXPECT_EQ(parse_recipient(encode_bech32(kHybridRecipientHrp, short_key), &recipient, &detail), WC_ERR_FORMAT);
  EXPECT_NE(std::string(detail).find("1216 bytes"), std::string::npos);
  const std::vector<uint8_t> empty;
  EXPECT_EQ(parse_recipient(encode_bech32(kHybridRecipientHrp, empty), &recipient, &detail), WC_ERR_FORMAT);
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
  ASSERT_EQ(hybrid_unwrap(kHostCrypto, identity.secret_key, stanza, &opened, &detail), WC_OK);
  EXPECT_EQ(opened.bytes, file_key.bytes);

  const Identity other = hybrid_identity();
  EXPECT_EQ(hybrid_unwrap(kHostCrypto, other.secret_key, stanza, &opened, &detail), WC_ERR_NO_IDENTITY);
  Stanza tampered = stanza;
  tampered.body[0] ^= 1;
  EXPECT_EQ(hybrid_unwrap(kHostCrypto, identity.secret_key, tampered, &opened, &detail), WC_ERR_NO_IDENTITY);
  Stanza x25519 = stanza;
  x25519.type = "X25519";
  EXPECT_EQ(hybrid_unwrap(kHostCrypto, identity.secret_key, x25519, &opened, &detail), WC_ERR_NO_IDENTITY);
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
