// Known-answer tests from the `cryptography-vectors` package (never vendored):
// NIST CAVP KAT and MMT files for AES ECB, CBC, CFB128, CFB8 and OFB, RFC 3686
// for AES-CTR and RFC 7539 for ChaCha20. The CAVP files hold whole blocks, so
// they run with padding off. Every set runs on the CPU backend and, where a
// CUDA device is present, on the GPU's optimised and reference kernels for
// the modes and directions the GPU runs.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/bytes.h"
#include "support/cipher_table.h"
#include "support/gpu_modes.h"
#include "support/test_environment.h"
#include "support/warpcrypt_calls.h"
#include "vector_file.h"

namespace wctest {
namespace {

namespace fs = std::filesystem;

// Where a vector runs: the CPU, the GPU's optimised kernels, or its
// reference kernels (WARPCRYPT_GPU_KERNELS=reference while the test runs).
struct Rung {
  wc_backend backend;
  bool reference_kernels;
};
const Rung kRungs[] = {{WC_BACKEND_CPU, false}, {WC_BACKEND_GPU, false}, {WC_BACKEND_GPU, true}};

bool on_gpu(const Rung &rung) { return rung.backend != WC_BACKEND_CPU; }

// Whether a vector of this cipher and direction runs on this rung.
bool runs_on(const Rung &rung, const std::string &cipher, wc_direction direction) {
  return !on_gpu(rung) || gpu_runs(cipher, direction);
}

std::string backend_suffix(const Rung &rung) {
  return !on_gpu(rung) ? "" : rung.reference_kernels ? "_gpu_reference" : "_gpu";
}
std::string backend_label(const Rung &rung) {
  return !on_gpu(rung) ? "" : rung.reference_kernels ? " on the GPU's reference kernels" : " on gpu";
}

// Fixtures: the vectors directory, and the skip when a GPU backend has no
// device (checked first, so a machine without a GPU skips quietly).
template <class Param>
class VectorTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    if (on_gpu(rung())) WCTEST_REQUIRE_GPU();
    if (rung().reference_kernels) setenv("WARPCRYPT_GPU_KERNELS", "reference", 1);
    locate_vectors_dir(&vectors_dir_);
  }
  void TearDown() override { unsetenv("WARPCRYPT_GPU_KERNELS"); }
  const Rung &rung() const { return std::get<Rung>(this->GetParam()); }
  wc_options options() const { return make_options(0, rung().backend); }
  fs::path vectors_dir_;
};

// One CAVP response file, e.g. AES/CFB/CFB8MMT192.rsp -> aes-192-cfb8.
struct CavpSet {
  std::string folder;       // under ciphers/AES
  std::string file_prefix;  // ECB, CBC, CFB128, CFB8, OFB
  std::string mode;         // our cipher-name suffix
  std::string kind;         // GFSbox, KeySbox, VarKey, VarTxt, MMT
  int key_bits;

  std::string file_name() const {
    return file_prefix + kind + std::to_string(key_bits) + ".rsp";
  }
  std::string cipher_name() const { return "aes-" + std::to_string(key_bits) + "-" + mode; }
};

std::vector<CavpSet> all_cavp_sets() {
  struct Mode {
    const char *folder, *file_prefix, *mode;
  };
  // CFB1 (bit-wise CFB) is not a warpcrypt mode; its files are skipped.
  const Mode modes[] = {{"ECB", "ECB", "ecb"},
                        {"CBC", "CBC", "cbc"},
                        {"CFB", "CFB128", "cfb"},
                        {"CFB", "CFB8", "cfb8"},
                        {"OFB", "OFB", "ofb"}};
  std::vector<CavpSet> sets;
  for (const Mode &mode : modes) {
    for (const char *kind : {"GFSbox", "KeySbox", "VarKey", "VarTxt", "MMT"}) {
      for (int bits : {128, 192, 256}) {
        sets.push_back({mode.folder, mode.file_prefix, mode.mode, kind, bits});
      }
    }
  }
  return sets;
}

using CavpFileTest = VectorTest<std::tuple<CavpSet, Rung>>;

