// Every age key type through every C API call that takes or returns a key:
// X25519 and hybrid identities, OpenSSH ed25519 and RSA keys (plain, and
// passphrase-protected with and without a way to the passphrase), a plugin
// identity and a passphrase. Each call either works (a file encrypted to the
// identity's recipient opens with the identity, and with a copy of it) or
// refuses with a sentence that names the type; none formats, or derives a
// recipient from, a key as a type it is not. Once, an SSH or plugin identity
// formatted as the all-zero X25519 key, one recipient for all of them that
// anyone could open. The Python side: tests/python/test_age_key_types.py
// (which also runs a plugin's round trip).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "age/age_keys.h"
#include "age/key_table.h"
#include "support/bytes.h"
#include "support/openssl_oracle.h"
#include "support/test_environment.h"
#include "warpcrypt/age.h"

namespace wctest {
namespace {

namespace age = warpcrypt::age;
namespace fs = std::filesystem;

// The passphrase cryptography-vectors' gen.sh gives every *-psw key.
constexpr char kSshPassphrase[] = "password";
constexpr char kPassphrase[] = "correct horse battery staple";

struct IdentitySet {
  wc_age_identities *set = nullptr;
  IdentitySet() { EXPECT_EQ(wc_age_identities_new(&set), WC_OK); }
  ~IdentitySet() { wc_age_identities_free(set); }
  IdentitySet(const IdentitySet &) = delete;
  IdentitySet &operator=(const IdentitySet &) = delete;
};

struct RecipientSet {
  wc_age_recipients *set = nullptr;
  RecipientSet() { EXPECT_EQ(wc_age_recipients_new(&set), WC_OK); }
  ~RecipientSet() { wc_age_recipients_free(set); }
  RecipientSet(const RecipientSet &) = delete;
  RecipientSet &operator=(const RecipientSet &) = delete;
};

// A call's status, the text it wrote and its sentence.
struct Text {
  wc_status status = WC_OK;
  std::string text;
  std::string detail;
  bool zeroed = false;  // on failure: whether the whole buffer was zeroed
};

Text call(wc_status (*format)(const wc_age_identities *, size_t, char *, size_t, const char **),
          const wc_age_identities *set, size_t index) {
  std::array<char, WC_AGE_KEY_MAX_LEN> out;
  out.fill('x');
  const char *detail = nullptr;
  Text result;
  result.status = format(set, index, out.data(), out.size(), &detail);
  if (result.status == WC_OK) result.text = out.data();
  if (detail != nullptr) result.detail = detail;
  result.zeroed = all_zero(reinterpret_cast<const uint8_t *>(out.data()), out.size());
  return result;
}

std::string type_of(const wc_age_identities *set, size_t index) {
  const char *type = nullptr;
  EXPECT_EQ(wc_age_identity_type(set, index, &type), WC_OK);
  return type != nullptr ? type : "";
}

// A file's bytes, or the failure's status and sentence.
struct Job {
  wc_status status = WC_OK;
  Bytes out;
  std::string message;
};

Job encrypt(const wc_age_recipients *recipients, const Bytes &plain) {
  Job result;
  result.out.resize(plain.size() + 16384);  // the header of one stanza, and the tags
  size_t len = 0;
  wc_job job;
  wc_job_init(&job);
  result.status = wc_age_encrypt_buffer(nullptr, recipients, 0, &job, result.out.data(), result.out.size(), &len,
                                        plain.data(), plain.size());
  result.message = job.message;
  result.out.resize(len);
  return result;
}

Job decrypt(const wc_age_identities *identities, const Bytes &file) {
  Job result;
  result.out.resize(file.size());
  size_t len = 0;
  wc_job job;
  wc_job_init(&job);
  result.status = wc_age_decrypt_buffer(nullptr, identities, 0, UINT64_MAX, &job, result.out.data(),
                                        result.out.size(), &len, file.data(), file.size());
  result.message = job.message;
  result.out.resize(len);
  return result;
}

std::string read_text(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// "ssh-ed25519 AAAA... comment" without the comment: the recipient an SSH
// identity stands for.
std::string without_comment(const std::string &line) {
  const size_t blob_end = line.find_first_of(" \t\n", line.find(' ') + 1);
  return line.substr(0, blob_end);
}

wc_status give_ssh_passphrase(void *, uint8_t *out, size_t out_cap, size_t *out_len) {
  const size_t len = std::strlen(kSshPassphrase);
  if (len > out_cap) return WC_ERR_OUTPUT_TOO_SMALL;
  std::memcpy(out, kSshPassphrase, len);
  *out_len = len;
  return WC_OK;
}

// What one key type must do with each call.
struct KeyCase {
  const char *name;
  const char *type;                   // wc_age_identity_type
  const char *ssh_key;                // the cryptography-vectors key file, or nullptr
  bool has_secret_key;                // wc_age_identity_format works
  bool has_recipient;                 // wc_age_identity_recipient works
  const char *stanza;                 // the stanza a file to its recipient holds; nullptr: none made here
  const char *refusal;                // decrypting such a file refuses with this; nullptr: it opens
  std::function<wc_status(wc_age_identities *, const std::string &ssh_text)> add;
};

const KeyCase kCases[] = {
    {"x25519", "x25519", nullptr, true, true, "X25519", nullptr,
     [](wc_age_identities *set, const std::string &) { return wc_age_identities_generate(set); }},
    {"hybrid", "hybrid", nullptr, true, true, "mlkem768x25519", nullptr,
     [](wc_age_identities *set, const std::string &) { return wc_age_identities_generate_pq(set); }},
    {"ssh_ed25519", "ssh-ed25519", "ed25519-nopsw", false, true, "ssh-ed25519", nullptr,
     [](wc_age_identities *set, const std::string &text) { return wc_age_identities_add(set, text.c_str(), nullptr); }},
    {"ssh_ed25519_protected", "ssh-ed25519", "ed25519-psw", false, true, "ssh-ed25519", nullptr,
     [](wc_age_identities *set, const std::string &text) {
       return wc_age_identities_add_with_prompt(set, text.c_str(), give_ssh_passphrase, nullptr, nullptr);
     }},
    {"ssh_ed25519_protected_no_prompt", "ssh-ed25519", "ed25519-psw", false, true, "ssh-ed25519",
     "passphrase-protected SSH key",
     [](wc_age_identities *set, const std::string &text) { return wc_age_identities_add(set, text.c_str(), nullptr); }},
    {"ssh_rsa", "ssh-rsa", "rsa-nopsw", false, true, "ssh-rsa", nullptr,
     [](wc_age_identities *set, const std::string &text) { return wc_age_identities_add(set, text.c_str(), nullptr); }},
    {"ssh_rsa_protected", "ssh-rsa", "rsa-psw", false, true, "ssh-rsa", nullptr,
     [](wc_age_identities *set, const std::string &text) {
       return wc_age_identities_add_with_prompt(set, text.c_str(), give_ssh_passphrase, nullptr, nullptr);
     }},
    {"ssh_rsa_protected_no_prompt", "ssh-rsa", "rsa-psw", false, true, "ssh-rsa", "passphrase-protected SSH key",
     [](wc_age_identities *set, const std::string &text) { return wc_age_identities_add(set, text.c_str(), nullptr); }},
    // Its recipient is the plugin's to derive; its round trip runs the
    // plugin, in the Python test.
    {"plugin", "plugin", nullptr, false, false, nullptr, nullptr,
     [](wc_age_identities *set, const std::string &) {
       const std::string identity = age::encode_bech32("AGE-PLUGIN-WCTEST-", std::array<uint8_t, 32>{1, 2, 3});
       return wc_age_identities_add(set, identity.c_str(), nullptr);
     }},
    {"passphrase", "passphrase", nullptr, false, false, "scrypt", nullptr,
     [](wc_age_identities *set, const std::string &) {
       return wc_age_identities_add_passphrase(set, reinterpret_cast<const uint8_t *>(kPassphrase),
                                               std::strlen(kPassphrase), 4);
     }},
};

// gtest names a case by its name, not its bytes.
void PrintTo(const KeyCase &key, std::ostream *out) { *out << key.name; }

class AgeKeyTypes : public ::testing::TestWithParam<KeyCase> {
 protected:
  void SetUp() override {
    // What the old code made of every SSH and plugin identity: the
    // all-zero key, and its recipient; and the hybrid's all-zero seed.
    for (std::string_view hrp : {"AGE-SECRET-KEY-", "AGE-SECRET-KEY-PQ-"}) {
      const std::string secret = age::encode_bech32(hrp, std::array<uint8_t, 32>{});
      IdentitySet zero;
      ASSERT_EQ(wc_age_identities_add(zero.set, secret.c_str(), nullptr), WC_OK);
      const Text recipient = call(wc_age_identity_recipient, zero.set, 0);
      ASSERT_EQ(recipient.status, WC_OK);
      zero_keys_.push_back(secret);
      zero_keys_.push_back(recipient.text);
      ASSERT_EQ(wc_age_identities_add(zero_identities_.set, secret.c_str(), nullptr), WC_OK);
    }
    if (GetParam().ssh_key != nullptr) {
      fs::path root;
      locate_vectors_dir(&root);
      if (IsSkipped() || HasFailure()) return;
      const fs::path key = root / "asymmetric" / "OpenSSH" / (std::string(GetParam().ssh_key) + ".key");
      ssh_text_ = read_text(key);
      ssh_public_ = without_comment(read_text(key.string() + ".pub"));
    }
  }

  // The case's identity, alone in `set`.
  void add(const IdentitySet &set) const {
    ASSERT_EQ(GetParam().add(set.set, ssh_text_), WC_OK);
    ASSERT_EQ(wc_age_identities_count(set.set), 1u);
  }

  bool is_zero_key(const std::string &text) const {
    return std::find(zero_keys_.begin(), zero_keys_.end(), text) != zero_keys_.end();
  }

  std::vector<std::string> zero_keys_;
  IdentitySet zero_identities_;
  std::string ssh_text_;
  std::string ssh_public_;  // the .pub line without its comment
};

TEST_P(AgeKeyTypes, TypeFormatAndRecipientWorkOrRefuseByName) {
  const KeyCase &key = GetParam();
  IdentitySet identity;
  add(identity);
  if (HasFatalFailure()) return;
  EXPECT_EQ(type_of(identity.set, 0), key.type);

  const Text secret = call(wc_age_identity_format, identity.set, 0);
  EXPECT_FALSE(is_zero_key(secret.text)) << secret.text;
  if (key.has_secret_key) {
    ASSERT_EQ(secret.status, WC_OK) << secret.detail;
    // The text reads back as the same type and the same key.
    IdentitySet again;
    ASSERT_EQ(wc_age_identities_add(again.set, secret.text.c_str(), nullptr), WC_OK);
    EXPECT_EQ(type_of(again.set, 0), key.type);
    EXPECT_EQ(call(wc_age_identity_format, again.set, 0).text, secret.text);
    EXPECT_EQ(call(wc_age_identity_recipient, again.set, 0).text, call(wc_age_identity_recipient, identity.set, 0).text);
    char small[10];
    EXPECT_EQ(wc_age_identity_format(identity.set, 0, small, sizeof small, nullptr), WC_ERR_OUTPUT_TOO_SMALL);
  } else {
    EXPECT_EQ(secret.status, WC_ERR_UNSUPPORTED);
    EXPECT_NE(secret.detail.find(std::string(key.type) + " identity has no age secret key"), std::string::npos)
        << secret.detail;
    EXPECT_TRUE(secret.zeroed);
  }

  const Text recipient = call(wc_age_identity_recipient, identity.set, 0);
  EXPECT_FALSE(is_zero_key(recipient.text)) << recipient.text;
  if (key.has_recipient) {
    ASSERT_EQ(recipient.status, WC_OK) << recipient.detail;
    if (key.ssh_key != nullptr) {
      EXPECT_EQ(recipient.text, ssh_public_);
    }
    RecipientSet recipients;
    EXPECT_EQ(wc_age_recipients_add(recipients.set, recipient.text.c_str(), nullptr), WC_OK);
  } else {
    EXPECT_EQ(recipient.status, WC_ERR_UNSUPPORTED);
    EXPECT_NE(recipient.detail.find(std::string(key.type) + " identity"), std::string::npos) << recipient.detail;
    EXPECT_TRUE(recipient.zeroed);
  }

  // No identity at index 1: refused, whatever the type.
  EXPECT_EQ(call(wc_age_identity_format, identity.set, 1).status, WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(call(wc_age_identity_recipient, identity.set, 1).status, WC_ERR_INVALID_ARGUMENT);
  const char *type = "unset";
  EXPECT_EQ(wc_age_identity_type(identity.set, 1, &type), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(type, nullptr);
}

TEST_P(AgeKeyTypes, ACopyIsTheSameIdentity) {
  IdentitySet identity, copy;
  add(identity);
  if (HasFatalFailure()) return;
  ASSERT_EQ(wc_age_identities_add_copy(copy.set, identity.set, 0), WC_OK);
  // Into its own set too, where the copy may move the set's storage.
  ASSERT_EQ(wc_age_identities_add_copy(identity.set, identity.set, 0), WC_OK);
  ASSERT_EQ(wc_age_identities_count(identity.set), 2u);
  for (const auto &[set, index] : {std::pair{copy.set, size_t{0}}, std::pair{identity.set, size_t{1}}}) {
    EXPECT_EQ(type_of(set, index), GetParam().type);
    for (auto format : {wc_age_identity_format, wc_age_identity_recipient}) {
      const Text original = call(format, identity.set, 0);
      const Text copied = call(format, set, index);
      EXPECT_EQ(copied.status, original.status);
      EXPECT_EQ(copied.text, original.text);
      EXPECT_EQ(copied.detail, original.detail);
    }
  }
  EXPECT_EQ(wc_age_identities_add_copy(copy.set, identity.set, 2), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_age_identities_add_copy(copy.set, nullptr, 0), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_age_identities_add_copy(nullptr, identity.set, 0), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_age_identities_count(copy.set), 1u);
}

// The types whose files are made here: a plugin's runs its plugin, in
// tests/python/test_age_key_types.py.
class AgeKeyTypeFiles : public AgeKeyTypes {};

TEST_P(AgeKeyTypeFiles, AFileToItsRecipientOpensWithItAndItsCopyOnly) {
  const KeyCase &key = GetParam();
  IdentitySet identity, copy;
  add(identity);
  if (HasFatalFailure()) return;
  ASSERT_EQ(wc_age_identities_add_copy(copy.set, identity.set, 0), WC_OK);
  RecipientSet recipients;
  if (key.has_recipient) {
    ASSERT_EQ(wc_age_recipients_add(recipients.set, call(wc_age_identity_recipient, identity.set, 0).text.c_str(),
                                    nullptr),
              WC_OK);
  } else {
    ASSERT_EQ(wc_age_recipients_add_passphrase(recipients.set, reinterpret_cast<const uint8_t *>(kPassphrase),
                                               std::strlen(kPassphrase), 2),
              WC_OK);
  }
  Bytes plain(3000);
  for (size_t i = 0; i < plain.size(); ++i) plain[i] = static_cast<uint8_t>(i * 31 + 7);
  const Job file = encrypt(recipients.set, plain);
  ASSERT_EQ(file.status, WC_OK) << file.message;
  const std::string header(file.out.begin(), file.out.begin() + std::min<size_t>(file.out.size(), 4096));
  EXPECT_NE(header.find(std::string("\n-> ") + key.stanza + " "), std::string::npos) << header;

  for (const wc_age_identities *set : {identity.set, copy.set}) {
    const Job opened = decrypt(set, file.out);
    if (key.refusal == nullptr) {
      ASSERT_EQ(opened.status, WC_OK) << opened.message;
      EXPECT_TRUE(same_bytes(plain, opened.out));
    } else {
      EXPECT_EQ(opened.status, WC_ERR_NO_IDENTITY);
      EXPECT_NE(opened.message.find(key.refusal), std::string::npos) << opened.message;
    }
  }
  const Job by_zero_key = decrypt(zero_identities_.set, file.out);
  EXPECT_EQ(by_zero_key.status, WC_ERR_NO_IDENTITY) << by_zero_key.message;
  EXPECT_TRUE(by_zero_key.out.empty());
}

std::string case_name(const ::testing::TestParamInfo<KeyCase> &info) { return info.param.name; }

std::vector<KeyCase> cases_with_files() {
  std::vector<KeyCase> cases;
  std::copy_if(std::begin(kCases), std::end(kCases), std::back_inserter(cases),
               [](const KeyCase &key) { return key.stanza != nullptr; });
  return cases;
}

INSTANTIATE_TEST_SUITE_P(EveryType, AgeKeyTypes, ::testing::ValuesIn(kCases), case_name);
INSTANTIATE_TEST_SUITE_P(EveryType, AgeKeyTypeFiles, ::testing::ValuesIn(cases_with_files()), case_name);

// ---- the table -------------------------------------------------------------------

// The types that are recipients only: age 1.3's tagged recipients, whose
// identities are hardware plugins' (tests/unit/age_tag_test.cpp).
constexpr std::string_view kRecipientOnlyTypes[] = {"p256tag", "mlkem768p256tag"};

// A type added to the table without a case above fails here, so every type
// goes through every call; a recipient-only type has no identity to make a
// case of, and no text that parses into one.
TEST(AgeKeyTable, EveryTypeHasItsEntryAndACase) {
  for (const age::KeyTypeEntry *entry : age::key_types()) {
    EXPECT_EQ(&age::key_type(entry->type), entry) << entry->name;
    const bool recipient_only = std::find(std::begin(kRecipientOnlyTypes), std::end(kRecipientOnlyTypes),
                                          entry->name) != std::end(kRecipientOnlyTypes);
    if (recipient_only) {
      EXPECT_TRUE(entry->identity_prefix.empty() && entry->parse_identity == nullptr) << entry->name;
      continue;
    }
    EXPECT_TRUE(std::any_of(std::begin(kCases), std::end(kCases),
                            [entry](const KeyCase &key) { return std::string_view(key.type) == entry->name; }))
        << entry->name << " has no case in kCases";
  }
}

// Each operation is a function or a sentence that refuses it by the type's
// name, never both, never neither.
TEST(AgeKeyTable, WhatATypeCannotDoItRefusesByName) {
  for (const age::KeyTypeEntry *entry : age::key_types()) {
    const std::pair<bool, const char *> operations[] = {
        {entry->format_identity != nullptr, entry->cannot_format_identity},
        {entry->recipient_of != nullptr, entry->cannot_derive_recipient},
        {entry->format_recipient != nullptr, entry->cannot_format_recipient},
    };
    for (const auto &[can, refusal] : operations) {
      EXPECT_NE(can, refusal != nullptr) << entry->name;
      if (refusal != nullptr) {
        EXPECT_NE(std::string(refusal).find(entry->name), std::string::npos) << refusal;
      }
    }
    EXPECT_NE(entry->wrap, nullptr) << entry->name;
    EXPECT_NE(entry->unwrap, nullptr) << entry->name;
    EXPECT_EQ(entry->recipient_prefix.empty(), entry->parse_recipient == nullptr) << entry->name;
    EXPECT_EQ(entry->identity_prefix.empty(), entry->parse_identity == nullptr) << entry->name;
  }
}

// The parse of a prefix two types share tells them apart, so it must be one
// function.
TEST(AgeKeyTable, TypesThatShareAPrefixShareItsParse) {
  for (const age::KeyTypeEntry *a : age::key_types()) {
    for (const age::KeyTypeEntry *b : age::key_types()) {
      if (!a->recipient_prefix.empty() && a->recipient_prefix == b->recipient_prefix) {
        EXPECT_EQ(a->parse_recipient, b->parse_recipient) << a->name << " " << b->name;
      }
      if (!a->identity_prefix.empty() && a->identity_prefix == b->identity_prefix) {
        EXPECT_EQ(a->parse_identity, b->parse_identity) << a->name << " " << b->name;
      }
    }
  }
}

// ---- the longest key line ------------------------------------------------------

// SSH's wire string: a big-endian 32-bit length, then the bytes.
Bytes wire_string(const Bytes &bytes) {
  Bytes out(4 + bytes.size());
  for (size_t i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(bytes.size() >> (24 - 8 * i));
  std::copy(bytes.begin(), bytes.end(), out.begin() + 4);
  return out;
}
Bytes wire_string(std::string_view text) { return wire_string(Bytes(text.begin(), text.end())); }

Bytes joined(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes &part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}


// An ssh-rsa key blob: exponent `e`, and a modulus of `modulus_bytes` bytes
// of 0x7f (no key, but a well-formed one; nothing here does arithmetic).
Bytes rsa_blob(const Bytes &e, size_t modulus_bytes) {
  return joined({wire_string("ssh-rsa"), wire_string(e), wire_string(Bytes(modulus_bytes, 0x7f))});
}

// An unencrypted OpenSSH key file around `public_blob`. Its private section
// is read only when a stanza names the key, so nothing here needs it whole.
std::string openssh_key_file(const Bytes &public_blob) {
  const std::string magic("openssh-key-v1\0", 15);
  const Bytes binary = joined({Bytes(magic.begin(), magic.end()), wire_string("none"), wire_string("none"),
                               wire_string(""), Bytes{0, 0, 0, 1}, wire_string(public_blob),
                               wire_string(Bytes(8, 0x42))});
  const std::string body = openssl_base64(binary);
  std::string text = "-----BEGIN OPENSSH PRIVATE KEY-----\n";
  for (size_t at = 0; at < body.size(); at += 70) text += body.substr(at, 70) + "\n";
  return text + "-----END OPENSSH PRIVATE KEY-----\n";
}

// The longest key a format call writes is an ssh-rsa line of 16384 bits,
// whose exponent age bounds at 24 bits: it fits WC_AGE_KEY_MAX_LEN.
TEST(AgeKeyLines, TheLongestSshRsaRecipientFitsAndReadsBack) {
  // A 24-bit exponent with its high bit set takes a zero byte in front.
  const Bytes blob = rsa_blob({0x00, 0x80, 0x00, 0x01}, 16384 / 8);
  IdentitySet identity;
  const char *detail = nullptr;
  ASSERT_EQ(wc_age_identities_add(identity.set, openssh_key_file(blob).c_str(), &detail), WC_OK) << detail;
  const Text recipient = call(wc_age_identity_recipient, identity.set, 0);
  ASSERT_EQ(recipient.status, WC_OK) << recipient.detail;
  EXPECT_EQ(recipient.text, "ssh-rsa " + openssl_base64(blob));
  EXPECT_GT(recipient.text.size(), 2048u);  // past the old WC_AGE_KEY_MAX_LEN
  RecipientSet recipients;
  EXPECT_EQ(wc_age_recipients_add(recipients.set, recipient.text.c_str(), &detail), WC_OK) << detail;
}

TEST(AgeKeyLines, RsaExponentsAgeRefusesAreRefused) {
  // Past 24 bits, even, and below 3: as Go's x/crypto/ssh refuses them.
  for (const Bytes &e : {Bytes{0x01, 0x00, 0x00, 0x01}, Bytes{0x01, 0x00, 0x00}, Bytes{0x01}, Bytes{0x02}}) {
    const Bytes blob = rsa_blob(e, 2048 / 8);
    RecipientSet recipients;
    const char *detail = nullptr;
    EXPECT_EQ(wc_age_recipients_add(recipients.set, ("ssh-rsa " + openssl_base64(blob)).c_str(), &detail), WC_ERR_FORMAT)
        << to_hex(e);
    EXPECT_NE(std::string(detail).find("public exponent"), std::string::npos) << detail;
    IdentitySet identity;
    EXPECT_EQ(wc_age_identities_add(identity.set, openssh_key_file(blob).c_str(), &detail), WC_ERR_FORMAT);
    EXPECT_EQ(wc_age_identities_count(identity.set), 0u);
  }
  for (const Bytes &e : {Bytes{0x03}, Bytes{0x01, 0x00, 0x01}, Bytes{0x00, 0xff, 0xff, 0xff}}) {
    RecipientSet recipients;
    EXPECT_EQ(wc_age_recipients_add(recipients.set, ("ssh-rsa " + openssl_base64(rsa_blob(e, 2048 / 8))).c_str(), nullptr),
              WC_OK)
        << to_hex(e);
  }
}

}  // namespace
}  // namespace wctest
