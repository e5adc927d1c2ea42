// age v1 files (C2SP age.md): every rule the specification gives readers,
// written from its text, each checked to be refused with a sentence that
// names it, through the public calls (wc_age_*); the pieces with no public
// face (canonical base64, Bech32, the header's encoding) directly. Files
// are crafted here with OpenSSL's ChaCha20-Poly1305 and HKDF, not the
// library's, so a payload rule is tested against an independent sealer.
// Interop with the real age and rage: tests/cli/test_age.py.
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "age/age_armor.h"
#include "age/age_format.h"
#include "age/age_keys.h"
#include "engine/aead_stream.h"
#include "engine/memory_file.h"
#include "support/scratch_files.h"
#include "support/bytes.h"
#include "support/test_rng.h"

namespace wctest {
namespace {

namespace age = warpcrypt::age;
using warpcrypt::kHostCrypto;

// A key pair made by age-keygen 1.1.1 (the reference implementation).
constexpr char kIdentity[] = "AGE-SECRET-KEY-1P68L85KF3PPWY32RLLA2PT7Y8DV39X58XKE6SK3GCMV56DGKRPKQWAV6W7";
constexpr char kRecipient[] = "age1mrnrvesf437ay37quur5yzwtnap6sr86atp9rstu4k5h97g3z5fqpsdrlz";
constexpr size_t kChunk = 64 * 1024;

struct Result {
  wc_status status = WC_OK;
  Bytes out;
  std::string message;
};

struct Keys {
  wc_age_recipients *recipients = nullptr;
  wc_age_identities *identities = nullptr;
  Keys() {
    EXPECT_EQ(wc_age_recipients_new(&recipients), WC_OK);
    EXPECT_EQ(wc_age_identities_new(&identities), WC_OK);
  }
  ~Keys() {
    wc_age_recipients_free(recipients);
    wc_age_identities_free(identities);
  }
};

Result encrypt(const wc_age_recipients *recipients, const Bytes &plain, bool armor = false) {
  Result result;
  size_t need = 0;
  wc_status status = wc_age_encrypt_buffer(nullptr, recipients, armor, nullptr, nullptr, 0, &need, plain.data(),
                                           plain.size());
  if (status != WC_ERR_OUTPUT_TOO_SMALL) {
    result.status = status;
    return result;
  }
  // A second run's random stanzas have the same length: X25519 and scrypt
  // stanzas are of fixed size.
  result.out.resize(need);
  wc_job job;
  wc_job_init(&job);
  result.status = wc_age_encrypt_buffer(nullptr, recipients, armor, &job, result.out.data(), result.out.size(), &need,
                                        plain.data(), plain.size());
  result.message = job.message;
  result.out.resize(need);
  return result;
}

Result decrypt(const wc_age_identities *identities, const Bytes &file, uint64_t offset = 0,
               uint64_t length = UINT64_MAX, const wc_options *options = nullptr) {
  Result result;
  result.out.resize(file.size() + 1);
  size_t len = 0;
  wc_job job;
  wc_job_init(&job);
  result.status = wc_age_decrypt_buffer(options, identities, offset, length, &job, result.out.data(),
                                        result.out.size(), &len, file.data(), file.size());
  result.message = job.message;
  result.out.resize(len);
  return result;
}

Bytes bytes_of(std::string_view text) { return Bytes(text.begin(), text.end()); }
std::string text_of(const Bytes &bytes) { return std::string(bytes.begin(), bytes.end()); }

class AgeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(wc_age_recipients_add(keys.recipients, kRecipient, nullptr), WC_OK);
    ASSERT_EQ(wc_age_identities_add(keys.identities, kIdentity, nullptr), WC_OK);
  }

  // Decrypting `file` fails with `status` and a message holding `words`.
  void expect_refused(const Bytes &file, wc_status status, const std::string &words) {
    const Result result = decrypt(keys.identities, file);
    EXPECT_EQ(result.status, status) << result.message;
    EXPECT_NE(result.message.find(words), std::string::npos) << result.message;
    EXPECT_TRUE(result.out.empty());
  }

  Keys keys;
};

// ---- a file crafted outside the library ------------------------------------

Bytes hkdf_sha256(const Bytes &ikm, const Bytes &salt, std::string_view info, size_t len) {
  Bytes out(len);
  EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nullptr);
  EXPECT_EQ(EVP_PKEY_derive_init(ctx), 1);
  EVP_PKEY_CTX_set_hkdf_md(ctx, EVP_sha256());
  static const uint8_t kNone = 0;
  EVP_PKEY_CTX_set1_hkdf_salt(ctx, salt.empty() ? &kNone : salt.data(), static_cast<int>(salt.size()));
  EVP_PKEY_CTX_set1_hkdf_key(ctx, ikm.data(), static_cast<int>(ikm.size()));
  EVP_PKEY_CTX_add1_hkdf_info(ctx, reinterpret_cast<const uint8_t *>(info.data()), static_cast<int>(info.size()));
  size_t out_len = len;
  EXPECT_EQ(EVP_PKEY_derive(ctx, out.data(), &out_len), 1);
  EVP_PKEY_CTX_free(ctx);
  return out;
}

// ChaCha20-Poly1305 through EVP: ciphertext || tag.
Bytes chacha_seal(const Bytes &key, const std::array<uint8_t, 12> &nonce, const Bytes &plain) {
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
  Bytes out(plain.size() + 16);
  int len = 0;
  EXPECT_EQ(EVP_EncryptInit_ex(ctx, EVP_chacha20_poly1305(), nullptr, key.data(), nonce.data()), 1);
  EXPECT_EQ(EVP_EncryptUpdate(ctx, out.data(), &len, plain.data(), static_cast<int>(plain.size())), 1);
  EXPECT_EQ(EVP_EncryptFinal_ex(ctx, out.data() + len, &len), 1);
  EXPECT_EQ(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, out.data() + plain.size()), 1);
  EVP_CIPHER_CTX_free(ctx);
  return out;
}

std::array<uint8_t, 12> stream_nonce(uint64_t counter, bool last) {
  std::array<uint8_t, 12> nonce{};
  for (int i = 0; i < 8; ++i) nonce[10 - i] = static_cast<uint8_t>(counter >> (8 * i));
  nonce[11] = last ? 1 : 0;
  return nonce;
}

struct Chunk {
  Bytes plain;
  uint64_t counter;
  bool last;
};

// A file for kRecipient: the library's header for a file key chosen here,
// then the payload sealed here, chunk by chunk as given.
Bytes craft(const std::vector<Chunk> &chunks, std::vector<age::Stanza> extra_stanzas = {}) {
  age::FileKey file_key;
  RAND_bytes(file_key.bytes.data(), static_cast<int>(file_key.bytes.size()));
  age::Recipient recipient;
  const char *detail = nullptr;
  EXPECT_EQ(age::parse_recipient(kRecipient, &recipient, &detail), WC_OK);
  std::vector<age::Stanza> stanzas(1);
  EXPECT_EQ(age::wrap(kHostCrypto, recipient, file_key, &stanzas[0], &detail), WC_OK);
  stanzas.insert(stanzas.end(), extra_stanzas.begin(), extra_stanzas.end());
  std::string header;
  EXPECT_EQ(age::encode_header(kHostCrypto, stanzas, file_key, &header, &detail), WC_OK);
  Bytes file = bytes_of(header);
  Bytes nonce(16);
  RAND_bytes(nonce.data(), 16);
  file.insert(file.end(), nonce.begin(), nonce.end());
  const Bytes key = hkdf_sha256(Bytes(file_key.bytes.begin(), file_key.bytes.end()), nonce, "payload", 32);
  for (const Chunk &chunk : chunks) {
    const Bytes sealed = chacha_seal(key, stream_nonce(chunk.counter, chunk.last), chunk.plain);
    file.insert(file.end(), sealed.begin(), sealed.end());
  }
  return file;
}