TEST_P(CavpFileTest, EncryptAndDecryptSectionsMatch) {
  const CavpSet &set = std::get<CavpSet>(GetParam());
  const fs::path path = vectors_dir_ / "ciphers" / "AES" / set.folder / set.file_name();
  ASSERT_TRUE(fs::exists(path)) << "missing vector file " << path;
  const auto records = read_vector_file(path);
  // NIST's vectors are whole blocks without padding.
  const wc_cipher *cipher = wc_cipher_unpadded(lookup(set.cipher_name()));
  ASSERT_NE(cipher, nullptr) << set.cipher_name();
  const wc_options on_backend = options();
  const bool encrypt_runs = runs_on(rung(), set.cipher_name(), WC_ENCRYPT);
  const bool decrypt_runs = runs_on(rung(), set.cipher_name(), WC_DECRYPT);

  size_t encrypt_vectors = 0;
  size_t decrypt_vectors = 0;
  for (const VectorRecord &record : records) {
    SCOPED_TRACE(set.file_name() + " line " + std::to_string(record.line));
    const Bytes key = record.hex("KEY");
    const Bytes iv = record.has("IV") ? record.hex("IV") : Bytes{};
    const Bytes plaintext = record.hex("PLAINTEXT");
    const Bytes ciphertext = record.hex("CIPHERTEXT");
    if (record.section == VectorSection::kEncrypt) {
      if (!encrypt_runs) continue;
      const LibResult got = lib_crypt(WC_ENCRYPT, cipher, key, iv, plaintext, on_backend);
      EXPECT_EQ(got.status, WC_OK);
      EXPECT_TRUE(same_bytes(ciphertext, got.out));
      ++encrypt_vectors;
    } else if (record.section == VectorSection::kDecrypt) {
      if (!decrypt_runs) continue;
      const LibResult got = lib_crypt(WC_DECRYPT, cipher, key, iv, ciphertext, on_backend);
      EXPECT_EQ(got.status, WC_OK);
      EXPECT_TRUE(same_bytes(plaintext, got.out));
      ++decrypt_vectors;
    } else {
      ADD_FAILURE() << "record outside [ENCRYPT]/[DECRYPT]";
    }
  }
  // Every CAVP AES file has both sections; an empty one means a parse error.
  EXPECT_EQ(encrypt_vectors > 0, encrypt_runs);
  EXPECT_EQ(decrypt_vectors > 0, decrypt_runs);
  report_vectors_run(set.cipher_name() + backend_label(rung()) + " " + set.file_name() + " (" +
                         std::to_string(encrypt_vectors) + " encrypt, " +
                         std::to_string(decrypt_vectors) + " decrypt)",
                     encrypt_vectors + decrypt_vectors);
}

// Each set on each backend that runs at least one of its directions.
std::vector<std::tuple<CavpSet, Rung>> cavp_runs() {
  std::vector<std::tuple<CavpSet, Rung>> runs;
  for (const Rung &rung : kRungs) {
    for (const CavpSet &set : all_cavp_sets()) {
      if (runs_on(rung, set.cipher_name(), WC_ENCRYPT) || runs_on(rung, set.cipher_name(), WC_DECRYPT)) {
        runs.emplace_back(set, rung);
      }
    }
  }
  return runs;
}

INSTANTIATE_TEST_SUITE_P(NistCavp, CavpFileTest, ::testing::ValuesIn(cavp_runs()),
                         [](const auto &param_info) {
                           const CavpSet &set = std::get<CavpSet>(param_info.param);
                           return set.file_prefix + "_" + set.kind + "_" + std::to_string(set.key_bits) +
                                  backend_suffix(std::get<Rung>(param_info.param));
                         });

// RFC 3686 gives encryptions only; CTR decryption is the same keystream XOR,
// so each vector is also run backwards.
// The RFC vectors give encryptions only; decryption of a keystream mode is the
// same XOR, so each vector is also run backwards.
void check_both_ways(const wc_cipher *cipher, const Bytes &key, const Bytes &iv, const Bytes &plaintext,
                     const Bytes &ciphertext, const wc_options &options) {
  const LibResult encrypted = lib_crypt(WC_ENCRYPT, cipher, key, iv, plaintext, options);
  EXPECT_EQ(encrypted.status, WC_OK);
  EXPECT_TRUE(same_bytes(ciphertext, encrypted.out));
  const LibResult decrypted = lib_crypt(WC_DECRYPT, cipher, key, iv, ciphertext, options);
  EXPECT_EQ(decrypted.status, WC_OK);
  EXPECT_TRUE(same_bytes(plaintext, decrypted.out));
}

