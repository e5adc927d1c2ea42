// Known-answer tests for the AEADs: the NIST CAVP GCM files from the
// `cryptography-vectors` package (gcmEncryptExtIV*.rsp: every IV length from
// 8 to 1024 bits, every tag length from 32 to 128 bits; gcmDecrypt*.rsp,
// whose FAIL records must be rejected), and the ChaCha20-Poly1305 vectors of
// RFC 8439 (aead_rfc8439_vectors.txt, transcribed from the RFC). Each set
// runs on the CPU backend and, where a CUDA device is present, on the GPU.
#include <filesystem>
#include <string>
#include <tuple>

#include <gtest/gtest.h>

#include "aead_support.h"
#include "support/gpu_modes.h"
#include "support/test_environment.h"
#include "support/warpcrypt_calls.h"
#include "vector_file.h"

namespace wctest {
namespace {

namespace fs = std::filesystem;

std::string backend_suffix(wc_backend backend) { return backend == WC_BACKEND_CPU ? "_cpu" : "_gpu"; }

class AeadVectorTest : public ::testing::TestWithParam<std::tuple<int, wc_backend>> {
 protected:
  void SetUp() override {
    if (backend() != WC_BACKEND_CPU) WCTEST_REQUIRE_GPU();
    locate_vectors_dir(&vectors_dir_);
  }
  int key_bits() const { return std::get<int>(GetParam()); }
  wc_backend backend() const { return std::get<wc_backend>(GetParam()); }
  wc_options options() const { return make_options(0, backend()); }
  std::string aead_name() const { return "aes-" + std::to_string(key_bits()) + "-gcm"; }
  std::string label() const { return aead_name() + " on " + wc_backend_name(backend()); }
  fs::path vectors_dir_;
};

using GcmEncryptVectors = AeadVectorTest;

// Sealing gives the listed ciphertext and tag, and opening them gives the
// plaintext back.
TEST_P(GcmEncryptVectors, SealAndOpen) {
  const std::string file = "gcmEncryptExtIV" + std::to_string(key_bits()) + ".rsp";
  const fs::path path = vectors_dir_ / "ciphers" / "AES" / "GCM" / file;
  ASSERT_TRUE(fs::exists(path)) << "missing vector file " << path;
  size_t count = 0;
  for (const VectorRecord &record : read_vector_file(path)) {
    SCOPED_TRACE(file + " line " + std::to_string(record.line));
    AeadInput input{record.hex("Key"), record.hex("IV"), record.hex("AAD"), record.hex("PT")};
    const Bytes tag = record.hex("Tag");
    input.tag_len = tag.size();
    const AeadSealed sealed = lib_aead_seal(aead_name(), input, options());
    ASSERT_EQ(sealed.status, WC_OK);
    EXPECT_TRUE(same_bytes(record.hex("CT"), sealed.ciphertext));
    EXPECT_TRUE(same_bytes(tag, sealed.tag));
    const AeadOpened opened = lib_aead_open(aead_name(), input, sealed.ciphertext, sealed.tag, options());
    EXPECT_EQ(opened.status, WC_OK);
    EXPECT_TRUE(same_bytes(input.plaintext, opened.out));
    ++count;
  }
  EXPECT_EQ(count, 7875u);
  report_vectors_run(label() + " " + file, count);
}

using GcmDecryptVectors = AeadVectorTest;

// Records marked FAIL carry a tag that does not match: opening must return
// WC_ERR_AUTH and leave only zeros behind. The others open to the plaintext.
TEST_P(GcmDecryptVectors, OpenAcceptsValidAndRejectsFail) {
  const std::string file = "gcmDecrypt" + std::to_string(key_bits()) + ".rsp";
  const fs::path path = vectors_dir_ / "ciphers" / "AES" / "GCM" / file;
  ASSERT_TRUE(fs::exists(path)) << "missing vector file " << path;
  size_t accepted = 0;
  size_t rejected = 0;
  for (const VectorRecord &record : read_vector_file(path)) {
    SCOPED_TRACE(file + " line " + std::to_string(record.line));
    const AeadInput input{record.hex("Key"), record.hex("IV"), record.hex("AAD"), {}};
    const Bytes ciphertext = record.hex("CT");
    const AeadOpened opened = lib_aead_open(aead_name(), input, ciphertext, record.hex("Tag"), options());
    if (record.has("FAIL")) {
      EXPECT_EQ(opened.status, WC_ERR_AUTH);
      EXPECT_TRUE(all_zero(opened.out.data(), opened.out.size()));
      ++rejected;
    } else {
      EXPECT_EQ(opened.status, WC_OK);
      EXPECT_TRUE(same_bytes(record.hex("PT"), opened.out));
      ++accepted;
    }
  }
  EXPECT_GT(accepted, 0u);
  EXPECT_GT(rejected, 0u);
  report_vectors_run(label() + " " + file + " (" + std::to_string(accepted) + " accepted, " +
                         std::to_string(rejected) + " FAIL rejected)",
                     accepted + rejected);
}

const wc_backend kBackends[] = {WC_BACKEND_CPU, WC_BACKEND_GPU};

std::string gcm_case_name(const ::testing::TestParamInfo<std::tuple<int, wc_backend>> &param_info) {
  return "aes_" + std::to_string(std::get<int>(param_info.param)) + "_gcm" +
         backend_suffix(std::get<wc_backend>(param_info.param));
}

INSTANTIATE_TEST_SUITE_P(NistCavp, GcmEncryptVectors,
                         ::testing::Combine(::testing::Values(128, 192, 256), ::testing::ValuesIn(kBackends)),
                         gcm_case_name);
INSTANTIATE_TEST_SUITE_P(NistCavp, GcmDecryptVectors,
                         ::testing::Combine(::testing::Values(128, 192, 256), ::testing::ValuesIn(kBackends)),
                         gcm_case_name);

class Rfc8439Vectors : public ::testing::TestWithParam<wc_backend> {
 protected:
  void SetUp() override {
    if (GetParam() != WC_BACKEND_CPU) WCTEST_REQUIRE_GPU();
  }
};

// Both directions, and a tag with any bit flipped is refused.
TEST_P(Rfc8439Vectors, SealOpenAndRejectTamperedTags) {
  const wc_options options = make_options(0, GetParam());
  size_t count = 0;
  for (const VectorRecord &record : read_vector_file(WARPCRYPT_RFC8439_VECTORS)) {
    SCOPED_TRACE("aead_rfc8439_vectors.txt line " + std::to_string(record.line));
    const AeadInput input{record.hex("KEY"), record.hex("NONCE"), record.hex("AAD"), record.hex("PLAINTEXT")};
    const Bytes ciphertext = record.hex("CIPHERTEXT");
    const Bytes tag = record.hex("TAG");
    const AeadSealed sealed = lib_aead_seal("chacha20-poly1305", input, options);
    ASSERT_EQ(sealed.status, WC_OK);
    EXPECT_TRUE(same_bytes(ciphertext, sealed.ciphertext));
    EXPECT_TRUE(same_bytes(tag, sealed.tag));
    const AeadOpened opened = lib_aead_open("chacha20-poly1305", input, ciphertext, tag, options);
    EXPECT_EQ(opened.status, WC_OK);
    EXPECT_TRUE(same_bytes(input.plaintext, opened.out));
    for (size_t bit = 0; bit < 8 * tag.size(); bit += 13) {
      const AeadOpened forged =
          lib_aead_open("chacha20-poly1305", input, ciphertext, with_bit_flipped(tag, bit), options);
      EXPECT_EQ(forged.status, WC_ERR_AUTH) << "tag bit " << bit;
      EXPECT_TRUE(all_zero(forged.out.data(), forged.out.size()));
    }
    ++count;
  }
  EXPECT_EQ(count, 2u);
  report_vectors_run(std::string("chacha20-poly1305 on ") + wc_backend_name(GetParam()) + " RFC 8439", count);
}

INSTANTIATE_TEST_SUITE_P(Rfc8439, Rfc8439Vectors, ::testing::ValuesIn(kBackends),
                         [](const auto &param_info) { return "chacha20_poly1305" + backend_suffix(param_info.param); });

}  // namespace
}  // namespace wctest