Bytes slice(const Bytes &bytes, size_t from, size_t len) {
  return Bytes(bytes.begin() + static_cast<std::ptrdiff_t>(from),
               bytes.begin() + static_cast<std::ptrdiff_t>(from + len));
}

// Replaces the first `from` in the file's text with `to`.
Bytes edit(const Bytes &file, const std::string &from, const std::string &to) {
  std::string text = text_of(file);
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  return bytes_of(text);
}

size_t header_len(const Bytes &file) {
  const std::string text = text_of(file);
  return text.find('\n', text.find("\n--- ") + 1) + 1;
}

// ---- pieces ----------------------------------------------------------------

TEST(AgeBase64, RoundTripsAndRefusesEveryOtherSpelling) {
  TestRng rng(17);
  for (size_t len = 0; len < 100; ++len) {
    const Bytes bytes = rng.bytes(len);
    const std::string text = age::encode_base64(bytes);
    EXPECT_EQ(text.find('='), std::string::npos);
    const auto back = age::decode_base64(text);
    ASSERT_TRUE(back.has_value());
    EXPECT_TRUE(same_bytes(bytes, *back));
  }
  EXPECT_FALSE(age::decode_base64("AA==").has_value());  // padding
  EXPECT_FALSE(age::decode_base64("AB").has_value());    // non-zero unused bits: "AA" is the one spelling
  EXPECT_FALSE(age::decode_base64("AAB").has_value());
  EXPECT_FALSE(age::decode_base64("A").has_value());     // 6 bits make no byte
  EXPECT_FALSE(age::decode_base64("AA\n").has_value());  // whitespace
  EXPECT_FALSE(age::decode_base64("A-_A").has_value());  // the URL alphabet
  EXPECT_TRUE(age::decode_base64("").has_value());
}

TEST(AgeBech32, ReadsAndWritesAgeKeygensKeys) {
  Keys keys;
  ASSERT_EQ(wc_age_identities_add(keys.identities, kIdentity, nullptr), WC_OK);
  char text[WC_AGE_KEY_MAX_LEN];
  ASSERT_EQ(wc_age_identity_format(keys.identities, 0, text, sizeof text, nullptr), WC_OK);
  EXPECT_STREQ(text, kIdentity);
  ASSERT_EQ(wc_age_identity_recipient(keys.identities, 0, text, sizeof text, nullptr), WC_OK);
  EXPECT_STREQ(text, kRecipient);  // X25519 and Bech32 agree with age-keygen -y
  EXPECT_EQ(wc_age_identity_recipient(keys.identities, 0, text, 10, nullptr), WC_ERR_OUTPUT_TOO_SMALL);
  EXPECT_EQ(wc_age_identity_format(keys.identities, 1, text, sizeof text, nullptr), WC_ERR_INVALID_ARGUMENT);
}

TEST(AgeBech32, RefusesMixedCaseBadChecksumsAndWrongParts) {
  std::string mixed = kRecipient;
  mixed[5] = static_cast<char>(std::toupper(mixed[5]));
  std::string checksum = kRecipient;
  checksum.back() = checksum.back() == 'q' ? 'p' : 'q';
  std::string upper = kRecipient;
  for (char &c : upper) c = static_cast<char>(std::toupper(c));
  Keys keys;
  const char *detail = nullptr;
  for (const std::string &bad : {mixed, checksum, std::string(kRecipient).substr(0, 40), std::string("age1"),
                                 std::string(kIdentity)}) {
    EXPECT_EQ(wc_age_recipients_add(keys.recipients, bad.c_str(), &detail), WC_ERR_FORMAT) << bad;
    EXPECT_NE(std::string(detail).find("not an age recipient"), std::string::npos);
  }
  // Upper case is valid Bech32, but the recipient's part is "age".
  EXPECT_EQ(wc_age_recipients_add(keys.recipients, upper.c_str(), &detail), WC_ERR_FORMAT);
  EXPECT_EQ(wc_age_identities_add(keys.identities, kRecipient, &detail), WC_ERR_FORMAT);
  EXPECT_EQ(wc_age_recipients_count(keys.recipients), 0u);
  EXPECT_EQ(wc_age_identities_count(keys.identities), 0u);
}

// Keys of the kinds age defines run; SSH keys of kinds age does not use, and
// PEM private keys, are refused by name, never skipped.
TEST(AgeKeys, RefusesKeysAgeDoesNotUseByName) {
  Keys keys;
  const char *detail = nullptr;
  const std::pair<const char *, const char *> recipients[] = {
      {"ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBEmKSENjQEezOmxkZMy7opKgwFB9nkt5YRrYMjNu"
       "G5N87uRgg6CLrbo5wAdT/y6v0mKV0U2w0WZ2YB/++Tpockg=",
       "ECDSA"},
      {"sk-ssh-ed25519@openssh.com AAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29tAAAAIHpq5GvsHBU6pNrCAM7FSlpQVw3xJntJbOhHZWy5tu"
       "TfAAAAGnNzaDp0aGUtYXBwbGljYXRpb24tc3RyaW5n",
       "security-key"}};
  for (const auto &[text, named] : recipients) {
    EXPECT_EQ(wc_age_recipients_add(keys.recipients, text, &detail), WC_ERR_UNSUPPORTED) << text;
    EXPECT_NE(std::string(detail).find(named), std::string::npos) << detail;
  }
  EXPECT_EQ(wc_age_identities_add(keys.identities,
                                  "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----\n", &detail),
            WC_ERR_UNSUPPORTED);
  EXPECT_EQ(wc_age_recipients_count(keys.recipients), 0u);
  EXPECT_EQ(wc_age_identities_count(keys.identities), 0u);
}

TEST(AgeKeys, ReadsKeyFilesWithCommentsAndAddsNothingOnFailure) {
  Keys keys;
  const std::string file = std::string("# created: 2026-11-25T14:42:11Z\n# public key: ") + kRecipient + "\n\n" +
                           kIdentity + "\n";
  ASSERT_EQ(wc_age_identities_add(keys.identities, file.c_str(), nullptr), WC_OK);
  EXPECT_EQ(wc_age_identities_count(keys.identities), 1u);
  const std::string two = std::string(kRecipient) + "\n# another\n" + kRecipient + "\r\n";
  ASSERT_EQ(wc_age_recipients_add(keys.recipients, two.c_str(), nullptr), WC_OK);
  EXPECT_EQ(wc_age_recipients_count(keys.recipients), 2u);
  const std::string half_bad = std::string(kRecipient) + "\nage1nope\n";
  EXPECT_EQ(wc_age_recipients_add(keys.recipients, half_bad.c_str(), nullptr), WC_ERR_FORMAT);
  EXPECT_EQ(wc_age_recipients_count(keys.recipients), 2u);
  EXPECT_EQ(wc_age_recipients_add(keys.recipients, "# only a comment\n", nullptr), WC_ERR_FORMAT);
}

// ---- round trips ------------------------------------------------------------

