// age 1.3's tagged recipients (src/age/keys/tag_keys.cpp) and the HPKE
// under them and under age's hybrid recipients (src/backends/cpu/hpke.h):
// RFC 9180's vector for DHKEM(P-256, HKDF-SHA256), HKDF-SHA256,
// ChaCha20-Poly1305 (Appendix A.5.1), draft-ietf-hpke-pq's vectors for the
// MLKEM768-P256 KEM and for the MLKEM768-X25519 suite, sealed and opened
// (cryptography_vectors/HPKE/hpke-pq-test-vectors.json), the stanza's tag
// recomputed with OpenSSL, and every malformed recipient refused by its
// type's name. A Python reference opens the stanzas in
// tests/cli/test_age_tag.py.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "age/age_keys.h"
#include "backends/cpu/hpke.h"
#include "core/host_crypto.h"
#include "support/bytes.h"
#include "support/fixed_random.h"
#include "support/test_environment.h"
#include "warpcrypt/age.h"

namespace {

namespace age = warpcrypt::age;
using warpcrypt::HpkeKem;
using warpcrypt::kHostCrypto;
using wctest::Bytes;
using wctest::from_hex;

using wctest::FixedRandom;

// RFC 9180 Appendix A.5.1: DHKEM(P-256, HKDF-SHA256), HKDF-SHA256,
// ChaCha20Poly1305, base mode, and its first encryption (sequence number 0).
const Bytes kRfcRecipient = from_hex(
    "04a697bffde9405c992883c5c439d6cc358170b51af72812333b015621dc0f40bad9bb726f68a5c013806a790ec716ab8669f84f6b694596c2"
    "987cf35baba2a006");
const Bytes kRfcIkmE = from_hex("f1f1a3bc95416871539ecb51c3a8f0cf608afb40fbbe305c0a72819d35c33f1f");
const Bytes kRfcEnc = from_hex(
    "04c07836a0206e04e31d8ae99bfd549380b072a1b1b82e563c935c095827824fc1559eac6fb9e3c70cd3193968994e7fe9781aa103f5b50e93"
    "4b5b2f387e381291");
const Bytes kRfcInfo = from_hex("4f6465206f6e2061204772656369616e2055726e");
const Bytes kRfcPlaintext = from_hex("4265617574792069732074727574682c20747275746820626561757479");
const Bytes kRfcAad = from_hex("436f756e742d30");
const Bytes kRfcCiphertext =
    from_hex("6469c41c5c81d3aa85432531ecf6460ec945bde1eb428cb2fedf7a29f5a685b4ccb0d057f03ea2952a27bb458b");

// SEC 1's compressed form of an uncompressed point.
Bytes compressed(const Bytes &point) {
  Bytes out(point.begin(), point.begin() + 33);
  out[0] = static_cast<uint8_t>(0x02 | (point.back() & 1));
  return out;
}

// An ML-KEM-768 key, then kRfcRecipient: an age1tagpq1 recipient's bytes.
Bytes tagpq_key() {
  std::array<uint8_t, warpcrypt::kMlkem768EncapsulationKeyLen> encapsulation_key{};
  std::array<uint8_t, warpcrypt::kMlkem768DecapsulationKeyLen> decapsulation_key{};
  std::array<uint8_t, warpcrypt::kMlkem768SeedLen> seed{};
  seed.fill(7);
  kHostCrypto.mlkem768_keygen(encapsulation_key, decapsulation_key, seed);
  Bytes key(encapsulation_key.size() + kRfcRecipient.size());
  std::copy(kRfcRecipient.begin(), kRfcRecipient.end(),
            std::copy(encapsulation_key.begin(), encapsulation_key.end(), key.begin()));
  return key;
}

std::string p256tag_text(const Bytes &point) { return age::encode_bech32("age1tag", point); }
std::string tagpq_text(const Bytes &key) { return age::encode_bech32("age1tagpq", key); }

// The spec's tag, computed with OpenSSL: HKDF-Extract-SHA-256(salt =
// label, ikm = enc || SHA-256(point)[:4])[:4].
Bytes expected_tag(std::string_view label, const Bytes &point, const Bytes &enc) {
  std::array<uint8_t, 32> point_hash{};
  EXPECT_EQ(EVP_Digest(point.data(), point.size(), point_hash.data(), nullptr, EVP_sha256(), nullptr), 1);
  Bytes ikm = enc;
  ikm.insert(ikm.end(), point_hash.begin(), point_hash.begin() + 4);
  std::array<uint8_t, 32> prk{};
  unsigned len = 0;
  EXPECT_NE(HMAC(EVP_sha256(), label.data(), static_cast<int>(label.size()), ikm.data(), ikm.size(), prk.data(), &len),
            nullptr);
  return Bytes(prk.begin(), prk.begin() + 4);
}

// A stanza for `text`, its file key 16 bytes of 0x42, drawing from `random`.
struct Wrapped {
  wc_status status = WC_OK;
  age::Stanza stanza;
  std::string detail;
};
Wrapped wrap_to(const std::string &text, warpcrypt::RandomSource &random) {
  Wrapped result;
  age::Recipient recipient;
  const char *detail = nullptr;
  result.status = age::parse_recipient(text, &recipient, &detail);
  if (result.status == WC_OK) {
    warpcrypt::HostCrypto crypto = kHostCrypto;
    crypto.random = &random;
    age::FileKey file_key;
    file_key.bytes.fill(0x42);
    result.status = age::wrap(crypto, recipient, file_key, &result.stanza, &detail);
  }
  if (detail != nullptr) result.detail = detail;
  return result;
}

Bytes unbase64(const std::string &text) {
  const auto decoded = age::decode_base64(text);
  if (!decoded) throw std::runtime_error("not base64: " + text);
  return Bytes(decoded->begin(), decoded->end());
}

// ---- HPKE ---------------------------------------------------------------------

TEST(Hpke, SealBaseMatchesRfc9180A51) {
  FixedRandom random(kRfcIkmE);
  Bytes enc(warpcrypt::kP256PointLen);
  Bytes sealed(kRfcPlaintext.size() + 16);
  ASSERT_EQ(kHostCrypto.hpke_seal_base(HpkeKem::dhkem_p256, kRfcRecipient, kRfcInfo, kRfcAad, kRfcPlaintext, random,
                                       enc, sealed),
            WC_OK);
  EXPECT_TRUE(wctest::same_bytes(kRfcEnc, enc));
  EXPECT_TRUE(wctest::same_bytes(kRfcCiphertext, sealed));
}

TEST(Hpke, SealBaseRefusesWrongLengths) {
  FixedRandom random(kRfcIkmE);
  Bytes enc(warpcrypt::kP256PointLen), sealed(kRfcPlaintext.size() + 16);
  const Bytes short_key(kRfcRecipient.begin(), kRfcRecipient.end() - 1);
  EXPECT_EQ(kHostCrypto.hpke_seal_base(HpkeKem::dhkem_p256, short_key, {}, {}, kRfcPlaintext, random, enc, sealed),
            WC_ERR_INVALID_ARGUMENT);
  Bytes short_sealed(kRfcPlaintext.size() + 15);
  EXPECT_EQ(
      kHostCrypto.hpke_seal_base(HpkeKem::dhkem_p256, kRfcRecipient, {}, {}, kRfcPlaintext, random, enc, short_sealed),
      WC_ERR_INVALID_ARGUMENT);
}

// The top-level fields of each vector in `json` whose fields before its
// first array (its encryptions) match `match`, e.g. "kem_id": 80.
std::vector<std::string> vectors_with(const std::string &json, const std::string &match) {
  const std::regex object("\\{[^\\[]*" + match + "[^\\[]*");
  std::vector<std::string> found;
  for (auto at = std::sregex_iterator(json.begin(), json.end(), object); at != std::sregex_iterator(); ++at) {
    found.push_back(at->str());
  }
  return found;
}
Bytes hex_field(const std::string &fields, const std::string &name) {
  std::smatch found;
  if (!std::regex_search(fields, found, std::regex("\"" + name + "\":\\s*\"([0-9a-f]*)\""))) {
    throw std::runtime_error("no field " + name);
  }
  return from_hex(found[1].str());
}

// The first of the encryptions that open the array after `fields` (as
// vectors_with found them) in `json`.
std::string first_encryption(const std::string &json, const std::string &fields) {
  std::smatch found;
  const auto after = json.begin() + static_cast<std::ptrdiff_t>(json.find(fields) + fields.size());
  if (!std::regex_search(after, json.end(), found, std::regex("^\\[\\s*\\{([^}]*)\\}"))) {
    throw std::runtime_error("no encryptions after the vector's fields");
  }
  return found[1].str();
}

// cryptography_vectors' HPKE/hpke-pq-test-vectors.json; empty where the
// test is skipped (no vectors) or has failed.
std::string draft_vectors() {
  std::filesystem::path vectors;
  wctest::locate_vectors_dir(&vectors);
  if (testing::Test::IsSkipped()) return {};
  std::ifstream in(vectors / "HPKE" / "hpke-pq-test-vectors.json");
  EXPECT_TRUE(in) << "no HPKE/hpke-pq-test-vectors.json under " << vectors;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// draft-ietf-hpke-pq's MLKEM768-P256 vectors: ikmE is ML-KEM's randomness
// then the P-256 scalar candidates, as hpke_encapsulate draws them.
TEST(Hpke, Mlkem768P256EncapsulationMatchesDraftVectors) {
  const std::string json = draft_vectors();
  if (json.empty()) return;
  const std::vector<std::string> kem_vectors = vectors_with(json, "\"kem_id\":\\s*80,");
  ASSERT_FALSE(kem_vectors.empty());
  for (const std::string &fields : kem_vectors) {
    FixedRandom random(hex_field(fields, "ikmE"));
    Bytes enc(warpcrypt::hpke_encapsulation_len(HpkeKem::mlkem768_p256));
    std::array<uint8_t, 32> shared_secret{};
    ASSERT_EQ(
        warpcrypt::cpu::hpke_encapsulate(HpkeKem::mlkem768_p256, hex_field(fields, "pkRm"), random, enc, shared_secret),
        WC_OK);
    EXPECT_TRUE(wctest::same_bytes(hex_field(fields, "enc"), enc));
    EXPECT_TRUE(
        wctest::same_bytes(hex_field(fields, "shared_secret"), Bytes(shared_secret.begin(), shared_secret.end())));
  }
  wctest::report_vectors_run("HPKE MLKEM768-P256", kem_vectors.size());
}

// draft-ietf-hpke-pq's vector of age's own suite, MLKEM768-X25519 with
// HKDF-SHA256 and ChaCha20-Poly1305: the public key of skRm, the first
// encryption sealed with ikmE (ML-KEM's randomness, then the X25519 scalar),
// and opened with skRm.
TEST(Hpke, Mlkem768X25519MatchesDraftVector) {
  const std::string json = draft_vectors();
  if (json.empty()) return;
  const std::vector<std::string> suite_vectors =
      vectors_with(json, "\"kem_id\":\\s*25722,\\s*\"kdf_id\":\\s*1,\\s*\"aead_id\":\\s*3,");
  ASSERT_EQ(suite_vectors.size(), 1u);
  const std::string &fields = suite_vectors[0];
  const std::string encryption = first_encryption(json, fields);
  const Bytes private_key = hex_field(fields, "skRm"), public_key = hex_field(fields, "pkRm");
  const Bytes info = hex_field(fields, "info"), aad = hex_field(encryption, "aad");
  const Bytes plaintext = hex_field(encryption, "pt"), ciphertext = hex_field(encryption, "ct");

  Bytes derived(public_key.size());
  ASSERT_EQ(kHostCrypto.hpke_public_key(HpkeKem::mlkem768_x25519, private_key, derived), WC_OK);
  EXPECT_TRUE(wctest::same_bytes(public_key, derived));
  FixedRandom random(hex_field(fields, "ikmE"));
  Bytes enc(warpcrypt::hpke_encapsulation_len(HpkeKem::mlkem768_x25519)), sealed(plaintext.size() + 16);
  ASSERT_EQ(kHostCrypto.hpke_seal_base(HpkeKem::mlkem768_x25519, public_key, info, aad, plaintext, random, enc, sealed),
            WC_OK);
  EXPECT_TRUE(wctest::same_bytes(hex_field(fields, "enc"), enc));
  EXPECT_TRUE(wctest::same_bytes(ciphertext, sealed));
  Bytes opened(plaintext.size());
  ASSERT_EQ(kHostCrypto.hpke_open_base(HpkeKem::mlkem768_x25519, private_key, enc, info, aad, ciphertext, opened),
            WC_OK);
  EXPECT_TRUE(wctest::same_bytes(plaintext, opened));
  wctest::report_vectors_run("HPKE MLKEM768-X25519", suite_vectors.size());
}

// What OpenBase refuses, and how: another key's stanza and a damaged one
// alike fail the AEAD (ML-KEM rejects implicitly); a low-order X25519 share
// is malformed; the KEMs whose keys live in hardware have no receiver here.
// SealBase refuses a low-order X25519 recipient, to which no one could open.
TEST(Hpke, Mlkem768X25519Refusals) {
  constexpr HpkeKem kKem = HpkeKem::mlkem768_x25519;
  const Bytes private_key(warpcrypt::kHpkePrivateKeyLen, 1), other_key(warpcrypt::kHpkePrivateKeyLen, 2);
  Bytes public_key(warpcrypt::hpke_public_key_len(kKem));
  ASSERT_EQ(kHostCrypto.hpke_public_key(kKem, private_key, public_key), WC_OK);
  const Bytes message = {'f', 'i', 'l', 'e', ' ', 'k', 'e', 'y'};
  FixedRandom random(Bytes(64, 3));
  Bytes enc(warpcrypt::hpke_encapsulation_len(kKem)), sealed(message.size() + 16), opened(message.size());
  ASSERT_EQ(kHostCrypto.hpke_seal_base(kKem, public_key, {}, {}, message, random, enc, sealed), WC_OK);
  ASSERT_EQ(kHostCrypto.hpke_open_base(kKem, private_key, enc, {}, {}, sealed, opened), WC_OK);
  EXPECT_TRUE(wctest::same_bytes(message, opened));

  EXPECT_EQ(kHostCrypto.hpke_open_base(kKem, other_key, enc, {}, {}, sealed, opened), WC_ERR_AUTH);
  Bytes damaged = sealed;
  damaged.back() ^= 1;
  EXPECT_EQ(kHostCrypto.hpke_open_base(kKem, private_key, enc, {}, {}, damaged, opened), WC_ERR_AUTH);
  const Bytes aad = {'a'};
  EXPECT_EQ(kHostCrypto.hpke_open_base(kKem, private_key, enc, {}, aad, sealed, opened), WC_ERR_AUTH);
  Bytes low_order_share = enc;
  std::fill(low_order_share.end() - 32, low_order_share.end(), 0);
  EXPECT_EQ(kHostCrypto.hpke_open_base(kKem, private_key, low_order_share, {}, {}, sealed, opened), WC_ERR_FORMAT);
  Bytes too_long(message.size() + 1);
  EXPECT_EQ(kHostCrypto.hpke_open_base(kKem, private_key, enc, {}, {}, sealed, too_long), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(kHostCrypto.hpke_open_base(HpkeKem::dhkem_p256, private_key, enc, {}, {}, sealed, opened),
            WC_ERR_UNSUPPORTED);
  Bytes p256_key(warpcrypt::hpke_public_key_len(HpkeKem::dhkem_p256));
  EXPECT_EQ(kHostCrypto.hpke_public_key(HpkeKem::dhkem_p256, private_key, p256_key), WC_ERR_UNSUPPORTED);

  Bytes low_order_key = public_key;
  std::fill(low_order_key.end() - 32, low_order_key.end(), 0);
  FixedRandom more(Bytes(64, 4));
  EXPECT_EQ(kHostCrypto.hpke_seal_base(kKem, low_order_key, {}, {}, message, more, enc, sealed),
            WC_ERR_INVALID_ARGUMENT);
}

TEST(P256, DecodesBothFormsToTheSamePoint) {
  std::array<uint8_t, warpcrypt::kP256PointLen> from_compressed{}, from_uncompressed{};
  ASSERT_EQ(kHostCrypto.p256_decode_point(from_compressed, compressed(kRfcRecipient)), WC_OK);
  ASSERT_EQ(kHostCrypto.p256_decode_point(from_uncompressed, kRfcRecipient), WC_OK);
  EXPECT_TRUE(wctest::same_bytes(kRfcRecipient, Bytes(from_compressed.begin(), from_compressed.end())));
  EXPECT_TRUE(wctest::same_bytes(kRfcRecipient, Bytes(from_uncompressed.begin(), from_uncompressed.end())));
}

TEST(P256, RefusesWhatIsNoPoint) {
  Bytes off_curve = kRfcRecipient;
  off_curve.back() ^= 1;
  Bytes no_such_x(33, 0);  // no point has x = 1
  no_such_x[0] = 0x02;
  no_such_x[32] = 1;
  Bytes wrong_prefix = compressed(kRfcRecipient);
  wrong_prefix[0] = 0x04;
  Bytes hybrid_form = kRfcRecipient;  // SEC 1's 0x06/0x07 "hybrid" encoding
  hybrid_form[0] = static_cast<uint8_t>(0x06 | (kRfcRecipient.back() & 1));
  const Bytes short_compressed(wrong_prefix.begin(), wrong_prefix.end() - 1);
  const Bytes cases[] = {
      off_curve,
      no_such_x,
      wrong_prefix,
      hybrid_form,
      Bytes{0x00},  // the point at infinity
      Bytes(33, 0),
      Bytes(kRfcRecipient.begin(), kRfcRecipient.end() - 1),
      short_compressed,
      Bytes{},
  };
  for (const Bytes &encoded : cases) {
    std::array<uint8_t, warpcrypt::kP256PointLen> out{};
    EXPECT_EQ(kHostCrypto.p256_decode_point(out, encoded), WC_ERR_FORMAT) << wctest::to_hex(encoded);
  }
}

// ---- the recipients --------------------------------------------------------------

TEST(AgeTag, RecipientsAreNativeTypesNotPlugins) {
  const char *detail = nullptr;
  age::Recipient p256tag, tagpq, plugin;
  // The C2SP spec's example p256tag recipient.
  const std::string spec_example = "age1tag1qt8lw0ual6avlwmwatk888yqnmdamm7xfd0wak53ut6elz5c4swx2yqdj4e";
  ASSERT_EQ(age::parse_recipient(spec_example, &p256tag, &detail), WC_OK);
  EXPECT_EQ(p256tag.type, age::KeyType::p256tag);
  std::string text;
  ASSERT_EQ(age::format_recipient(p256tag, &text, &detail), WC_OK);
  EXPECT_EQ(text, spec_example);

  const std::string tagpq_recipient = tagpq_text(tagpq_key());
  ASSERT_EQ(age::parse_recipient(tagpq_recipient, &tagpq, &detail), WC_OK);
  EXPECT_EQ(tagpq.type, age::KeyType::mlkem768p256tag);
  ASSERT_EQ(age::format_recipient(tagpq, &text, &detail), WC_OK);
  EXPECT_EQ(text, tagpq_recipient);
  EXPECT_LT(text.size(), size_t{WC_AGE_KEY_MAX_LEN});

  // A plugin whose name only starts with "tag" is still a plugin.
  ASSERT_EQ(age::parse_recipient(age::encode_bech32("age1tagx", compressed(kRfcRecipient)), &plugin, &detail), WC_OK);
  EXPECT_EQ(plugin.type, age::KeyType::plugin);
  EXPECT_EQ(plugin.plugin, "tagx");
}

TEST(AgeTag, P256TagStanzaIsTheSpecs) {
  const Bytes point = compressed(kRfcRecipient);
  // DHKEM draws its ephemeral key as RFC 9180's DeriveKeyPair(ikmE), so the
  // RFC's ikmE gives the RFC's enc.
  FixedRandom random(kRfcIkmE);
  const Wrapped wrapped = wrap_to(p256tag_text(point), random);
  ASSERT_EQ(wrapped.status, WC_OK) << wrapped.detail;
  EXPECT_EQ(wrapped.stanza.type, "p256tag");
  ASSERT_EQ(wrapped.stanza.args.size(), 2u);
  EXPECT_TRUE(wctest::same_bytes(kRfcEnc, unbase64(wrapped.stanza.args[1])));
  EXPECT_TRUE(wctest::same_bytes(expected_tag("age-encryption.org/p256tag", point, kRfcEnc),
                                 unbase64(wrapped.stanza.args[0])));
  EXPECT_EQ(wrapped.stanza.body.size(), 32u);
}

TEST(AgeTag, Mlkem768P256TagStanzaIsTheSpecs) {
  const Bytes key = tagpq_key();
  Bytes randomness(32 + 32, 0x11);  // ML-KEM's m, then a P-256 scalar
  FixedRandom random(randomness);
  const Wrapped wrapped = wrap_to(tagpq_text(key), random);
  ASSERT_EQ(wrapped.status, WC_OK) << wrapped.detail;
  EXPECT_EQ(wrapped.stanza.type, "mlkem768p256tag");
  ASSERT_EQ(wrapped.stanza.args.size(), 2u);
  const Bytes enc = unbase64(wrapped.stanza.args[1]);
  ASSERT_EQ(enc.size(), 1153u);
  // The tag names the recipient by its P-256 point alone.
  EXPECT_TRUE(wctest::same_bytes(expected_tag("age-encryption.org/mlkem768p256tag", kRfcRecipient, enc),
                                 unbase64(wrapped.stanza.args[0])));
  EXPECT_EQ(wrapped.stanza.body.size(), 32u);
}

// Each malformed recipient is refused with one sentence naming its type:
// at parsing where the Bech32 or the length is wrong, at wrapping where the
// key is no key (the point off the curve, ML-KEM's modulus check).
TEST(AgeTag, MalformedRecipientsAreRefusedByTheirTypesName) {
  const std::string good = p256tag_text(compressed(kRfcRecipient));
  Bytes off_curve(33, 0);
  off_curve[0] = 0x02;
  off_curve[32] = 1;
  Bytes uncompressed_prefix = compressed(kRfcRecipient);
  uncompressed_prefix[0] = 0x04;
  Bytes bad_tagpq_point = tagpq_key();
  bad_tagpq_point.back() ^= 1;
  Bytes unreduced_mlkem = tagpq_key();
  std::fill_n(unreduced_mlkem.begin(), 384, 0xff);  // coefficients of 4095, above q
  struct Case {
    const char *what;
    std::string text;
    const char *type;
  };
  const Case cases[] = {
      {"truncated Bech32", good.substr(0, good.size() - 1), "p256tag"},
      {"a bad checksum", good.substr(0, good.size() - 1) + (good.back() == 'q' ? "p" : "q"), "p256tag"},
      {"the uncompressed point", p256tag_text(kRfcRecipient), "p256tag"},
      {"32 bytes", p256tag_text(Bytes(kRfcRecipient.begin() + 1, kRfcRecipient.begin() + 33)), "p256tag"},
      {"tagpq's key under age1tag", p256tag_text(tagpq_key()), "p256tag"},
      {"p256tag's key under age1tagpq", tagpq_text(compressed(kRfcRecipient)), "mlkem768p256tag"},
      {"a point off the curve", p256tag_text(off_curve), "p256tag"},
      {"the point at infinity", p256tag_text(Bytes{0x00}), "p256tag"},
      {"zeros", p256tag_text(Bytes(33, 0)), "p256tag"},
      {"a 0x04 prefix on 33 bytes", p256tag_text(uncompressed_prefix), "p256tag"},
      {"a tagpq point off the curve", tagpq_text(bad_tagpq_point), "mlkem768p256tag"},
      {"an unreduced ML-KEM key", tagpq_text(unreduced_mlkem), "mlkem768p256tag"},
  };
  for (const Case &c : cases) {
    FixedRandom random(Bytes(256, 0x11));
    const Wrapped wrapped = wrap_to(c.text, random);
    EXPECT_EQ(wrapped.status, WC_ERR_FORMAT) << c.what;
    EXPECT_NE(wrapped.detail.find(c.type), std::string::npos) << c.what << ": " << wrapped.detail;
  }
}

// Recipients parsed from their texts, or a failed assertion.
std::vector<age::Recipient> parsed(std::initializer_list<std::string> texts) {
  std::vector<age::Recipient> recipients(texts.size());
  size_t at = 0;
  for (const std::string &text : texts) {
    const char *detail = nullptr;
    EXPECT_EQ(age::parse_recipient(text, &recipients[at++], &detail), WC_OK) << text;
  }
  return recipients;
}

TEST(AgeTag, PostQuantumTagMixesOnlyWithPostQuantumRecipients) {
  const std::string x25519 = age::encode_bech32("age", std::array<uint8_t, 32>{9});
  const std::string tagpq = tagpq_text(tagpq_key());
  const char *detail = nullptr;
  EXPECT_EQ(age::check_recipients(parsed({tagpq, x25519}), &detail), WC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(detail).find("age1tagpq1"), std::string::npos) << detail;
  EXPECT_EQ(age::check_recipients(parsed({tagpq, age::encode_bech32("age1pq", Bytes(1216, 1))}), &detail), WC_OK);
  EXPECT_EQ(age::check_recipients(parsed({p256tag_text(compressed(kRfcRecipient)), x25519}), &detail), WC_OK);
}

}  // namespace
