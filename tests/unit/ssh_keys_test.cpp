// SSH keys for age (age/ssh_keys.h, age/age_ssh.h): the OpenSSH key files
// that cryptography-vectors ships, opened and refused by name; the attacks
// on the parsers; bcrypt-pbkdf against the `bcrypt` package's known
// answers; and the ssh-ed25519 and ssh-rsa stanzas, wrapped and unwrapped.
#include "age/ssh_keys.h"

#include <gtest/gtest.h>
#include <openssl/bn.h>
#include <openssl/evp.h>

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
  const Parsed pkcs1 = parse("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n");
  EXPECT_EQ(pkcs1.status, WC_ERR_UNSUPPORTED);
  EXPECT_NE(pkcs1.detail.find("ssh-keygen -p"), std::string::npos) << pkcs1.detail;
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