TEST_F(AgeTest, RoundTripsEverySizeAtTheChunkEdges) {
  TestRng rng(1);
  for (size_t len : {size_t{0}, size_t{1}, kChunk - 1, kChunk, kChunk + 1, 2 * kChunk, 3 * kChunk + 7}) {
    const Bytes plain = rng.bytes(len);
    for (bool armor : {false, true}) {
      const Result file = encrypt(keys.recipients, plain, armor);
      ASSERT_EQ(file.status, WC_OK) << file.message;
      if (!armor) {
        // Header, nonce, then one tag per chunk; an empty payload is one
        // empty chunk, and a full last chunk gets no empty one after it.
        const size_t chunks = len == 0 ? 1 : (len + kChunk - 1) / kChunk;
        EXPECT_EQ(file.out.size(), header_len(file.out) + 16 + len + 16 * chunks) << len;
      } else {
        EXPECT_EQ(text_of(file.out).rfind(std::string(age::kArmorBegin) + "\n", 0), 0u);
      }
      const Result back = decrypt(keys.identities, file.out);
      ASSERT_EQ(back.status, WC_OK) << back.message;
      EXPECT_TRUE(same_bytes(plain, back.out)) << len << (armor ? " armored" : "");
    }
  }
}

// wc_age_encrypted_capacity is room enough, before the call, for a file to
// recipients of every native type at once, so a buffer call runs once; the
// payload is counted exactly, the header at most a stanza's room apiece.
TEST_F(AgeTest, TheCapacityHoldsEveryNativeTypesFileAndCountsThePayloadExactly) {
  Keys pq;
  ASSERT_EQ(wc_age_identities_generate_pq(pq.identities), WC_OK);
  char hybrid[WC_AGE_KEY_MAX_LEN];
  ASSERT_EQ(wc_age_identity_recipient(pq.identities, 0, hybrid, sizeof hybrid, nullptr), WC_OK);
  // The largest stanzas: a hybrid key's and a post-quantum tag's, this one
  // of the hybrid key's ML-KEM-768 key and P-256's generator.
  const std::optional<age::Bech32> decoded = age::decode_bech32(hybrid);
  ASSERT_TRUE(decoded.has_value());
  Bytes tagpq_key(decoded->data.begin(), decoded->data.begin() + 1184);
  const uint8_t generator[65] = {
      0x04, 0x6b, 0x17, 0xd1, 0xf2, 0xe1, 0x2c, 0x42, 0x47, 0xf8, 0xbc, 0xe6, 0xe5, 0x63, 0xa4, 0x40, 0xf2,
      0x77, 0x03, 0x7d, 0x81, 0x2d, 0xeb, 0x33, 0xa0, 0xf4, 0xa1, 0x39, 0x45, 0xd8, 0x98, 0xc2, 0x96, 0x4f,
      0xe3, 0x42, 0xe2, 0xfe, 0x1a, 0x7f, 0x9b, 0x8e, 0xe7, 0xeb, 0x4a, 0x7c, 0x0f, 0x9e, 0x16, 0x2b, 0xce,
      0x33, 0x57, 0x6b, 0x31, 0x5e, 0xce, 0xcb, 0xb6, 0x40, 0x68, 0x37, 0xbf, 0x51, 0xf5};
  tagpq_key.insert(tagpq_key.end(), std::begin(generator), std::end(generator));
  Keys post_quantum;
  ASSERT_EQ(wc_age_recipients_add(post_quantum.recipients, hybrid, nullptr), WC_OK);
  const std::string tagpq = age::encode_bech32("age1tagpq", tagpq_key);
  ASSERT_EQ(wc_age_recipients_add(post_quantum.recipients, tagpq.c_str(), nullptr), WC_OK);
  for (const wc_age_recipients *recipients : {static_cast<const wc_age_recipients *>(keys.recipients),
                                              static_cast<const wc_age_recipients *>(post_quantum.recipients)}) {
    const size_t count = wc_age_recipients_count(recipients);
    for (size_t len : {size_t{0}, size_t{1}, kChunk, kChunk + 1, 3 * kChunk + 7}) {
      const Bytes plain = TestRng(len).bytes(len);
      for (bool armor : {false, true}) {
        const size_t capacity = wc_age_encrypted_capacity(recipients, len, armor);
        Bytes out(capacity);
        size_t out_len = 0;
        ASSERT_EQ(wc_age_encrypt_buffer(nullptr, recipients, armor, nullptr, out.data(), out.size(), &out_len,
                                        plain.data(), plain.size()),
                  WC_OK)
            << count << " recipients, " << len << " bytes";
        out.resize(out_len);
        if (!armor) {
          const size_t chunks = len == 0 ? 1 : (len + kChunk - 1) / kChunk;
          EXPECT_EQ(out_len - header_len(out), 16 + len + 16 * chunks);
          EXPECT_LE(capacity - out_len, count * WC_AGE_STANZA_ROOM) << "only the stanzas are estimated";
        }
      }
    }
  }
  EXPECT_EQ(wc_age_encrypted_capacity(keys.recipients, SIZE_MAX, 1), SIZE_MAX);
}

TEST_F(AgeTest, SeveralRecipientsEachOpenTheFile) {
  Keys other;
  ASSERT_EQ(wc_age_identities_generate(other.identities), WC_OK);
  char recipient[WC_AGE_KEY_MAX_LEN];
  ASSERT_EQ(wc_age_identity_recipient(other.identities, 0, recipient, sizeof recipient, nullptr), WC_OK);
  ASSERT_EQ(wc_age_recipients_add(keys.recipients, recipient, nullptr), WC_OK);
  const Bytes plain = TestRng(2).bytes(100000);
  const Result file = encrypt(keys.recipients, plain);
  ASSERT_EQ(file.status, WC_OK);
  EXPECT_TRUE(same_bytes(plain, decrypt(keys.identities, file.out).out));
  EXPECT_TRUE(same_bytes(plain, decrypt(other.identities, file.out).out));
  Keys stranger;
  ASSERT_EQ(wc_age_identities_generate(stranger.identities), WC_OK);
  const Result refused = decrypt(stranger.identities, file.out);
  EXPECT_EQ(refused.status, WC_ERR_NO_IDENTITY);
  EXPECT_NE(refused.message.find("no identity matched"), std::string::npos) << refused.message;
}

TEST_F(AgeTest, RangesAuthenticateOnlyTheirChunksAndMatchTheSlice) {
  const Bytes plain = TestRng(3).bytes(5 * kChunk + 300);
  const Result file = encrypt(keys.recipients, plain);
  ASSERT_EQ(file.status, WC_OK);
  for (auto [offset, length] : {std::pair<uint64_t, uint64_t>{0, 10}, {kChunk - 5, 10}, {3 * kChunk, kChunk},
                                {5 * kChunk + 299, 100}, {10 * kChunk, 5}, {7, 0}}) {
    const Result part = decrypt(keys.identities, file.out, offset, length);
    ASSERT_EQ(part.status, WC_OK) << part.message;
    const size_t from = std::min<size_t>(offset, plain.size());
    EXPECT_TRUE(same_bytes(slice(plain, from, std::min<size_t>(length, plain.size() - from)), part.out));
  }
  // A damaged chunk outside the range is not read; inside it, it fails.
  Bytes damaged = file.out;
  damaged[header_len(damaged) + 16 + 4 * (kChunk + 16) + 5] ^= 1;
  EXPECT_EQ(decrypt(keys.identities, damaged, 0, kChunk).status, WC_OK);
  EXPECT_EQ(decrypt(keys.identities, damaged, 4 * kChunk, 1).status, WC_ERR_AUTH);
}

