// SSH keys for age (age/ssh_keys.h, age/age_ssh.h): the OpenSSH key files
// that cryptography-vectors ships, opened and refused by name; PEM keys
// written by OpenSSL here (PKCS#1 RSA, plain and under each legacy cipher,
// PKCS#8 RSA and Ed25519) and its refused forms; the attacks on the parsers; bcrypt-pbkdf against the `bcrypt` package's known
// answers; and the ssh-ed25519 and ssh-rsa stanzas, wrapped and unwrapped.
#include "age/ssh_keys.h"

#include <gtest/gtest.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "age/age_keys.h"
#include "age/age_ssh.h"
#include "core/host_crypto.h"
#include "support/bytes.h"
#include "support/openssl_oracle.h"
#include "support/test_environment.h"
#include "warpcrypt/age.h"

namespace wctest {
namespace {

namespace age = warpcrypt::age;
namespace fs = std::filesystem;
using warpcrypt::kHostCrypto;

std::span<const uint8_t> bytes_of(std::string_view text) {
  return {reinterpret_cast<const uint8_t *>(text.data()), text.size()};
}

std::string read_text(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Bytes unbase64(std::string text) {
  std::erase_if(text, [](char c) { return c == '\n' || c == '\r'; });
  Bytes out(text.size());
  const int len =
      EVP_DecodeBlock(out.data(), reinterpret_cast<const uint8_t *>(text.data()), static_cast<int>(text.size()));
  EXPECT_GE(len, 0);
  size_t pad = 0;
  while (pad < 2 && text.size() > pad && text[text.size() - 1 - pad] == '=') ++pad;
  out.resize(static_cast<size_t>(len) - pad);
  return out;
}

constexpr std::string_view kBegin = "-----BEGIN OPENSSH PRIVATE KEY-----\n";
constexpr std::string_view kEnd = "-----END OPENSSH PRIVATE KEY-----\n";

std::string pem(const Bytes &binary) {
  const std::string body = openssl_base64(binary);
  std::string out(kBegin);
  for (size_t at = 0; at < body.size(); at += 70) out += body.substr(at, 70) + "\n";
  return out + std::string(kEnd);
}
Bytes binary_of(const std::string &pem_text) {
  const size_t start = pem_text.find('\n') + 1;
  return unbase64(pem_text.substr(start, pem_text.find("-----END") - start));
}

uint32_t be32(const Bytes &bytes, size_t at) {
  return uint32_t{bytes[at]} << 24 | uint32_t{bytes[at + 1]} << 16 | uint32_t{bytes[at + 2]} << 8 | bytes[at + 3];
}
void put_be32(Bytes *bytes, size_t at, uint32_t value) {
  for (size_t i = 0; i < 4; ++i) (*bytes)[at + i] = static_cast<uint8_t>(value >> (24 - 8 * i));
}

// Offsets of an openssh-key-v1 file's fields, found by walking it here (not
// with the parser): the strings after the 15-byte magic.
struct Layout {
  size_t kdf_options = 0;  // the length field of the KDF options
  size_t count = 0;        // the number of keys
  size_t private_len = 0;  // the length field of the private section
  size_t private_start = 0;
};
Layout layout_of(const Bytes &file) {
  Layout layout;
  size_t at = 15;
  at += 4 + be32(file, at);  // cipher
  at += 4 + be32(file, at);  // kdf
  layout.kdf_options = at;
  at += 4 + be32(file, at);
  layout.count = at;
  at += 4;
  at += 4 + be32(file, at);  // public key
  layout.private_len = at;
  layout.private_start = at + 4;
  return layout;
}

struct Parsed {
  wc_status status;
  std::string detail;
  age::OpensshKeyFile file;
};
Parsed parse(const std::string &text) {
  Parsed parsed;
  const char *detail = "";
  parsed.status = age::parse_openssh_key_file(text, &parsed.file, &detail);
  parsed.detail = detail;
  return parsed;
}
wc_status open_key(const age::OpensshKeyFile &file, std::string_view passphrase, age::SshPrivateKey *key,
                   std::string *detail = nullptr) {
  const char *why = "";
  const wc_status status = age::open_openssh_key_file(kHostCrypto, file, bytes_of(passphrase), key, &why);
  if (detail != nullptr) *detail = why;
  return status;
}

class SshVectors : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::path root;
    locate_vectors_dir(&root);
    dir_ = root / "asymmetric" / "OpenSSH";
  }
  std::string text(const std::string &name) const {
    const std::string contents = read_text(dir_ / name);
    EXPECT_FALSE(contents.empty()) << name;
    return contents;
  }
  // The passphrase gen.sh gives every *-psw key.
  static constexpr std::string_view kPassphrase = "password";
  fs::path dir_;
};

// ---- the shipped key files ---------------------------------------------------

TEST_F(SshVectors, Ed25519KeysOpenToTheSeedOfTheirPublicKey) {
  for (const char *name : {"ed25519-nopsw", "ed25519-psw"}) {
    const Parsed parsed = parse(text(std::string(name) + ".key"));
    ASSERT_EQ(parsed.status, WC_OK) << name << ": " << parsed.detail;
    EXPECT_EQ(parsed.file.encrypted(), std::string_view(name).ends_with("-psw")) << name;
    age::SshPublicKey public_key;
    const char *detail = "";
    ASSERT_EQ(age::parse_ssh_public_key(text(std::string(name) + ".key.pub"), &public_key, &detail), WC_OK) << detail;
    EXPECT_EQ(public_key.wire, parsed.file.public_key.wire) << name;
    age::SshPrivateKey key;
    ASSERT_EQ(open_key(parsed.file, kPassphrase, &key), WC_OK) << name;
    // libsodium makes the public key from the decrypted seed: a wrong
    // bcrypt-pbkdf or AES would give another seed.
    std::array<uint8_t, 32> derived{};
    ASSERT_EQ(kHostCrypto.ed25519_public_key(derived, key.ed25519_seed), WC_OK);
    EXPECT_EQ(derived, public_key.ed25519) << name;
  }
}

TEST_F(SshVectors, RsaKeysOpenToFactorsOfTheirModulus) {
  for (const char *name : {"rsa-nopsw", "rsa-psw"}) {
    const Parsed parsed = parse(text(std::string(name) + ".key"));
    ASSERT_EQ(parsed.status, WC_OK) << name << ": " << parsed.detail;
    age::SshPublicKey public_key;
    const char *detail = "";
    ASSERT_EQ(age::parse_ssh_public_key(text(std::string(name) + ".key.pub"), &public_key, &detail), WC_OK) << detail;
    EXPECT_EQ(public_key.wire, parsed.file.public_key.wire);
    age::SshPrivateKey key;
    ASSERT_EQ(open_key(parsed.file, kPassphrase, &key), WC_OK) << name;
    // p * q == n, by OpenSSL's arithmetic.
    BIGNUM *p = BN_bin2bn(key.rsa.p.data(), static_cast<int>(key.rsa.p.size()), nullptr);
    BIGNUM *q = BN_bin2bn(key.rsa.q.data(), static_cast<int>(key.rsa.q.size()), nullptr);
    BIGNUM *product = BN_new();
    BN_CTX *ctx = BN_CTX_new();
    ASSERT_TRUE(BN_mul(product, p, q, ctx));
    Bytes n(static_cast<size_t>(BN_num_bytes(product)));
    BN_bn2bin(product, n.data());
    EXPECT_TRUE(same_bytes(public_key.rsa.n, n)) << name;
    BN_free(p), BN_free(q), BN_free(product), BN_CTX_free(ctx);
  }
}

TEST_F(SshVectors, WrongPassphraseIsAuthNotAKey) {
  for (const char *name : {"ed25519-psw.key", "rsa-psw.key"}) {
    const Parsed parsed = parse(text(name));
    ASSERT_EQ(parsed.status, WC_OK);
    for (std::string_view wrong : {"passwore", "", "password "}) {
      age::SshPrivateKey key;
      std::string detail;
      EXPECT_EQ(open_key(parsed.file, wrong, &key, &detail), WC_ERR_AUTH) << name << " '" << wrong << "'";
      EXPECT_NE(detail.find("passphrase"), std::string::npos) << detail;
    }
  }
}

TEST_F(SshVectors, OtherKeyTypesAndCiphersAreRefusedByName) {
  const std::pair<const char *, const char *> refused[] = {
      {"dsa-nopsw.key", "DSA"},        {"dsa-psw.key", "DSA"},        {"ecdsa-nopsw.key", "ECDSA"},
      {"ecdsa-psw.key", "ECDSA"},      {"sk-ecdsa-nopsw.key", "sk-"}, {"sk-ecdsa-psw.key", "sk-"},
      {"sk-ed25519-nopsw.key", "sk-"}, {"sk-ed25519-psw.key", "sk-"}, {"ed25519-aesgcm-psw.key", "cipher"},
  };
  for (const auto &[name, why] : refused) {
    const Parsed parsed = parse(text(name));
    EXPECT_EQ(parsed.status, WC_ERR_UNSUPPORTED) << name;
    EXPECT_NE(parsed.detail.find(why), std::string::npos) << name << ": " << parsed.detail;
  }
  const std::pair<const char *, const char *> refused_public[] = {
      {"dsa-nopsw.key.pub", "DSA"},
      {"ecdsa-nopsw.key.pub", "ECDSA"},
      {"sk-ed25519-nopsw.key.pub", "sk-"},
      {"ed25519-nopsw.key-cert.pub", "certificate"},
      {"rsa-nopsw.key-cert.pub", "certificate"},
  };
  for (const auto &[name, why] : refused_public) {
    age::SshPublicKey key;
    const char *detail = "";
    EXPECT_EQ(age::parse_ssh_public_key(text(name), &key, &detail), WC_ERR_UNSUPPORTED) << name;
    EXPECT_NE(std::string(detail).find(why), std::string::npos) << name << ": " << detail;
  }
}

// ---- attacks on the private key parser ----------------------------------------

class SshKeyAttacks : public SshVectors {
 protected:
  void SetUp() override {
    SshVectors::SetUp();
    if (IsSkipped() || HasFailure()) return;
    plain_ = binary_of(text("ed25519-nopsw.key"));
    encrypted_ = binary_of(text("ed25519-psw.key"));
  }
  Bytes plain_, encrypted_;
};

TEST_F(SshKeyAttacks, EveryTruncationIsFormatError) {
  for (const Bytes *whole : {&plain_, &encrypted_}) {
    ASSERT_EQ(parse(pem(*whole)).status, WC_OK);
    for (size_t len = 0; len < whole->size(); ++len) {
      const Parsed parsed = parse(pem(Bytes(whole->begin(), whole->begin() + static_cast<long>(len))));
      EXPECT_EQ(parsed.status, WC_ERR_FORMAT) << len;
    }
  }
}

TEST_F(SshKeyAttacks, AppendedBytesAndTextAreRefused) {
  Bytes longer = plain_;
  longer.push_back(0);
  EXPECT_EQ(parse(pem(longer)).status, WC_ERR_FORMAT);
  EXPECT_EQ(parse(pem(plain_) + "ssh-ed25519 AAAA\n").status, WC_ERR_FORMAT);
  EXPECT_EQ(parse("junk\n" + pem(plain_)).status, WC_ERR_FORMAT);
  // The markers alone, overlapping, and a PEM key of another kind.
  EXPECT_EQ(parse("-----BEGIN OPENSSH PRIVATE KEY-----END OPENSSH PRIVATE KEY-----").status, WC_ERR_FORMAT);
  EXPECT_EQ(parse("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n").status, WC_ERR_FORMAT);
}

TEST_F(SshKeyAttacks, LengthsPastTheEndAreRefused) {
  const Layout layout = layout_of(plain_);
  for (uint32_t len : {0xffffffffu, 0x80000000u, static_cast<uint32_t>(plain_.size())}) {
    for (size_t field : {size_t{15}, layout.kdf_options, layout.private_len}) {
      Bytes forged = plain_;
      put_be32(&forged, field, len);
      EXPECT_EQ(parse(pem(forged)).status, WC_ERR_FORMAT) << field << " " << len;
    }
  }
  Bytes two_keys = plain_;
  put_be32(&two_keys, layout.count, 2);
  EXPECT_EQ(parse(pem(two_keys)).status, WC_ERR_FORMAT);
}

TEST_F(SshKeyAttacks, BadCheckIntegersAndPaddingAreRefused) {
  const Layout layout = layout_of(plain_);
  Bytes bad_check = plain_;
  bad_check[layout.private_start + 7] ^= 1;  // the second check integer
  const Parsed checked = parse(pem(bad_check));
  ASSERT_EQ(checked.status, WC_OK);
  age::SshPrivateKey key;
  EXPECT_EQ(open_key(checked.file, "", &key), WC_ERR_AUTH);

  const uint32_t section_len = be32(plain_, layout.private_len);
  Bytes bad_padding = plain_;
  bad_padding[layout.private_start + section_len - 1] ^= 0x40;
  const Parsed padded = parse(pem(bad_padding));
  ASSERT_EQ(padded.status, WC_OK);
  std::string detail;
  EXPECT_EQ(open_key(padded.file, "", &key, &detail), WC_ERR_FORMAT);
  EXPECT_NE(detail.find("padding"), std::string::npos) << detail;

  // The seed's copy of the public key, changed: not the file's key.
  Bytes other_public = plain_;
  other_public[layout.private_start + section_len - 40] ^= 1;
  const Parsed other = parse(pem(other_public));
  ASSERT_EQ(other.status, WC_OK);
  EXPECT_EQ(open_key(other.file, "", &key), WC_ERR_FORMAT);
}

TEST_F(SshKeyAttacks, BcryptRoundsAreCappedBeforeAnyWork) {
  const Layout layout = layout_of(encrypted_);
  // The options are salt (string) then rounds: the last 4 bytes.
  const size_t rounds_at = layout.kdf_options + 4 + be32(encrypted_, layout.kdf_options) - 4;
  ASSERT_EQ(be32(encrypted_, rounds_at), parse(pem(encrypted_)).file.rounds);
  for (uint32_t rounds : {0u, age::kMaxBcryptRounds + 1, 0xffffffffu}) {
    Bytes forged = encrypted_;
    put_be32(&forged, rounds_at, rounds);
    const Parsed parsed = parse(pem(forged));
    EXPECT_EQ(parsed.status, WC_ERR_FORMAT) << rounds;
    EXPECT_NE(parsed.detail.find("rounds"), std::string::npos) << parsed.detail;
  }
}

TEST_F(SshKeyAttacks, EncryptedSectionMustBeWholeBlocks) {
  const Layout layout = layout_of(encrypted_);
  Bytes forged(encrypted_.begin(), encrypted_.end() - 1);
  put_be32(&forged, layout.private_len, be32(encrypted_, layout.private_len) - 1);
  const Parsed parsed = parse(pem(forged));
  ASSERT_EQ(parsed.status, WC_OK);
  age::SshPrivateKey key;
  EXPECT_EQ(open_key(parsed.file, kPassphrase, &key), WC_ERR_FORMAT);
}

// ---- the public key line ---------------------------------------------------------

TEST_F(SshVectors, PublicLinesAsAgeReadsThem) {
  const std::string line = text("ed25519-nopsw.key.pub");
  const std::string blob = line.substr(line.find(' ') + 1, line.find(' ', line.find(' ') + 1) - line.find(' ') - 1);
  age::SshPublicKey key;
  const char *detail = "";
  EXPECT_EQ(age::parse_ssh_public_key("ssh-ed25519 " + blob, &key, &detail), WC_OK);
  EXPECT_EQ(age::parse_ssh_public_key("ssh-ed25519 " + blob + " a comment with spaces", &key, &detail), WC_OK);
  // Options before the type, a type that is not the blob's, broken base64,
  // a blob with a byte more or less, and no blob.
  EXPECT_EQ(age::parse_ssh_public_key("no-pty ssh-ed25519 " + blob, &key, &detail), WC_ERR_FORMAT);
  EXPECT_EQ(age::parse_ssh_public_key("ssh-rsa " + blob, &key, &detail), WC_ERR_FORMAT);
  EXPECT_EQ(age::parse_ssh_public_key("ssh-ed25519 " + blob.substr(1), &key, &detail), WC_ERR_FORMAT);
  EXPECT_EQ(age::parse_ssh_public_key("ssh-ed25519", &key, &detail), WC_ERR_FORMAT);
  Bytes raw = unbase64(blob);
  raw.push_back(0);
  EXPECT_EQ(age::parse_ssh_public_key("ssh-ed25519 " + openssl_base64(raw), &key, &detail), WC_ERR_FORMAT);
  raw.resize(raw.size() - 2);
  EXPECT_EQ(age::parse_ssh_public_key("ssh-ed25519 " + openssl_base64(raw), &key, &detail), WC_ERR_FORMAT);
}

// An ssh-rsa blob: e = 65537 and a modulus of `modulus_len` bytes of 0x7f
// (its shape is all the parser looks at), the first byte 0 with
// `leading_zero`, which no minimal mpint has before a byte below 0x80.
Bytes rsa_blob(size_t modulus_len, bool leading_zero) {
  Bytes blob;
  const auto put_string = [&blob](const Bytes &value) {
    for (int shift = 24; shift >= 0; shift -= 8) blob.push_back(static_cast<uint8_t>(value.size() >> shift));
    for (uint8_t byte : value) blob.push_back(byte);
  };
  put_string({'s', 's', 'h', '-', 'r', 's', 'a'});
  put_string({1, 0, 1});
  Bytes modulus(modulus_len, 0x7f);
  if (leading_zero) modulus[0] = 0;
  put_string(modulus);
  return blob;
}

TEST(SshPublicKey, RsaBelow2048BitsAndNonMinimalIntegersAreRefused) {
  age::SshPublicKey key;
  const char *detail = "";
  EXPECT_EQ(age::parse_ssh_public_key("ssh-rsa " + openssl_base64(rsa_blob(256, false)), &key, &detail), WC_OK) << detail;
  EXPECT_EQ(age::parse_ssh_public_key("ssh-rsa " + openssl_base64(rsa_blob(128, false)), &key, &detail), WC_ERR_FORMAT);
  EXPECT_NE(std::string(detail).find("2048"), std::string::npos) << detail;
  EXPECT_EQ(age::parse_ssh_public_key("ssh-rsa " + openssl_base64(rsa_blob(257, true)), &key, &detail), WC_ERR_FORMAT);
  EXPECT_EQ(age::parse_ssh_public_key("ssh-rsa " + openssl_base64(rsa_blob(16384 / 8 + 1, false)), &key, &detail),
            WC_ERR_FORMAT);
}

// ---- bcrypt-pbkdf ------------------------------------------------------------------

// Known answers from the `bcrypt` package (5.0.0, pyca), bcrypt.kdf(password,
// salt, desired_key_bytes, rounds, ignore_few_rounds=True), an
// implementation independent of this one; they cover one output block, a
// spread output of 48 and 100 bytes, a 33-byte one, and the shortest.
TEST(BcryptPbkdf, MatchesTheBcryptPackage) {
  struct Case {
    std::string passphrase;
    Bytes salt;
    uint32_t rounds;
    const char *expected;
  };
  Bytes counting(16);
  for (size_t i = 0; i < counting.size(); ++i) counting[i] = static_cast<uint8_t>(i);
  const Case cases[] = {
      {"password",
       {'s', 'a', 'l', 't'},
       4,
       "5ba4bfc60c7ac272931458407f4c1c4936ea356c55125c5a279b791d65bf9842d49d7e1b572a9052715ebfa9421e7e94"},
      {"hunter2 is longhunter2 is longhunter2 is long", counting, 16,
       "f9003116ddbca3159a5af641dbd8f9769074fd998c0916be2df7192fdc959e8ba9"},
      {"x", Bytes(bytes_of("saltsaltsaltsalt").begin(), bytes_of("saltsaltsaltsalt").end()), 2, "9f"},
      {"\xffpass",
       {1},
       3,
       "3a52823439b4ced181148c35839126fb199c114625618c6a4d651c05f05a3ee07ccc593ca4cfd62312d7c991f4ca4bba921a63835345eb"
       "f48cded7740786db99a582d99ea04842d7bd37af1bde99d951887a031be359f169cd1e3d4158a9450f643a829b"},
  };
  for (const Case &c : cases) {
    const Bytes expected = from_hex(c.expected);
    Bytes out(expected.size());
    ASSERT_EQ(kHostCrypto.bcrypt_pbkdf(out, bytes_of(c.passphrase), c.salt, c.rounds), WC_OK);
    EXPECT_TRUE(same_bytes(expected, out)) << c.passphrase;
  }
  Bytes out(16);
  EXPECT_EQ(kHostCrypto.bcrypt_pbkdf(out, bytes_of("p"), counting, 0), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(kHostCrypto.bcrypt_pbkdf({}, bytes_of("p"), counting, 1), WC_ERR_INVALID_ARGUMENT);
}

// ---- stanzas -------------------------------------------------------------------------

class SshStanzas : public SshVectors {
 protected:
  // A recipient from `name`.pub and an identity from `name`.
  void load(const std::string &name, age::Recipient *recipient, age::Identity *identity) {
    const char *detail = "";
    ASSERT_EQ(age::parse_recipient(text(name + ".key.pub"), recipient, &detail), WC_OK) << detail;
    std::vector<age::Identity> identities;
    ASSERT_EQ(age::parse_identities_file(text(name + ".key"), &identities, &detail), WC_OK) << detail;
    ASSERT_EQ(identities.size(), 1u);
    *identity = std::move(identities[0]);
  }
  wc_status unwrap(const age::Identity &identity, const age::Stanza &stanza, age::FileKey *file_key,
                   std::string *detail = nullptr) {
    const char *why = "";
    const wc_status status = age::unwrap_ssh(kHostCrypto, identity, stanza, file_key, &why);
    if (detail != nullptr) *detail = why;
    return status;
  }
};

TEST_F(SshStanzas, RoundTripAndTampering) {
  for (const char *name : {"ed25519-nopsw", "rsa-nopsw"}) {
    age::Recipient recipient;
    age::Identity identity;
    load(name, &recipient, &identity);
    age::FileKey file_key, opened;
    for (size_t i = 0; i < file_key.bytes.size(); ++i) file_key.bytes[i] = static_cast<uint8_t>(i * 7 + 1);
    age::Stanza stanza;
    const char *detail = "";
    ASSERT_EQ(age::wrap(kHostCrypto, recipient, file_key, &stanza, &detail), WC_OK) << name << detail;
    EXPECT_EQ(stanza.type, std::string_view(name).starts_with("ed") ? "ssh-ed25519" : "ssh-rsa");
    ASSERT_EQ(unwrap(identity, stanza, &opened), WC_OK) << name;
    EXPECT_EQ(opened.bytes, file_key.bytes);

    age::Stanza tampered = stanza;
    tampered.body[3] ^= 1;
    std::string why;
    EXPECT_EQ(unwrap(identity, tampered, &opened, &why), WC_ERR_AUTH) << name;
    EXPECT_NE(why.find("names this key"), std::string::npos) << why;
    age::Stanza other_tag = stanza;
    other_tag.args[0] = "AAAAAA";
    EXPECT_EQ(unwrap(identity, other_tag, &opened), WC_ERR_NO_IDENTITY) << name;
    age::Stanza extra_arg = stanza;
    extra_arg.args.push_back("x");
    EXPECT_EQ(unwrap(identity, extra_arg, &opened), WC_ERR_FORMAT) << name;
  }
}

TEST_F(SshStanzas, MalformedEd25519ShareFailsWhicheverKeyItNames) {
  age::Recipient recipient;
  age::Identity identity;
  load("ed25519-nopsw", &recipient, &identity);
  age::FileKey file_key;
  age::Stanza stanza;
  const char *detail = "";
  ASSERT_EQ(age::wrap(kHostCrypto, recipient, file_key, &stanza, &detail), WC_OK);
  stanza.args[0] = "AAAAAA";
  stanza.args[1] = stanza.args[1].substr(1);
  EXPECT_EQ(unwrap(identity, stanza, &file_key), WC_ERR_FORMAT);
}

TEST_F(SshStanzas, PassphraseIsAskedOnlyForAStanzaThatNamesTheKey) {
  age::Recipient recipient, other;
  age::Identity identity, unused;
  load("ed25519-psw", &recipient, &identity);
  load("rsa-nopsw", &other, &unused);
  int asked = 0;
  std::string answer(kPassphrase);
  identity.ask_ssh_passphrase = [&](std::vector<uint8_t> *passphrase) {
    ++asked;
    passphrase->assign(answer.begin(), answer.end());
    return WC_OK;
  };
  age::FileKey file_key, opened;
  file_key.bytes.fill(0x5a);
  age::Stanza mine, theirs;
  const char *detail = "";
  ASSERT_EQ(age::wrap(kHostCrypto, recipient, file_key, &mine, &detail), WC_OK);
  ASSERT_EQ(age::wrap(kHostCrypto, other, file_key, &theirs, &detail), WC_OK);
  EXPECT_EQ(unwrap(identity, theirs, &opened), WC_ERR_NO_IDENTITY);
  EXPECT_EQ(asked, 0);
  ASSERT_EQ(unwrap(identity, mine, &opened), WC_OK);
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(opened.bytes, file_key.bytes);
  answer = "wrong";
  EXPECT_EQ(unwrap(identity, mine, &opened), WC_ERR_AUTH);
  identity.ask_ssh_passphrase = nullptr;
  std::string why;
  EXPECT_EQ(unwrap(identity, mine, &opened, &why), WC_ERR_NO_IDENTITY);
  EXPECT_NE(why.find("passphrase"), std::string::npos) << why;
}


// ---- PEM keys -------------------------------------------------------------------

using PkeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;

// OpenSSL's PEM of `key`: PKCS#1 ("traditional") or PKCS#8, under `cipher`
// with `passphrase` where a cipher is given, as ssh-keygen -m PEM and
// openssl genpkey write them.
std::string openssl_pem(EVP_PKEY *key, bool traditional, const EVP_CIPHER *cipher = nullptr,
                        std::string_view passphrase = {}) {
  const std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  auto *pass = reinterpret_cast<unsigned char *>(const_cast<char *>(passphrase.data()));
  const int len = static_cast<int>(passphrase.size());
  const int written = traditional
                          ? PEM_write_bio_PrivateKey_traditional(bio.get(), key, cipher, pass, len, nullptr, nullptr)
                          : PEM_write_bio_PrivateKey(bio.get(), key, cipher, pass, len, nullptr, nullptr);
  EXPECT_EQ(written, 1);
  char *data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

Bytes bn_param(const EVP_PKEY *key, const char *name) {
  BIGNUM *value = nullptr;
  EXPECT_EQ(EVP_PKEY_get_bn_param(key, name, &value), 1);
  Bytes out(static_cast<size_t>(BN_num_bytes(value)));
  BN_bn2bin(value, out.data());
  BN_free(value);
  return out;
}

struct ParsedPem {
  wc_status status;
  std::string detail;
  age::SshKeyFile file;
};
ParsedPem parse_pem(const std::string &text) {
  ParsedPem parsed;
  const char *detail = "";
  parsed.status = age::parse_ssh_key_file(text, &parsed.file, &detail);
  parsed.detail = detail;
  return parsed;
}
wc_status open_pem(const age::SshKeyFile &file, std::string_view passphrase, age::SshPrivateKey *key,
                   std::string *detail = nullptr) {
  const char *why = "";
  const wc_status status = age::open_ssh_key_file(kHostCrypto, file, bytes_of(passphrase), key, &why);
  if (detail != nullptr) *detail = why;
  return status;
}
// Parses and opens `text`: the first failure's status.
wc_status parse_and_open(const std::string &text, std::string_view passphrase = {}, std::string *detail = nullptr) {
  ParsedPem parsed = parse_pem(text);
  if (detail != nullptr) *detail = parsed.detail;
  if (parsed.status != WC_OK) return parsed.status;
  age::SshPrivateKey key;
  return open_pem(parsed.file, passphrase, &key, detail);
}

// The same PEM with its body re-encoded from `der`, headers kept.
std::string with_body(const std::string &pem_text, const Bytes &der) {
  const size_t body = pem_text.rfind("\n\n") != std::string::npos ? pem_text.rfind("\n\n") + 2 : pem_text.find('\n') + 1;
  const size_t end = pem_text.find("-----END");
  const std::string encoded = openssl_base64(der);
  std::string lines;
  for (size_t at = 0; at < encoded.size(); at += 64) lines += encoded.substr(at, 64) + "\n";
  return pem_text.substr(0, body) + lines + pem_text.substr(end);
}
Bytes body_of(const std::string &pem_text) {
  const size_t blank = pem_text.rfind("\n\n");
  const size_t start = blank != std::string::npos ? blank + 2 : pem_text.find('\n') + 1;
  return unbase64(pem_text.substr(start, pem_text.find("-----END") - start));
}

class PemKeys : public SshVectors {
 protected:
  static void SetUpTestSuite() {
    rsa_ = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", size_t{2048});
    ed25519_ = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  }
  static void TearDownTestSuite() {
    EVP_PKEY_free(rsa_);
    EVP_PKEY_free(ed25519_);
  }
  // The public key line of a key, as KEY.pub holds it.
  static std::string public_line(EVP_PKEY *key) {
    ParsedPem parsed = parse_pem(openssl_pem(key, false));
    age::SshPublicKey public_key;
    const char *detail = "";
    EXPECT_EQ(age::ssh_key_file_public_key(kHostCrypto, parsed.file, &public_key, &detail), WC_OK) << detail;
    return age::format_ssh_public_key(public_key) + " me@host\n";
  }
  static std::string encrypted_rsa(const EVP_CIPHER *cipher = EVP_aes_128_cbc()) {
    return openssl_pem(rsa_, true, cipher, "secret") + public_line(rsa_);
  }
  static EVP_PKEY *rsa_, *ed25519_;
};
EVP_PKEY *PemKeys::rsa_ = nullptr;
EVP_PKEY *PemKeys::ed25519_ = nullptr;

TEST_F(PemKeys, UnencryptedKeysOpenToTheirKeys) {
  const std::pair<std::string, age::SshKeyType> keys[] = {
      {openssl_pem(rsa_, true), age::SshKeyType::rsa},
      {openssl_pem(rsa_, false), age::SshKeyType::rsa},
      {openssl_pem(ed25519_, false), age::SshKeyType::ed25519},
  };
  for (const auto &[text, type] : keys) {
    ASSERT_TRUE(text.starts_with(type == age::SshKeyType::rsa && text.find("RSA PRIVATE") != std::string::npos
                                     ? "-----BEGIN RSA PRIVATE KEY-----"
                                     : "-----BEGIN PRIVATE KEY-----"));
    ParsedPem parsed = parse_pem(text);
    ASSERT_EQ(parsed.status, WC_OK) << parsed.detail;
    EXPECT_EQ(parsed.file.type(), type);
    EXPECT_FALSE(parsed.file.encrypted());
    age::SshPrivateKey key;
    ASSERT_EQ(open_pem(parsed.file, "", &key), WC_OK);
    EXPECT_EQ(key.public_key.type, type);
    if (type == age::SshKeyType::rsa) {
      EXPECT_TRUE(same_bytes(key.rsa.public_key.n, bn_param(rsa_, OSSL_PKEY_PARAM_RSA_N)));
      EXPECT_TRUE(same_bytes(key.rsa.d, bn_param(rsa_, OSSL_PKEY_PARAM_RSA_D)));
      EXPECT_TRUE(same_bytes(key.rsa.p, bn_param(rsa_, OSSL_PKEY_PARAM_RSA_FACTOR1)));
    } else {
      Bytes seed(32);
      size_t len = seed.size();
      ASSERT_EQ(EVP_PKEY_get_raw_private_key(ed25519_, seed.data(), &len), 1);
      EXPECT_TRUE(same_bytes(Bytes(key.ed25519_seed.begin(), key.ed25519_seed.end()), seed));
    }
  }
  // cryptography-vectors' PKCS#8 Ed25519 key (RFC 8410's example).
  EXPECT_EQ(parse_and_open(read_text(dir_.parent_path() / "Ed25519" / "ed25519-pkcs8.pem")), WC_OK);
}

TEST_F(PemKeys, EncryptedPkcs1OpensWithItsPassphraseUnderEachCipher) {
  for (const EVP_CIPHER *cipher : {EVP_aes_128_cbc(), EVP_aes_192_cbc(), EVP_aes_256_cbc(), EVP_des_ede3_cbc()}) {
    const std::string text = encrypted_rsa(cipher);
    ParsedPem parsed = parse_pem(text);
    ASSERT_EQ(parsed.status, WC_OK) << EVP_CIPHER_get0_name(cipher) << ": " << parsed.detail;
    EXPECT_TRUE(parsed.file.encrypted());
    age::SshPrivateKey key;
    ASSERT_EQ(open_pem(parsed.file, "secret", &key), WC_OK) << EVP_CIPHER_get0_name(cipher);
    EXPECT_TRUE(same_bytes(key.rsa.public_key.n, bn_param(rsa_, OSSL_PKEY_PARAM_RSA_N)));
    std::string why;
    age::SshPrivateKey wrong;
    EXPECT_EQ(open_pem(parsed.file, "Secret", &wrong, &why), WC_ERR_AUTH) << EVP_CIPHER_get0_name(cipher);
    EXPECT_NE(why.find("incorrect passphrase"), std::string::npos) << why;
  }
}

TEST_F(PemKeys, EncryptedKeyNeedsItsOwnPublicKeyBesideIt) {
  const std::string alone = openssl_pem(rsa_, true, EVP_aes_128_cbc(), "secret");
  std::string why;
  EXPECT_EQ(parse_and_open(alone, "secret", &why), WC_ERR_FORMAT);
  EXPECT_NE(why.find("KEY.pub"), std::string::npos) << why;
  // Another key's public line: found out once the key is decrypted.
  PkeyPtr other(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", size_t{2048}), EVP_PKEY_free);
  EXPECT_EQ(parse_and_open(alone + public_line(other.get()), "secret", &why), WC_ERR_FORMAT);
  EXPECT_NE(why.find("mismatched private and public SSH key"), std::string::npos) << why;
  EXPECT_EQ(parse_and_open(alone + public_line(ed25519_), "secret"), WC_ERR_FORMAT);
  EXPECT_EQ(parse_and_open(alone + "ssh-rsa AAAA\n", "secret"), WC_ERR_FORMAT);
  // An unencrypted key takes nothing after its END line.
  EXPECT_EQ(parse_and_open(openssl_pem(rsa_, true) + public_line(rsa_)), WC_ERR_FORMAT);
}

TEST_F(PemKeys, OtherFormsAreRefusedByName) {
  const fs::path root = dir_.parent_path();
  const std::pair<fs::path, const char *> refused[] = {
      {root / "Traditional_OpenSSL_Serialization" / "dsa.2048.pem", "DSA"},
      {root / "PKCS8" / "ec_private_key.pem", "ECDSA"},
      {root / "PKCS8" / "unenc-dsa-pkcs8.pem", "DSA"},
      {root / "Ed25519" / "ed25519-pkcs8-enc.pem", "encrypted PKCS#8"},
      {root / "PKCS8" / "rsa_pss_2048.pem", "neither RSA nor Ed25519"},
      {root / "Ed25519" / "ed25519-pub.pem", "no private key age reads"},
  };
  for (const auto &[path, why] : refused) {
    std::string detail;
    EXPECT_EQ(parse_and_open(read_text(path), "", &detail), WC_ERR_UNSUPPORTED) << path;
    EXPECT_NE(detail.find(why), std::string::npos) << path << ": " << detail;
  }
  const std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  ASSERT_EQ(PEM_write_bio_PKCS8PrivateKey(bio.get(), rsa_, EVP_aes_256_cbc(), nullptr, 0, nullptr,
                                          const_cast<char *>("secret")),
            1);
  char *data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  const std::string encrypted_pkcs8(data, static_cast<size_t>(size));
  PkeyPtr ec(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"), EVP_PKEY_free);
  std::string detail;
  EXPECT_EQ(parse_and_open(openssl_pem(ec.get(), true), "", &detail), WC_ERR_UNSUPPORTED);
  EXPECT_NE(detail.find("ECDSA"), std::string::npos) << detail;
  EXPECT_EQ(parse_and_open(encrypted_pkcs8 + public_line(rsa_), "secret", &detail), WC_ERR_UNSUPPORTED);
  EXPECT_NE(detail.find("encrypted PKCS#8"), std::string::npos) << detail;
  // A PKCS#8 key encrypted under the legacy headers, which Go refuses too.
  const std::string pkcs8 = openssl_pem(rsa_, false);
  std::string legacy_pkcs8 = pkcs8;
  legacy_pkcs8.insert(pkcs8.find('\n') + 1, "Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00112233445566778899AABBCCDDEEFF\n\n");
  EXPECT_EQ(parse_and_open(legacy_pkcs8 + public_line(rsa_)), WC_ERR_UNSUPPORTED);
}

TEST_F(PemKeys, BadDekInfoIsRefusedBeforeAnyPassphrase) {
  const std::string text = encrypted_rsa();
  const size_t dek = text.find("DEK-Info: ");
  const size_t dek_end = text.find('\n', dek);
  const auto with_dek = [&](const std::string &value) {
    return text.substr(0, dek) + "DEK-Info: " + value + text.substr(dek_end);
  };
  const std::string iv = text.substr(text.find(',', dek) + 1, dek_end - text.find(',', dek) - 1);
  EXPECT_EQ(parse_pem(with_dek("AES-128-CBC")).status, WC_ERR_FORMAT);
  EXPECT_EQ(parse_pem(with_dek("AES-128-CBC,zz" + iv.substr(2))).status, WC_ERR_FORMAT);
  EXPECT_EQ(parse_pem(with_dek("AES-128-CBC," + iv.substr(2))).status, WC_ERR_FORMAT);
  EXPECT_EQ(parse_pem(with_dek("AES-128-CBC," + iv + "00")).status, WC_ERR_FORMAT);
  EXPECT_EQ(parse_pem(with_dek("DES-EDE3-CBC," + iv)).status, WC_ERR_FORMAT);  // 16 bytes: not DES's block
  const ParsedPem unknown = parse_pem(with_dek("CAMELLIA-128-CBC," + iv));
  EXPECT_EQ(unknown.status, WC_ERR_UNSUPPORTED);
  EXPECT_NE(unknown.detail.find("cipher"), std::string::npos) << unknown.detail;
  EXPECT_EQ(parse_pem(with_dek("DES-CBC," + iv.substr(0, 16))).status, WC_ERR_UNSUPPORTED);
  // Headers out of place, missing, repeated or unknown.
  std::string no_dek = text;
  no_dek.erase(dek, dek_end - dek + 1);
  EXPECT_EQ(parse_pem(no_dek).status, WC_ERR_FORMAT);
  std::string twice = text;
  twice.insert(dek, text.substr(dek, dek_end - dek + 1));
  EXPECT_EQ(parse_pem(twice).status, WC_ERR_FORMAT);
  std::string other_header = text;
  other_header.insert(dek, "Comment: hello\n");
  EXPECT_EQ(parse_pem(other_header).status, WC_ERR_FORMAT);
  std::string proc_type = text;
  proc_type.replace(proc_type.find("4,ENCRYPTED"), 11, "4,MIC-ONLY");
  EXPECT_EQ(parse_pem(proc_type).status, WC_ERR_FORMAT);
  // cryptography-vectors' malformed headers.
  for (const char *name : {"key1-malformed-dek-info.pem", "key1-malformed-iv.pem", "key1-no-dek-info.pem",
                           "key1-short-iv.pem"}) {
    EXPECT_EQ(parse_pem(read_text(dir_.parent_path() / "Traditional_OpenSSL_Serialization" / name) +
                        public_line(rsa_))
                  .status,
              WC_ERR_FORMAT)
        << name;
  }
}

TEST_F(PemKeys, DamagedTextAndDerAreRefused) {
  for (const std::string &text : {openssl_pem(rsa_, true), openssl_pem(ed25519_, false)}) {
    // Every cut of the text: refused, never a key, never a crash.
    for (size_t len = 0; len + 1 < text.size(); len += len < 100 ? 1 : 37) {
      EXPECT_NE(parse_and_open(text.substr(0, len)), WC_OK) << len;
    }
    // Every truncation of the DER, well armored.
    const Bytes der = body_of(text);
    ASSERT_EQ(parse_and_open(with_body(text, der)), WC_OK);
    for (size_t len = 0; len < der.size(); len += len < 64 ? 1 : 97) {
      const wc_status status = parse_and_open(with_body(text, Bytes(der.begin(), der.begin() + long(len))));
      EXPECT_EQ(status, WC_ERR_FORMAT) << len;
    }
    Bytes longer = der;
    longer.push_back(0);
    EXPECT_EQ(parse_and_open(with_body(text, longer)), WC_ERR_FORMAT);
    // Lengths past the end: the outer SEQUENCE's made huge.
    Bytes huge = der;
    huge[1] = 0x84;
    EXPECT_EQ(parse_and_open(with_body(text, huge)), WC_ERR_FORMAT);
    // Base64 that is not: a bad character, a lost character, bad padding.
    std::string bad = text;
    bad[bad.find('\n') + 5] = '*';
    EXPECT_EQ(parse_and_open(bad), WC_ERR_FORMAT);
    std::string lost = text;
    lost.erase(lost.find('\n') + 5, 1);
    EXPECT_EQ(parse_and_open(lost), WC_ERR_FORMAT);
    // A mismatched END label, and junk before or after.
    std::string label = text;
    label.replace(label.find("-----END ") + 9, 3, "XYZ");
    EXPECT_EQ(parse_and_open(label), WC_ERR_FORMAT);
    EXPECT_EQ(parse_and_open("junk\n" + text), WC_ERR_FORMAT);
    EXPECT_EQ(parse_and_open(text + "junk\n"), WC_ERR_FORMAT);
  }
  // A PKCS#8 whose algorithm is Ed25519 but whose key is RSA's.
  std::string swapped = openssl_pem(rsa_, false);
  Bytes der = body_of(swapped);
  const Bytes rsa_oid = {0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01};
  const auto at = std::search(der.begin(), der.end(), rsa_oid.begin(), rsa_oid.end());
  ASSERT_NE(at, der.end());
  EXPECT_EQ(parse_and_open(with_body(swapped, der)), WC_OK);
  std::copy_n(Bytes{0x06, 0x03, 0x2b, 0x65, 0x70, 0x05, 0x00, 0x05, 0x00, 0x05, 0x00}.begin(), rsa_oid.size(), at);
  EXPECT_NE(parse_and_open(with_body(swapped, der)), WC_OK);
  // A file past age's 16 KiB.
  std::string long_text = openssl_pem(rsa_, true);
  long_text.insert(0, 17 * 1024, '\n');
  EXPECT_EQ(parse_and_open(long_text), WC_ERR_FORMAT);
}

TEST_F(PemKeys, EncryptedBodyDamageIsRefused) {
  const std::string text = encrypted_rsa();
  const Bytes der = body_of(text);
  // Not whole blocks; empty.
  EXPECT_EQ(parse_pem(with_body(text, Bytes(der.begin(), der.end() - 1))).status, WC_ERR_FORMAT);
  EXPECT_EQ(parse_pem(with_body(text, {})).status, WC_ERR_FORMAT);
  // Cut by whole blocks, or a flipped bit: the padding or the DER breaks,
  // which reads as a wrong passphrase.
  EXPECT_EQ(parse_and_open(with_body(text, Bytes(der.begin(), der.end() - 16)), "secret"), WC_ERR_AUTH);
  for (size_t at : {size_t{0}, der.size() / 2, der.size() - 1}) {
    Bytes flipped = der;
    flipped[at] ^= 0x40;
    EXPECT_NE(parse_and_open(with_body(text, flipped), "secret"), WC_OK) << at;
  }
}

TEST_F(PemKeys, StanzasOpenWithPemIdentities) {
  const std::string keys[] = {openssl_pem(rsa_, true), openssl_pem(rsa_, false), openssl_pem(ed25519_, false),
                              encrypted_rsa()};
  for (const std::string &text : keys) {
    std::vector<age::Identity> identities;
    const char *detail = "";
    ASSERT_EQ(age::parse_identities_file(text, &identities, &detail), WC_OK) << detail;
    age::Identity &identity = identities.at(0);
    int asked = 0;
    identity.ask_ssh_passphrase = [&asked](std::vector<uint8_t> *passphrase) {
      ++asked;
      passphrase->assign({'s', 'e', 'c', 'r', 'e', 't'});
      return WC_OK;
    };
    age::Recipient recipient;
    ASSERT_EQ(age::recipient_of(kHostCrypto, identity, &recipient, &detail), WC_OK);
    EXPECT_EQ(asked, 0);
    age::FileKey file_key, opened;
    file_key.bytes.fill(0x3c);
    age::Stanza stanza;
    ASSERT_EQ(age::wrap(kHostCrypto, recipient, file_key, &stanza, &detail), WC_OK);
    ASSERT_EQ(age::unwrap_ssh(kHostCrypto, identity, stanza, &opened, &detail), WC_OK) << detail;
    EXPECT_EQ(opened.bytes, file_key.bytes);
    EXPECT_EQ(asked, identity.ssh->encrypted() ? 1 : 0);
    age::Stanza other = stanza;
    other.args[0] = "AAAAAA";
    EXPECT_EQ(age::unwrap_ssh(kHostCrypto, identity, other, &opened, &detail), WC_ERR_NO_IDENTITY);
    EXPECT_EQ(asked, identity.ssh->encrypted() ? 1 : 0);
  }
}

// ---- the C API: wc_age_identities_add_with_prompt ----------------------------------

// What the test's passphrase callback answers, and how often it was asked.
struct Prompt {
  std::string answer;
  wc_status status = WC_OK;
  size_t claimed_extra = 0;  // a length past what was written, to test the bound
  int asked = 0;
};

wc_status answer_prompt(void *context, uint8_t *out, size_t out_cap, size_t *out_len) {
  auto *prompt = static_cast<Prompt *>(context);
  ++prompt->asked;
  if (prompt->status != WC_OK) return prompt->status;
  std::copy_n(prompt->answer.begin(), std::min(prompt->answer.size(), out_cap), out);
  *out_len = prompt->answer.size() + prompt->claimed_extra;
  return WC_OK;
}

class SshApi : public SshVectors {
 protected:
  // A file encrypted to `name`.pub through the C API.
  Bytes encrypt_to(const std::string &name, const Bytes &plain) {
    wc_age_recipients *recipients = nullptr;
    EXPECT_EQ(wc_age_recipients_new(&recipients), WC_OK);
    EXPECT_EQ(wc_age_recipients_add(recipients, text(name + ".key.pub").c_str(), nullptr), WC_OK);
    Bytes out(plain.size() + 4096);
    size_t len = 0;
    EXPECT_EQ(wc_age_encrypt_buffer(nullptr, recipients, 0, nullptr, out.data(), out.size(), &len, plain.data(),
                                    plain.size()),
              WC_OK);
    wc_age_recipients_free(recipients);
    out.resize(len);
    return out;
  }
  // Decrypts `file` with the key file `name`, asking `prompt` (none: nullptr).
  wc_status decrypt_with(const std::string &name, Prompt *prompt, const Bytes &file, Bytes *plain) {
    wc_age_identities *identities = nullptr;
    EXPECT_EQ(wc_age_identities_new(&identities), WC_OK);
    const std::string key = text(name + ".key");
    EXPECT_EQ(prompt != nullptr
                  ? wc_age_identities_add_with_prompt(identities, key.c_str(), answer_prompt, prompt, nullptr)
                  : wc_age_identities_add(identities, key.c_str(), nullptr),
              WC_OK);
    plain->assign(file.size(), 0);
    size_t len = 0;
    const wc_status status = wc_age_decrypt_buffer(nullptr, identities, 0, UINT64_MAX, nullptr, plain->data(),
                                                   plain->size(), &len, file.data(), file.size());
    plain->resize(len);
    wc_age_identities_free(identities);
    return status;
  }
};

TEST_F(SshApi, ThePromptIsCalledOnlyForItsKeyAndItsAnswerChecked) {
  const Bytes plain = from_hex("00112233445566778899");
  const Bytes for_key = encrypt_to("ed25519-psw", plain);
  const Bytes for_other = encrypt_to("rsa-nopsw", plain);
  Bytes out;
  Prompt right{std::string(kPassphrase)};
  ASSERT_EQ(decrypt_with("ed25519-psw", &right, for_key, &out), WC_OK);
  EXPECT_TRUE(same_bytes(plain, out));
  EXPECT_EQ(right.asked, 1);
  EXPECT_EQ(decrypt_with("ed25519-psw", &right, for_other, &out), WC_ERR_NO_IDENTITY);
  EXPECT_EQ(right.asked, 1);
  Prompt wrong{"nope"};
  EXPECT_EQ(decrypt_with("ed25519-psw", &wrong, for_key, &out), WC_ERR_AUTH);
  Prompt gives_up{"", WC_ERR_IO};
  EXPECT_EQ(decrypt_with("ed25519-psw", &gives_up, for_key, &out), WC_ERR_IO);
  Prompt overlong{std::string(kPassphrase), WC_OK, WC_AGE_PASSPHRASE_MAX};
  EXPECT_EQ(decrypt_with("ed25519-psw", &overlong, for_key, &out), WC_ERR_INVALID_ARGUMENT);
  // Without a prompt the key is kept, and opens nothing.
  EXPECT_EQ(decrypt_with("ed25519-psw", nullptr, for_key, &out), WC_ERR_NO_IDENTITY);
  // An unencrypted key never asks.
  Prompt unused{"x"};
  ASSERT_EQ(decrypt_with("rsa-nopsw", &unused, for_other, &out), WC_OK);
  EXPECT_EQ(unused.asked, 0);
}

}  // namespace
}  // namespace wctest
