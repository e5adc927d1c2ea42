// Ed25519 through the C API against the 1,024 vectors of the ed25519
// reference's sign.input (cryptography_vectors/asymmetric/Ed25519), the set
// RFC 8032's first tests come from: each line is seed||public key, public
// key, message, signature||message, in hex, separated by colons.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/bytes.h"
#include "support/test_environment.h"
#include "warpcrypt/warpcrypt.h"

namespace {

using wctest::Bytes;

struct SignVector {
  Bytes seed, public_key, message, signature;
};

std::vector<SignVector> read_sign_input(const std::filesystem::path &path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::vector<SignVector> vectors;
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::stringstream split(line);
    for (std::string field; std::getline(split, field, ':');) fields.push_back(field);
    if (fields.size() < 4) throw std::runtime_error("malformed line in " + path.string() + ": " + line);
    const Bytes keypair = wctest::from_hex(fields[0]);
    const Bytes signed_message = wctest::from_hex(fields[3]);
    vectors.push_back({Bytes(keypair.begin(), keypair.begin() + 32), wctest::from_hex(fields[1]),
                       wctest::from_hex(fields[2]), Bytes(signed_message.begin(), signed_message.begin() + 64)});
  }
  return vectors;
}

class Ed25519Vectors : public ::testing::Test {
 protected:
  void SetUp() override { wctest::locate_vectors_dir(&dir_); }
  std::vector<SignVector> vectors() const { return read_sign_input(dir_ / "asymmetric/Ed25519/sign.input"); }

 private:
  std::filesystem::path dir_;
};

TEST_F(Ed25519Vectors, PublicKeySignatureAndVerification) {
  const std::vector<SignVector> all = vectors();
  ASSERT_EQ(all.size(), 1024u);
  for (const SignVector &v : all) {
    uint8_t public_key[32];
    ASSERT_EQ(wc_ed25519_public_key(public_key, v.seed.data()), WC_OK);
    EXPECT_EQ(Bytes(public_key, public_key + 32), v.public_key);
    uint8_t signature[64];
    ASSERT_EQ(wc_ed25519_sign(signature, v.message.data(), v.message.size(), v.seed.data()), WC_OK);
    EXPECT_EQ(Bytes(signature, signature + 64), v.signature) << "message of " << v.message.size() << " bytes";
    EXPECT_EQ(wc_ed25519_verify(v.signature.data(), v.message.data(), v.message.size(), v.public_key.data()), WC_OK);
  }
  wctest::report_vectors_run("Ed25519 sign.input", all.size());
}

// Any change to the signature, the message or the key is refused as
// WC_ERR_AUTH, never as success: one bit of each, at every position of the
// signature and key, on a sample of the vectors.
TEST_F(Ed25519Vectors, AnyFlippedBitIsRefused) {
  const std::vector<SignVector> all = vectors();
  for (size_t i = 0; i < all.size(); i += 97) {
    const SignVector &v = all[i];
    for (size_t byte = 0; byte < 64; ++byte) {
      Bytes signature = v.signature;
      signature[byte] ^= 1u << (byte % 8);
      EXPECT_EQ(wc_ed25519_verify(signature.data(), v.message.data(), v.message.size(), v.public_key.data()),
                WC_ERR_AUTH)
          << "vector " << i << ", signature byte " << byte;
    }
    for (size_t byte = 0; byte < 32; ++byte) {
      Bytes key = v.public_key;
      key[byte] ^= 0x80u >> (byte % 8);
      EXPECT_EQ(wc_ed25519_verify(v.signature.data(), v.message.data(), v.message.size(), key.data()), WC_ERR_AUTH)
          << "vector " << i << ", key byte " << byte;
    }
    Bytes message = v.message;
    message.push_back(0);
    EXPECT_EQ(wc_ed25519_verify(v.signature.data(), message.data(), message.size(), v.public_key.data()),
              WC_ERR_AUTH);
  }
}

TEST(Ed25519, NullArgumentsAreInvalid) {
  uint8_t seed[32] = {}, out[64] = {};
  EXPECT_EQ(wc_ed25519_public_key(nullptr, seed), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_ed25519_sign(out, nullptr, 1, seed), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_ed25519_verify(out, nullptr, 1, seed), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_ed25519_sign(out, nullptr, 0, seed), WC_OK);
}

}  // namespace