TEST(AgePassphrase, RoundTripsAndBoundsTheWorkFactor) {
  Keys keys;
  const Bytes pass = bytes_of("correct horse battery staple");
  ASSERT_EQ(wc_age_recipients_add_passphrase(keys.recipients, pass.data(), pass.size(), 10), WC_OK);
  const Bytes plain = TestRng(4).bytes(1000);
  const Result file = encrypt(keys.recipients, plain);
  ASSERT_EQ(file.status, WC_OK) << file.message;
  EXPECT_NE(text_of(file.out).find("\n-> scrypt "), std::string::npos);
  EXPECT_NE(text_of(file.out).find(" 10\n"), std::string::npos);
  ASSERT_EQ(wc_age_identities_add_passphrase(keys.identities, pass.data(), pass.size(), 10), WC_OK);
  EXPECT_TRUE(same_bytes(plain, decrypt(keys.identities, file.out).out));

  Keys strict;
  ASSERT_EQ(wc_age_identities_add_passphrase(strict.identities, pass.data(), pass.size(), 9), WC_OK);
  const Result over = decrypt(strict.identities, file.out);
  EXPECT_EQ(over.status, WC_ERR_FORMAT);
  EXPECT_NE(over.message.find("work factor is above"), std::string::npos) << over.message;

  Keys wrong;
  const Bytes other = bytes_of("wrong");
  ASSERT_EQ(wc_age_identities_add_passphrase(wrong.identities, other.data(), other.size(), 22), WC_OK);
  const Result refused = decrypt(wrong.identities, file.out);
  EXPECT_EQ(refused.status, WC_ERR_NO_IDENTITY);
  EXPECT_NE(refused.message.find("incorrect passphrase"), std::string::npos);

  // A passphrase must be alone, and never empty.
  ASSERT_EQ(wc_age_recipients_add(keys.recipients, kRecipient, nullptr), WC_OK);
  const Result mixed = encrypt(keys.recipients, plain);
  EXPECT_EQ(mixed.status, WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_age_recipients_add_passphrase(keys.recipients, pass.data(), 0, 10), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_age_recipients_add_passphrase(keys.recipients, pass.data(), 1, 31), WC_ERR_INVALID_ARGUMENT);
}

// ---- header rules ------------------------------------------------------------

TEST_F(AgeTest, RefusesEveryBrokenHeaderRuleByName) {
  const Result made = encrypt(keys.recipients, bytes_of("hello"));
  ASSERT_EQ(made.status, WC_OK);
  const Bytes &file = made.out;
  const std::string text = text_of(file);
  const size_t stanza_end = text.find('\n', text.find("-> X25519 ")) + 1;
  const std::string stanza_line = text.substr(text.find("-> X25519 "), stanza_end - text.find("-> X25519 ") - 1);

  expect_refused(edit(file, "age-encryption.org/v1\n", "age-encryption.org/v2\n"), WC_ERR_FORMAT,
                 "unsupported age version");
  expect_refused(bytes_of("hello world\n"), WC_ERR_FORMAT, "not an age file");
  expect_refused(bytes_of(""), WC_ERR_FORMAT, "not an age file");
  expect_refused(slice(file, 0, 30), WC_ERR_FORMAT, "truncated age header");
  expect_refused(edit(file, "-> X25519 ", "->X25519 "), WC_ERR_FORMAT, "must start \"-> \"");
  expect_refused(edit(file, "-> X25519 ", "->  X25519 "), WC_ERR_FORMAT, "every argument");
  expect_refused(edit(file, "-> X25519 ", "-> X25519  "), WC_ERR_FORMAT, "every argument");
  expect_refused(edit(file, stanza_line, stanza_line + " "), WC_ERR_FORMAT, "every argument");
  expect_refused(edit(file, stanza_line, "-> "), WC_ERR_FORMAT, "every argument");
  expect_refused(edit(file, stanza_line, "-> X25519 caf\xc3\xa9"), WC_ERR_FORMAT, "every argument");
  // The MAC line.
  const size_t mac_at = text.find("\n--- ") + 5;
  const std::string mac = text.substr(mac_at, 43);
  expect_refused(edit(file, "--- " + mac, "---  " + mac), WC_ERR_FORMAT, "closing line");
  expect_refused(edit(file, "--- " + mac, "--- " + mac + " x"), WC_ERR_FORMAT, "closing line");
  expect_refused(edit(file, "--- " + mac, "--- " + mac + "="), WC_ERR_FORMAT, "MAC is not 32 bytes");
  expect_refused(edit(file, "--- " + mac, "--- " + mac.substr(0, 42)), WC_ERR_FORMAT, "MAC is not 32 bytes");
  // The last MAC character's two unused bits, set: the same bytes, spelled otherwise.
  const char last = mac.back();
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const char sloppy = alphabet[alphabet.find(last) | 1];
  expect_refused(edit(file, "--- " + mac, "--- " + mac.substr(0, 42) + sloppy), WC_ERR_FORMAT, "canonical");
  // A MAC that does not match: one bit of it, or of the header it covers.
  std::string flipped = mac;
  flipped[0] = flipped[0] == 'A' ? 'B' : 'A';
  expect_refused(edit(file, "--- " + mac, "--- " + flipped), WC_ERR_AUTH, "MAC does not match");
  expect_refused(edit(file, "-> X25519 ", "-> extra arg\n\n-> X25519 "), WC_ERR_AUTH, "MAC does not match");
  expect_refused(edit(file, "\n--- ", "\n-> x\n--- "), WC_ERR_FORMAT, "does not end with a line shorter");
  expect_refused(edit(file, "\n--- ", "\nnot a stanza\n--- "), WC_ERR_FORMAT, "neither a stanza nor the MAC");
  // Windows line ends are not the header's.
  expect_refused(edit(file, "age-encryption.org/v1\n", "age-encryption.org/v1\r\n"), WC_ERR_FORMAT,
                 "not age-encryption.org/v1");
}

// Whatever the writer writes, the reader reads (a review found headers of
// 12,001 recipients written and then refused): random stanza lists round
// trip, and at the limit the writer refuses exactly what the reader would.
TEST(AgeHeader, EveryHeaderTheWriterAcceptsReadsBack) {
  wctest::TestRng rng = wctest::TestRng::for_current_test();
  age::FileKey file_key;
  const char *detail = nullptr;
  auto round_trip = [&](const std::vector<age::Stanza> &stanzas) {
    std::string header;
    const wc_status written = age::encode_header(kHostCrypto, stanzas, file_key, &header, &detail);
    if (written != WC_OK) return written;
    age::Header parsed;
    bool need_more = false;
    EXPECT_EQ(age::parse_header(header, &parsed, &need_more, &detail), WC_OK) << detail;
    EXPECT_EQ(parsed.encoded_len, header.size());
    EXPECT_EQ(age::check_mac(kHostCrypto, parsed, file_key, &detail), WC_OK);
    EXPECT_EQ(parsed.stanzas.size(), stanzas.size());
    for (size_t i = 0; i < std::min(parsed.stanzas.size(), stanzas.size()); ++i) {
      EXPECT_EQ(parsed.stanzas[i].type, stanzas[i].type);
      EXPECT_EQ(parsed.stanzas[i].args, stanzas[i].args);
      EXPECT_EQ(parsed.stanzas[i].body, stanzas[i].body);
    }
    return WC_OK;
  };
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<age::Stanza> stanzas(rng.uniform(1, 200));
    for (age::Stanza &stanza : stanzas) {
      stanza.type = "t" + std::to_string(rng.uniform(0, 999));
      for (size_t arg = rng.uniform(0, 3); arg > 0; --arg) stanza.args.push_back(std::string(rng.uniform(1, 60), 'a'));
      stanza.body.assign(rng.uniform(0, 300), static_cast<uint8_t>(rng.uniform(0, 255)));
    }
    ASSERT_EQ(round_trip(stanzas), WC_OK) << "trial " << trial;
  }
  // X25519-shaped stanzas (98 bytes each) up to the limit and one past it.
  age::Stanza x25519;
  x25519.type = "X25519";
  x25519.args = {std::string(43, 'A')};
  x25519.body.assign(32, 1);
  std::string one;
  ASSERT_EQ(age::encode_header(kHostCrypto, {x25519}, file_key, &one, &detail), WC_OK);
  std::string two;
  ASSERT_EQ(age::encode_header(kHostCrypto, {x25519, x25519}, file_key, &two, &detail), WC_OK);
  const size_t per_stanza = two.size() - one.size();
  const size_t most = (age::kMaxHeaderLen - (one.size() - per_stanza)) / per_stanza;
  EXPECT_GT(most, 150000u) << "the limit should hold far more recipients than age users write";
  EXPECT_EQ(round_trip(std::vector<age::Stanza>(most, x25519)), WC_OK);
  EXPECT_EQ(round_trip(std::vector<age::Stanza>(most + 1, x25519)), WC_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(detail, age::kTooManyRecipients);
}

