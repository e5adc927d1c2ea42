// ML-KEM-768 through the host-crypto provider against every record of NIST's
// kat_MLKEM_768.rsp (cryptography_vectors/asymmetric/MLKEM): KeyGen from
// d || z, Encaps with the record's m as the random source's bytes, Decaps of
// the good ciphertext and of the record's bad one (ct_n), whose secret is the
// implicit-rejection value ss_n. Also the Keccak underneath against OpenSSL's
// SHA-3 and SHAKE, and the key checks of FIPS 203 section 7.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <stdexcept>

#include "backends/cpu/keccak.h"
#include "core/host_crypto.h"
#include "support/bytes.h"
#include "support/fixed_random.h"
#include "support/test_environment.h"
#include "support/test_rng.h"
#include "vector_file.h"

namespace {

using warpcrypt::kHostCrypto;
using wctest::Bytes;

using wctest::FixedRandom;

using EncapsulationKey = std::array<uint8_t, warpcrypt::kMlkem768EncapsulationKeyLen>;
using DecapsulationKey = std::array<uint8_t, warpcrypt::kMlkem768DecapsulationKeyLen>;
using Ciphertext = std::array<uint8_t, warpcrypt::kMlkem768CiphertextLen>;
using SharedSecret = std::array<uint8_t, warpcrypt::kMlkemSharedSecretLen>;

template <size_t N>
std::array<uint8_t, N> fixed(const Bytes &bytes) {
  if (bytes.size() != N) throw std::runtime_error("vector field of the wrong length");
  std::array<uint8_t, N> out{};
  std::copy(bytes.begin(), bytes.end(), out.begin());
  return out;
}

template <size_t N>
Bytes to_bytes(const std::array<uint8_t, N> &a) {
  return Bytes(a.begin(), a.end());
}

class Mlkem768KnownAnswer : public ::testing::Test {
 protected:
  void SetUp() override { wctest::locate_vectors_dir(&dir_); }
  std::filesystem::path dir_;
};

TEST_F(Mlkem768KnownAnswer, EveryNistVector) {
  const auto records = wctest::read_vector_file(dir_ / "asymmetric/MLKEM/kat_MLKEM_768.rsp");
  ASSERT_EQ(records.size(), 1000u);
  for (const auto &record : records) {
    SCOPED_TRACE("line " + std::to_string(record.line));
    Bytes seed = record.hex("d");
    const Bytes z = record.hex("z");
    seed.insert(seed.end(), z.begin(), z.end());
    EncapsulationKey ek{};
    DecapsulationKey dk{};
    kHostCrypto.mlkem768_keygen(ek, dk, fixed<64>(seed));
    ASSERT_EQ(to_bytes(ek), record.hex("pk"));
    ASSERT_EQ(to_bytes(dk), record.hex("sk"));

    FixedRandom message(record.hex("msg"));
    Ciphertext ct{};
    SharedSecret ss{};
    ASSERT_EQ(kHostCrypto.mlkem768_encaps(ct, ss, ek, message), WC_OK);
    ASSERT_EQ(to_bytes(ct), record.hex("ct"));
    ASSERT_EQ(to_bytes(ss), record.hex("ss"));

    SharedSecret decapsulated{};
    ASSERT_EQ(kHostCrypto.mlkem768_decaps(decapsulated, dk, ct), WC_OK);
    ASSERT_EQ(to_bytes(decapsulated), record.hex("ss"));
    ASSERT_EQ(
        kHostCrypto.mlkem768_decaps(decapsulated, dk, fixed<warpcrypt::kMlkem768CiphertextLen>(record.hex("ct_n"))),
        WC_OK);
    ASSERT_EQ(to_bytes(decapsulated), record.hex("ss_n"));
  }
  wctest::report_vectors_run("ML-KEM-768 KAT", records.size());
}

struct KeyPair {
  EncapsulationKey ek{};
  DecapsulationKey dk{};
};

KeyPair random_key_pair(wctest::TestRng &rng) {
  KeyPair pair;
  kHostCrypto.mlkem768_keygen(pair.ek, pair.dk, fixed<64>(rng.bytes(64)));
  return pair;
}

// Section 7.2: an encapsulation key with a 12-bit value of q or more is
// refused, at the first and at the last coefficient.
TEST(Mlkem768, EncapsRefusesUnreducedKey) {
  auto rng = wctest::TestRng::for_current_test();
  const KeyPair pair = random_key_pair(rng);
  for (size_t byte : {size_t{0}, size_t{1149}}) {
    EncapsulationKey bad = pair.ek;
    // Coefficients 2i and 2i+1 share bytes 3i..3i+2; set one to 0xFFF.
    bad[byte] = 0xFF;
    bad[byte + 1] |= 0x0F;
    FixedRandom message(Bytes(32, 7));
    Ciphertext ct{};
    SharedSecret ss{};
    EXPECT_EQ(kHostCrypto.mlkem768_encaps(ct, ss, bad, message), WC_ERR_FORMAT) << byte;
  }
  // q itself is unreduced too; q - 1 is the largest valid value.
  for (uint16_t value : {uint16_t{3329}, uint16_t{3328}}) {
    EncapsulationKey edge = pair.ek;
    edge[0] = static_cast<uint8_t>(value);
    edge[1] = static_cast<uint8_t>((edge[1] & 0xF0) | (value >> 8));
    FixedRandom message(Bytes(32, 7));
    Ciphertext ct{};
    SharedSecret ss{};
    EXPECT_EQ(kHostCrypto.mlkem768_encaps(ct, ss, edge, message), value == 3329 ? WC_ERR_FORMAT : WC_OK);
  }
}

// Section 7.3: a decapsulation key whose H(ek) does not match is refused.
TEST(Mlkem768, DecapsRefusesKeyWithWrongHash) {
  auto rng = wctest::TestRng::for_current_test();
  KeyPair pair = random_key_pair(rng);
  FixedRandom message(rng.bytes(32));
  Ciphertext ct{};
  SharedSecret ss{};
  ASSERT_EQ(kHostCrypto.mlkem768_encaps(ct, ss, pair.ek, message), WC_OK);
  pair.dk[2 * 1152 + 32 + 5] ^= 1;  // inside H(ek)
  SharedSecret out{};
  EXPECT_EQ(kHostCrypto.mlkem768_decaps(out, pair.dk, ct), WC_ERR_FORMAT);
}

// Every single-bit flip of a ciphertext gives a secret other than the real
// one, and the same one each time (implicit rejection is deterministic).
TEST(Mlkem768, TamperedCiphertextsAreImplicitlyRejected) {
  auto rng = wctest::TestRng::for_current_test();
  const KeyPair pair = random_key_pair(rng);
  FixedRandom message(rng.bytes(32));
  Ciphertext ct{};
  SharedSecret ss{};
  ASSERT_EQ(kHostCrypto.mlkem768_encaps(ct, ss, pair.ek, message), WC_OK);
  for (size_t byte : {size_t{0}, size_t{959}, size_t{960}, size_t{1087}}) {
    Ciphertext tampered = ct;
    tampered[byte] ^= 0x01;
    SharedSecret first{}, second{};
    ASSERT_EQ(kHostCrypto.mlkem768_decaps(first, pair.dk, tampered), WC_OK);
    ASSERT_EQ(kHostCrypto.mlkem768_decaps(second, pair.dk, tampered), WC_OK);
    EXPECT_NE(first, ss) << byte;
    EXPECT_EQ(first, second) << byte;
  }
}

Bytes openssl_digest(const char *name, const Bytes &in, size_t out_len) {
  Bytes out(out_len);
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  const EVP_MD *md = EVP_get_digestbyname(name);
  bool ok = ctx != nullptr && md != nullptr && EVP_DigestInit_ex(ctx, md, nullptr) == 1 &&
            EVP_DigestUpdate(ctx, in.data(), in.size()) == 1;
  if (ok && (EVP_MD_flags(md) & EVP_MD_FLAG_XOF) != 0)
    ok = EVP_DigestFinalXOF(ctx, out.data(), out.size()) == 1;
  else if (ok)
    ok = EVP_DigestFinal_ex(ctx, out.data(), nullptr) == 1;
  EVP_MD_CTX_free(ctx);
  if (!ok) throw std::runtime_error(std::string("OpenSSL digest failed: ") + name);
  return out;
}

// Lengths around every rate boundary, absorbed in one piece or two, and
// SHAKE128 squeezed a block at a time as the matrix sampling does.
TEST(Keccak, MatchesOpenSsl) {
  auto rng = wctest::TestRng::for_current_test();
  for (size_t len : {0, 1, 71, 72, 73, 135, 136, 137, 167, 168, 169, 500, 1183, 1184}) {
    SCOPED_TRACE(len);
    const Bytes in = rng.bytes(len);
    std::array<uint8_t, 32> h256{};
    warpcrypt::cpu::sha3_256(h256, in);
    EXPECT_EQ(to_bytes(h256), openssl_digest("SHA3-256", in, 32));
    std::array<uint8_t, 64> h512{};
    warpcrypt::cpu::sha3_512(h512, in);
    EXPECT_EQ(to_bytes(h512), openssl_digest("SHA3-512", in, 64));
    Bytes shake(300);
    warpcrypt::cpu::shake256(shake, in);
    EXPECT_EQ(shake, openssl_digest("SHAKE256", in, 300));

    warpcrypt::cpu::KeccakSponge xof(warpcrypt::cpu::kShake128Rate, warpcrypt::cpu::kShakeDomain);
    const size_t split = len / 3;
    xof.absorb(std::span<const uint8_t>(in).first(split));
    xof.absorb(std::span<const uint8_t>(in).subspan(split));
    Bytes squeezed(3 * warpcrypt::cpu::kShake128Rate + 5);
    for (size_t at = 0; at < squeezed.size(); at += 100)
      xof.squeeze(std::span<uint8_t>(squeezed).subspan(at, std::min<size_t>(100, squeezed.size() - at)));
    EXPECT_EQ(squeezed, openssl_digest("SHAKE128", in, squeezed.size()));
  }
}

}  // namespace