using Rfc3686CtrTest = VectorTest<std::tuple<int, Rung>>;

TEST_P(Rfc3686CtrTest, VectorsEncryptAndDecrypt) {
  const std::string name = "aes-" + std::to_string(std::get<int>(GetParam())) + "-ctr";
  const fs::path path = vectors_dir_ / "ciphers" / "AES" / "CTR" / (name + ".txt");
  ASSERT_TRUE(fs::exists(path)) << "missing vector file " << path;
  const wc_cipher *cipher = lookup(name);
  ASSERT_NE(cipher, nullptr);
  const wc_options on_backend = options();

  size_t vectors = 0;
  for (const VectorRecord &record : read_vector_file(path)) {
    SCOPED_TRACE(name + ".txt line " + std::to_string(record.line));
    const Bytes key = record.hex("KEY");
    const Bytes iv = record.hex("IV");
    const Bytes plaintext = record.hex("PLAINTEXT");
    const Bytes ciphertext = record.hex("CIPHERTEXT");
    check_both_ways(cipher, key, iv, plaintext, ciphertext, on_backend);
    ++vectors;
  }
  EXPECT_GT(vectors, 0u);
  report_vectors_run(name + backend_label(rung()) + " RFC 3686", vectors);
}

INSTANTIATE_TEST_SUITE_P(Rfc3686, Rfc3686CtrTest,
                         ::testing::Combine(::testing::Values(128, 192, 256), ::testing::ValuesIn(kRungs)),
                         [](const auto &param_info) {
                           return "aes_" + std::to_string(std::get<int>(param_info.param)) + "_ctr" +
                                  backend_suffix(std::get<Rung>(param_info.param));
                         });

using Rfc7539ChaCha20Test = VectorTest<std::tuple<Rung>>;

// Our IV is OpenSSL's: the 32-bit initial block counter, little-endian,
// followed by the 96-bit nonce.
Bytes chacha20_iv(uint32_t initial_block_counter, const Bytes &nonce) {
  Bytes iv(4 + nonce.size());
  for (size_t i = 0; i < 4; ++i) iv[i] = static_cast<uint8_t>(initial_block_counter >> (8 * i));
  std::copy(nonce.begin(), nonce.end(), iv.begin() + 4);
  return iv;
}

TEST_P(Rfc7539ChaCha20Test, VectorsEncryptAndDecrypt) {
  const fs::path path = vectors_dir_ / "ciphers" / "ChaCha20" / "rfc7539.txt";
  ASSERT_TRUE(fs::exists(path)) << "missing vector file " << path;
  const wc_cipher *cipher = lookup("chacha20");
  ASSERT_NE(cipher, nullptr);
  const wc_options on_backend = options();

  size_t vectors = 0;
  for (const VectorRecord &record : read_vector_file(path)) {
    SCOPED_TRACE("rfc7539.txt line " + std::to_string(record.line));
    const Bytes key = record.hex("KEY");
    const auto counter =
        static_cast<uint32_t>(std::stoul(record.text("INITIAL_BLOCK_COUNTER")));
    const Bytes iv = chacha20_iv(counter, record.hex("NONCE"));
    const Bytes plaintext = record.hex("PLAINTEXT");
    const Bytes ciphertext = record.hex("CIPHERTEXT");
    check_both_ways(cipher, key, iv, plaintext, ciphertext, on_backend);
    ++vectors;
  }
  EXPECT_GT(vectors, 0u);
  report_vectors_run("chacha20" + backend_label(rung()) + " RFC 7539", vectors);
}

INSTANTIATE_TEST_SUITE_P(Rfc7539, Rfc7539ChaCha20Test, ::testing::Combine(::testing::ValuesIn(kRungs)),
                         [](const auto &param_info) {
                           return "chacha20" + backend_suffix(std::get<Rung>(param_info.param));
                         });

}  // namespace
}  // namespace wctest