TEST(AgeHeader, StanzaBodiesEndWithAShortLine) {
  // A 48-byte body fills its one line: an empty line must follow.
  age::FileKey file_key;
  std::vector<age::Stanza> stanzas(1);
  stanzas[0].type = "test";
  stanzas[0].body.assign(48, 7);
  std::string header;
  const char *detail = nullptr;
  ASSERT_EQ(age::encode_header(kHostCrypto, stanzas, file_key, &header, &detail), WC_OK);
  const size_t body = header.find('\n', header.find("-> test")) + 1;
  EXPECT_EQ(header.substr(body + 64, 2), "\n\n");
  age::Header parsed;
  bool need_more = false;
  ASSERT_EQ(age::parse_header(header, &parsed, &need_more, &detail), WC_OK);
  EXPECT_EQ(parsed.stanzas[0].body.size(), 48u);
  EXPECT_EQ(age::check_mac(kHostCrypto, parsed, file_key, &detail), WC_OK);

  std::string missing_short = header;
  missing_short.erase(body + 64, 1);
  EXPECT_EQ(age::parse_header(missing_short, &parsed, &need_more, &detail), WC_ERR_FORMAT);
  EXPECT_NE(std::string(detail).find("does not end with a line shorter"), std::string::npos) << detail;

  std::string long_line = header;
  long_line.insert(body + 10, "AAAA");
  EXPECT_EQ(age::parse_header(long_line, &parsed, &need_more, &detail), WC_ERR_FORMAT);
  EXPECT_NE(std::string(detail).find("longer than 64 columns"), std::string::npos) << detail;

  // A body line with padding, or a short line's unused bits set.
  stanzas[0].body.assign(10, 0);
  ASSERT_EQ(age::encode_header(kHostCrypto, stanzas, file_key, &header, &detail), WC_OK);
  const std::string line = "AAAAAAAAAAAAAA";
  ASSERT_NE(header.find("\n" + line + "\n"), std::string::npos);
  for (const std::string &bad : {line + "==", line.substr(0, 13) + "B"}) {
    std::string edited = header;
    edited.replace(edited.find("\n" + line + "\n") + 1, line.size(), bad);
    EXPECT_EQ(age::parse_header(edited, &parsed, &need_more, &detail), WC_ERR_FORMAT) << bad;
    EXPECT_NE(std::string(detail).find("canonical unpadded base64"), std::string::npos) << detail;
  }
  // Cut anywhere, the header asks for more; a longer cut is still a header.
  for (size_t cut = 0; cut < header.size(); ++cut) {
    EXPECT_EQ(age::parse_header(header.substr(0, cut), &parsed, &need_more, &detail), WC_ERR_FORMAT);
    EXPECT_TRUE(need_more) << cut;
  }
}

TEST_F(AgeTest, RefusesMalformedX25519Stanzas) {
  const Result made = encrypt(keys.recipients, bytes_of("x"));
  ASSERT_EQ(made.status, WC_OK);
  const std::string text = text_of(made.out);
  const size_t at = text.find("-> X25519 ") + 10;
  const std::string share = text.substr(at, 43);
  expect_refused(edit(made.out, share, share + " more"), WC_ERR_FORMAT, "exactly one argument");
  expect_refused(edit(made.out, share, share.substr(0, 40)), WC_ERR_FORMAT, "ephemeral share is not 32 bytes");
  // The all-zero point gives an all-zero shared secret, which must be refused.
  expect_refused(edit(made.out, share, std::string(43, 'A')), WC_ERR_FORMAT, "low-order point");
  const size_t body_at = text.find('\n', at) + 1;
  const std::string body = text.substr(body_at, 43);
  expect_refused(edit(made.out, "\n" + body + "\n", "\n" + body.substr(0, 40) + "AA\n"), WC_ERR_FORMAT,
                 "body is not 32 bytes");
}

TEST_F(AgeTest, AnScryptStanzaMustBeAlone) {
  age::Stanza scrypt;
  scrypt.type = "scrypt";
  scrypt.args = {age::encode_base64(Bytes(16, 1)), "10"};
  scrypt.body.assign(32, 0);
  const Bytes file = craft({{bytes_of("x"), 0, true}}, {scrypt});
  expect_refused(file, WC_ERR_FORMAT, "scrypt stanza must hold no other stanza");
  Keys passphrase;
  const Bytes pass = bytes_of("p");
  ASSERT_EQ(wc_age_identities_add_passphrase(passphrase.identities, pass.data(), 1, 22), WC_OK);
  EXPECT_EQ(decrypt(passphrase.identities, file).status, WC_ERR_FORMAT);
}

TEST(AgeScrypt, RefusesMalformedWorkFactorsBeforeRunningScrypt) {
  for (const char *factor : {"018", "0", "-1", "1e1", "100", "23"}) {
    age::Stanza scrypt;
    scrypt.type = "scrypt";
    scrypt.args = {age::encode_base64(Bytes(16, 1)), factor};
    scrypt.body.assign(32, 0);
    age::FileKey file_key;
    std::string header;
    const char *detail = nullptr;
    ASSERT_EQ(age::encode_header(kHostCrypto, {scrypt}, file_key, &header, &detail), WC_OK);
    header.append(16 + 16, '\0');
    Keys keys;
    const Bytes pass = bytes_of("p");
    ASSERT_EQ(wc_age_identities_add_passphrase(keys.identities, pass.data(), 1, 22), WC_OK);
    const Result result = decrypt(keys.identities, bytes_of(header));
    EXPECT_EQ(result.status, WC_ERR_FORMAT) << factor;
    EXPECT_NE(result.message.find("work factor"), std::string::npos) << result.message;
  }
}

TEST_F(AgeTest, UnknownStanzaTypesAreSkippedAndNamedWhenNothingElseMatches) {
  age::Stanza plugin;
  plugin.type = "age-plugin-yubikey-v1";
  plugin.args = {"Xyz", "abc"};
  plugin.body.assign(32, 9);
  // Beside one of ours, an unknown stanza is passed over.
  const Bytes file = craft({{bytes_of("data"), 0, true}}, {plugin});
  const Result opened = decrypt(keys.identities, file);
  ASSERT_EQ(opened.status, WC_OK) << opened.message;
  EXPECT_EQ(text_of(opened.out), "data");
  Keys stranger;
  ASSERT_EQ(wc_age_identities_generate(stranger.identities), WC_OK);
  const Result refused = decrypt(stranger.identities, file);
  EXPECT_EQ(refused.status, WC_ERR_NO_IDENTITY);
  EXPECT_NE(refused.message.find("plugin"), std::string::npos) << refused.message;
}

// ---- payload rules -------------------------------------------------------------

TEST_F(AgeTest, AcceptsAnIndependentlySealedPayload) {
  const Bytes a = TestRng(5).bytes(kChunk);
  const Bytes b = TestRng(6).bytes(9);
  const Result opened = decrypt(keys.identities, craft({{a, 0, false}, {b, 1, true}}));
  ASSERT_EQ(opened.status, WC_OK) << opened.message;
  Bytes both = a;
  both.insert(both.end(), b.begin(), b.end());
  EXPECT_TRUE(same_bytes(both, opened.out));
  const Result empty = decrypt(keys.identities, craft({{{}, 0, true}}));
  ASSERT_EQ(empty.status, WC_OK) << empty.message;
  EXPECT_TRUE(empty.out.empty());
}

TEST_F(AgeTest, RefusesEveryBrokenPayloadRule) {
  const Bytes full = TestRng(7).bytes(kChunk);
  const Bytes part = TestRng(8).bytes(100);
  // The final chunk is empty only when the whole payload is.
  expect_refused(craft({{full, 0, false}, {{}, 1, true}}), WC_ERR_FORMAT, "empty final chunk");
  // A missing last chunk: the file ends with a chunk not flagged last.
  expect_refused(craft({{full, 0, false}}), WC_ERR_AUTH, "chunk 0");
  expect_refused(craft({{full, 0, false}, {full, 1, false}}), WC_ERR_AUTH, "chunk 1");
  // A counter gap, and chunks swapped.
  expect_refused(craft({{full, 0, false}, {part, 2, true}}), WC_ERR_AUTH, "chunk 1");
  expect_refused(craft({{full, 1, false}, {part, 0, true}}), WC_ERR_AUTH, "chunk 0");
  // A last flag before the end.
  expect_refused(craft({{full, 0, true}, {part, 1, true}}), WC_ERR_AUTH, "chunk 0");
  // A trailing byte, and the file cut inside the last tag.
  Bytes file = craft({{part, 0, true}});
  Bytes longer = file;
  longer.push_back(0);
  expect_refused(longer, WC_ERR_AUTH, "chunk 0");
  expect_refused(slice(file, 0, file.size() - 1), WC_ERR_AUTH, "chunk 0");
  const size_t body = header_len(file) + 16;
  expect_refused(slice(file, 0, body + 15), WC_ERR_FORMAT, "no chunk");
  expect_refused(slice(file, 0, body), WC_ERR_FORMAT, "no chunk");
  expect_refused(slice(file, 0, body - 1), WC_ERR_FORMAT, "no payload nonce");
  Bytes two = craft({{full, 0, false}, {part, 1, true}});
  expect_refused(slice(two, 0, body + kChunk + 16 + 10), WC_ERR_FORMAT, "shorter than its tag");
  // A flipped ciphertext bit.
  two[body + 3] ^= 0x80;
  expect_refused(two, WC_ERR_AUTH, "chunk 0");
}

// ---- armor --------------------------------------------------------------------

TEST_F(AgeTest, ArmorFollowsTheStrictPemRules) {
  const Bytes plain = TestRng(9).bytes(1000);
  const Result made = encrypt(keys.recipients, plain, true);
  ASSERT_EQ(made.status, WC_OK);
  const std::string text = text_of(made.out);
  // 64-column lines, the last shorter, padded.
  std::vector<std::string> lines;
  for (size_t at = 0; at < text.size();) {
    const size_t end = text.find('\n', at);
    lines.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  ASSERT_GE(lines.size(), 4u);
  EXPECT_EQ(lines.front(), age::kArmorBegin);
  EXPECT_EQ(lines.back(), age::kArmorEnd);
  for (size_t i = 1; i + 2 < lines.size(); ++i) EXPECT_EQ(lines[i].size(), 64u);
  const std::string last = lines[lines.size() - 2];
  EXPECT_LE(last.size(), 64u);

  auto opens = [&](const std::string &armored) {
    const Result result = decrypt(keys.identities, bytes_of(armored));
    return result.status == WC_OK && result.out == plain;
  };
  auto refused = [&](const std::string &armored, const std::string &words) {
    const Result result = decrypt(keys.identities, bytes_of(armored));
    EXPECT_EQ(result.status, WC_ERR_FORMAT) << words;
    EXPECT_NE(result.message.find(words), std::string::npos) << result.message;
  };
  EXPECT_TRUE(opens(text));
  EXPECT_TRUE(opens(" \n\t\r\n" + text + "\n \n"));  // whitespace around
  std::string crlf;
  for (char c : text) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  EXPECT_TRUE(opens(crlf));
  EXPECT_TRUE(opens(text.substr(0, text.size() - 1)));  // no newline after the end line

  const size_t first_data = text.find('\n') + 1;
  std::string split = text;
  split.insert(first_data + 32, "\n");  // a short line before the last
  refused(split, "short or padded line before the last");
  std::string wide = text;
  wide.erase(first_data + 64, 1);  // two lines joined: 128 columns
  refused(wide, "longer than 64 columns");
  refused(text + "x", "data after the end line");
  refused(text.substr(0, text.find(age::kArmorEnd)), "no -----END");
  std::string begin_space = text;
  begin_space.insert(age::kArmorBegin.size(), " ");
  refused(begin_space, "first line");
  std::string empty_line = text;
  empty_line.insert(first_data, "\n");
  refused(empty_line, "empty line");
  // The last line's padding: removed, or its unused bits set.
  const std::string padded = last;
  if (padded.back() == '=') {
    std::string unpadded = text;
    unpadded.replace(unpadded.find(padded), padded.size(), padded.substr(0, padded.find('=')));
    refused(unpadded, "base64");
  }
  refused(std::string(age::kArmorBegin) + "\n" + std::string(age::kArmorEnd) + "\n", "no data");
}

TEST(AgeArmor, EncoderAndDecoderAgreeInAnyPieces) {
  TestRng rng(10);
  for (size_t len : {1, 47, 48, 49, 95, 96, 97, 1000}) {
    const Bytes bytes = rng.bytes(len);
    age::ArmorEncoder encoder;
    std::string text;
    for (size_t at = 0; at < len; at += 7) encoder.feed(slice(bytes, at, std::min<size_t>(7, len - at)), &text);
    encoder.finish(&text);
    age::ArmorDecoder decoder;
    Bytes back;
    const char *detail = nullptr;
    for (size_t at = 0; at < text.size(); at += 5) {
      ASSERT_EQ(decoder.feed(std::string_view(text).substr(at, 5), &back, &detail), WC_OK) << detail;
    }
    ASSERT_EQ(decoder.finish(&detail), WC_OK) << detail;
    EXPECT_TRUE(same_bytes(bytes, back)) << len;
  }
}

// ---- backends -------------------------------------------------------------------

TEST_F(AgeTest, EveryThreadCountAndWindowGivesTheSamePlaintext) {
  const Bytes plain = TestRng(11).bytes(9 * kChunk + 5);
  const Result file = encrypt(keys.recipients, plain);
  ASSERT_EQ(file.status, WC_OK);
  for (unsigned threads : {1u, 2u, 3u}) {
    for (size_t window : {size_t{0}, kChunk, 3 * kChunk}) {
      wc_options options;
      wc_options_init(&options);
      options.backend = WC_BACKEND_CPU;
      options.threads = threads;
      options.chunk_bytes = window;
      const Result opened = decrypt(keys.identities, file.out, 0, UINT64_MAX, &options);
      ASSERT_EQ(opened.status, WC_OK) << opened.message;
      EXPECT_TRUE(same_bytes(plain, opened.out));
    }
  }
}

void write_all(int fd, const Bytes &bytes) {
  ASSERT_EQ(pwrite(fd, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
}

Bytes read_all(int fd) {
  return read_file("/proc/self/fd/" + std::to_string(fd));
}

int device_count() {
  int count = 0;
  return wc_device_count(&count) == WC_OK ? count : 0;
}

// The payload under a fixed key, sealed by `backend`'s lanes.
Bytes seal_payload(wc_backend backend, const Bytes &key, const Bytes &plain, wc_status *status) {
  using namespace warpcrypt::engine;
  MemoryFile in_file;
  MemoryFile out_file;
  write_all(in_file.fd(), plain);
  Endpoint in;
  Endpoint out;
  EXPECT_EQ(open_input_endpoint(&in, in_file.fd()), WC_OK);
  EXPECT_EQ(open_endpoint(&out, out_file.fd()), WC_OK);
  wc_options options;
  wc_options_init(&options);
  options.backend = backend;
  JobMonitor monitor(nullptr, 0);
  JobTotals totals;
  std::optional<Placement> plan;
  *status = plan_stream_job(&plan, options, monitor);
  if (*status == WC_OK) *status = seal_stream(*plan, age::payload_shape(0), key, out, in, monitor, &totals);
  return read_all(out_file.fd());
}

TEST(AgePayload, EveryBackendSealsTheSameBytes) {
  const Bytes key = TestRng(12).bytes(32);
  const Bytes plain = TestRng(13).bytes(40 * kChunk + 3);
  wc_status status = WC_OK;
  const Bytes cpu = seal_payload(WC_BACKEND_CPU, key, plain, &status);
  ASSERT_EQ(status, WC_OK);
  EXPECT_EQ(cpu.size(), plain.size() + 41 * 16);
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU tests skipped (the CPU payload was checked)";
  for (wc_backend backend : {WC_BACKEND_GPU, WC_BACKEND_HYBRID}) {
    const Bytes other = seal_payload(backend, key, plain, &status);
    ASSERT_EQ(status, WC_OK) << wc_backend_name(backend);
    EXPECT_TRUE(same_bytes(cpu, other)) << wc_backend_name(backend);
  }
}

TEST_F(AgeTest, EveryBackendOpensTheFileOrSaysThereIsNoDevice) {
  const Bytes plain = TestRng(14).bytes(20 * kChunk + 1);
  const Result file = encrypt(keys.recipients, plain);
  ASSERT_EQ(file.status, WC_OK);
  for (wc_backend backend : {WC_BACKEND_GPU, WC_BACKEND_HYBRID}) {
    wc_options options;
    wc_options_init(&options);
    options.backend = backend;
    const Result opened = decrypt(keys.identities, file.out, 0, UINT64_MAX, &options);
    if (device_count() == 0) {
      // Never a silent fallback (hybrid included), and never an empty success.
      EXPECT_EQ(opened.status, WC_ERR_NO_DEVICE) << opened.message;
      EXPECT_TRUE(opened.out.empty());
      continue;
    }
    ASSERT_EQ(opened.status, WC_OK) << wc_backend_name(backend) << ": " << opened.message;
    EXPECT_TRUE(same_bytes(plain, opened.out)) << wc_backend_name(backend);
  }
}

}  // namespace
// ---- inspecting (wc_age_inspect_fd) -----------------------------------------

// What a payload of each length holds, by the STREAM's rule (age's
// internal/inspect tests the same lengths): the nonce, then full chunks of
// 64 KiB and a tag, then a last one of 1 byte to 64 KiB (0 only alone).
TEST(AgePayload, SizeFollowsFromTheLengthOrIsRefused) {
  struct Case {
    uint64_t len;
    bool valid;
    uint64_t chunks;
    uint64_t plaintext;
  };
  const Case cases[] = {
      {0, false, 0, 0},
      {15, false, 0, 0},
      {16, false, 0, 0},
      {16 + 15, false, 0, 0},
      {16 + 16, true, 1, 0},
      {16 + 1 + 16, true, 1, 1},
      {16 + kChunk + 16, true, 1, kChunk},
      {16 + kChunk + 16 + 1, false, 0, 0},
      {16 + kChunk + 16 + 15, false, 0, 0},
      {16 + kChunk + 16 + 16, false, 0, 0},
      {16 + kChunk + 16 + 1 + 16, true, 2, kChunk + 1},
      {16 + 3 * (kChunk + 16), true, 3, 3 * kChunk},
  };
  for (const Case &c : cases) {
    age::PayloadSize size;
    const char *detail = nullptr;
    const wc_status status = age::payload_size(c.len, &size, &detail);
    EXPECT_EQ(status == WC_OK, c.valid) << c.len;
    if (!c.valid) {
      EXPECT_EQ(status, WC_ERR_FORMAT);
      EXPECT_NE(detail, nullptr);
      continue;
    }
    EXPECT_EQ(size.chunks, c.chunks) << c.len;
    EXPECT_EQ(size.plaintext, c.plaintext) << c.len;
    EXPECT_EQ(size.overhead + size.plaintext, c.len);
  }
}

struct Inspected {
  wc_status status = WC_OK;
  wc_age_info info{};
  std::string message;
  std::vector<std::string> types;
};

// wc_age_inspect_fd on `file` in a memory file (a regular file), or through
// a pipe when `pipe_it` (the file must fit the pipe's buffer).
Inspected inspect(const Bytes &file, bool pipe_it = false) {
  Inspected result;
  wc_job job;
  wc_job_init(&job);
  if (pipe_it) {
    int ends[2];
    EXPECT_EQ(pipe(ends), 0);
    EXPECT_EQ(write(ends[1], file.data(), file.size()), static_cast<ssize_t>(file.size()));
    close(ends[1]);
    result.status = wc_age_inspect_fd(ends[0], &result.info, &job);
    close(ends[0]);
  } else {
    warpcrypt::engine::MemoryFile memory;
    EXPECT_EQ(write(memory.fd(), file.data(), file.size()), static_cast<ssize_t>(file.size()));
    EXPECT_EQ(lseek(memory.fd(), 0, SEEK_SET), 0);
    result.status = wc_age_inspect_fd(memory.fd(), &result.info, &job);
  }
  result.message = job.message;
  for (size_t i = 0; i < result.info.stanza_count; ++i) result.types.emplace_back(result.info.stanza_types[i]);
  wc_age_info_release(&result.info);
  return result;
}

TEST_F(AgeTest, InspectListsEveryStanzaFromFilesAndPipes) {
  ASSERT_EQ(wc_age_recipients_add(keys.recipients, kRecipient, nullptr), WC_OK);
  for (const size_t size : {size_t{0}, size_t{1}, kChunk, kChunk + 1, 3 * kChunk}) {
    for (const bool armor : {false, true}) {
      const Result made = encrypt(keys.recipients, TestRng(size).bytes(size), armor);
      ASSERT_EQ(made.status, WC_OK);
      for (const bool pipe_it : {false, true}) {
        if (pipe_it && made.out.size() > 60000) continue;
        SCOPED_TRACE(std::to_string(size) + (armor ? " armored" : " binary") + (pipe_it ? " pipe" : " file"));
        // Two stanzas, in order, whether the file is read at offsets or in
        // order; inspect() has released the info, which zeroes it.
        const Inspected got = inspect(made.out, pipe_it);
        ASSERT_EQ(got.status, WC_OK) << got.message;
        EXPECT_EQ(got.types, (std::vector<std::string>{"X25519", "X25519"}));
        EXPECT_EQ(got.info.stanza_types, nullptr);
        EXPECT_EQ(got.info.stanza_count, 0u);
      }
    }
  }
}

TEST_F(AgeTest, InspectSizesAddUpToTheFile) {
  for (const size_t size : {size_t{0}, size_t{5}, kChunk - 1, kChunk, 2 * kChunk + 7}) {
    for (const bool armor : {false, true}) {
      const Result made = encrypt(keys.recipients, TestRng(size + 1).bytes(size), armor);
      ASSERT_EQ(made.status, WC_OK);
      warpcrypt::engine::MemoryFile memory;
      ASSERT_EQ(write(memory.fd(), made.out.data(), made.out.size()), static_cast<ssize_t>(made.out.size()));
      ASSERT_EQ(lseek(memory.fd(), 0, SEEK_SET), 0);
      wc_job job;
      wc_job_init(&job);
      wc_age_info info{};
      ASSERT_EQ(wc_age_inspect_fd(memory.fd(), &info, &job), WC_OK) << job.message;
      EXPECT_EQ(lseek(memory.fd(), 0, SEEK_CUR), 0);  // a regular file's offset stays
      EXPECT_EQ(info.armored, armor ? 1 : 0);
      EXPECT_EQ(info.postquantum, WC_AGE_PQ_NO);
      ASSERT_EQ(info.stanza_count, 1u);
      EXPECT_STREQ(info.stanza_types[0], "X25519");
      EXPECT_EQ(info.payload_bytes, size);
      const uint64_t chunks = size == 0 ? 1 : (size + kChunk - 1) / kChunk;
      EXPECT_EQ(info.chunk_count, chunks);
      EXPECT_EQ(info.overhead_bytes, 16 + 16 * chunks);
      EXPECT_EQ(info.file_bytes, made.out.size());
      EXPECT_EQ(job.bytes_in, made.out.size());
      EXPECT_EQ(info.header_bytes + info.armor_bytes + info.overhead_bytes + info.payload_bytes, info.file_bytes);
      if (!armor) {
        EXPECT_EQ(info.header_bytes, header_len(made.out));
        EXPECT_EQ(info.armor_bytes, 0u);
      } else {
        EXPECT_GT(info.armor_bytes, info.file_bytes / 4);  // base64 and its lines
      }
      wc_age_info_release(&info);
      EXPECT_EQ(info.stanza_count, 0u);
      EXPECT_EQ(info.stanza_types, nullptr);
    }
  }
}

TEST(AgeInspect, PassphraseFilesArePostQuantumAndUnknownTypesUnknown) {
  wc_age_recipients *recipients = nullptr;
  ASSERT_EQ(wc_age_recipients_new(&recipients), WC_OK);
  const std::string passphrase = "inspect me";
  ASSERT_EQ(wc_age_recipients_add_passphrase(recipients, reinterpret_cast<const uint8_t *>(passphrase.data()),
                                             passphrase.size(), 2),
            WC_OK);
  const Result made = encrypt(recipients, bytes_of("hello"));
  wc_age_recipients_free(recipients);
  ASSERT_EQ(made.status, WC_OK);
  const Inspected scrypt = inspect(made.out);
  ASSERT_EQ(scrypt.status, WC_OK) << scrypt.message;
  EXPECT_EQ(scrypt.types, std::vector<std::string>{"scrypt"});
  // The info is released by inspect(); check the verdict on a fresh run.
  warpcrypt::engine::MemoryFile memory;
  ASSERT_EQ(write(memory.fd(), made.out.data(), made.out.size()), static_cast<ssize_t>(made.out.size()));
  ASSERT_EQ(lseek(memory.fd(), 0, SEEK_SET), 0);
  wc_age_info info{};
  ASSERT_EQ(wc_age_inspect_fd(memory.fd(), &info, nullptr), WC_OK);
  EXPECT_EQ(info.postquantum, WC_AGE_PQ_YES);
  wc_age_info_release(&info);
  // A type nobody classifies: neither.
  const Bytes unknown = edit(made.out, "-> scrypt ", "-> some-plugin ");
  warpcrypt::engine::MemoryFile other;
  ASSERT_EQ(write(other.fd(), unknown.data(), unknown.size()), static_cast<ssize_t>(unknown.size()));
  ASSERT_EQ(lseek(other.fd(), 0, SEEK_SET), 0);
  ASSERT_EQ(wc_age_inspect_fd(other.fd(), &info, nullptr), WC_OK);
  EXPECT_EQ(info.postquantum, WC_AGE_PQ_UNKNOWN);
  EXPECT_STREQ(info.stanza_types[0], "some-plugin");
  wc_age_info_release(&info);
}

TEST_F(AgeTest, InspectRefusesBrokenFilesByName) {
  const Result made = encrypt(keys.recipients, TestRng(11).bytes(100));
  ASSERT_EQ(made.status, WC_OK);
  const size_t header = header_len(made.out);
  struct Case {
    Bytes file;
    const char *words;
  };
  const Case cases[] = {
      {{}, "the input is empty"},
      {bytes_of("hello\n"), "not an age file"},
      {edit(made.out, "/v1\n", "/v9\n"), "unsupported age version"},
      {slice(made.out, 0, header - 1), "truncated age header"},
      {slice(made.out, 0, header + 15), "no payload nonce"},
      {slice(made.out, 0, header + 16 + 15), "no chunk"},
      {bytes_of("-----BEGIN AGE ENCRYPTED FILE-----\nnot base64!\n-----END AGE ENCRYPTED FILE-----\n"),
       "malformed age armor"},
  };
  for (const Case &c : cases) {
    for (const bool pipe_it : {false, true}) {
      const Inspected got = inspect(c.file, pipe_it);
      EXPECT_EQ(got.status, WC_ERR_FORMAT) << c.words;
      EXPECT_NE(got.message.find(c.words), std::string::npos) << got.message;
      EXPECT_TRUE(got.types.empty());
    }
  }
}

TEST(AgeInspect, RefusesBadArgumentsAndReleasesNothingTwice) {
  wc_age_info info{};
  EXPECT_EQ(wc_age_inspect_fd(0, nullptr, nullptr), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_age_inspect_fd(-1, &info, nullptr), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(info.stanza_types, nullptr);
  wc_age_info_release(nullptr);
  wc_age_info_release(&info);
  wc_age_info_release(&info);
  // A directory cannot be read: WC_ERR_IO on the input side.
  const int dir = open("/", O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dir, 0);
  wc_job job;
  wc_job_init(&job);
  EXPECT_EQ(wc_age_inspect_fd(dir, &info, &job), WC_ERR_IO);
  EXPECT_EQ(job.io_side, WC_IO_INPUT);
  close(dir);
}

}  // namespace wctest
