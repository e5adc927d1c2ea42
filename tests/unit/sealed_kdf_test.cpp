// Passphrase KDFs of sealed files (docs/format.md, "Key"): Argon2id, the
// default, with its costs in the header, and PBKDF2, which files of the
// format's first release use. The header is authenticated only once the KDF
// has run, so every hostile value of the KDF's fields must be refused first,
// and the costs a reader accepts are bounded by its own limits.
//
// Costs stay tiny here (one pass over 64 KiB): what the tests check is the
// header and the refusals, not Argon2id's speed.
#include <fcntl.h>
#include <sodium.h>
#include <unistd.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "aead_support.h"
#include "support/bytes.h"
#include "support/scratch_files.h"
#include "support/test_rng.h"

namespace wctest {
namespace {

constexpr size_t kHeader = WC_SEAL_HEADER_LEN;
constexpr uint64_t kChunk = 4096;
constexpr uint32_t kOps = 1;
constexpr uint64_t kMemory = 64 << 10;
const Bytes kPassphrase = {'c', 'o', 'r', 'r', 'e', 'c', 't', ' ', 'h', 'o', 'r', 's', 'e'};

wc_seal_params argon2id_params(uint32_t ops = kOps, uint64_t memory = kMemory) {
  wc_seal_params params;
  wc_seal_params_init(&params);
  params.argon2_ops = ops;
  params.argon2_memory = memory;
  params.chunk_bytes = kChunk;
  return params;
}

struct Result {
  wc_status status = WC_OK;
  std::string detail;  // empty without one
  Bytes out;
};

Result run(const std::function<wc_status(wc_job *, const char *out, const char *in)> &call, const Bytes &input) {
  const ScratchDir dir;
  write_file(dir / "in", input);
  wc_job job;
  wc_job_init(&job);
  Result result;
  result.status = call(&job, (dir / "out").c_str(), (dir / "in").c_str());
  if (job.detail != nullptr) result.detail = job.detail;
  if (result.status == WC_OK) result.out = read_file(dir / "out");
  return result;
}

Result seal_bytes(const Bytes &plaintext, const wc_seal_params &params, const Bytes &passphrase = kPassphrase) {
  return run(
      [&](wc_job *job, const char *out, const char *in) {
        return wc_seal_file(nullptr, &params, job, out, in, passphrase.data(), passphrase.size());
      },
      plaintext);
}

Result open_bytes(const Bytes &sealed, const wc_open_params *params = nullptr) {
  return run(
      [&](wc_job *job, const char *out, const char *in) {
        return wc_open_file(nullptr, params, job, out, in, WC_SEAL_PASSPHRASE, kPassphrase.data(), kPassphrase.size());
      },
      sealed);
}

void store_be32(Bytes &bytes, size_t at, uint32_t value) {
  for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<uint8_t>(value >> (24 - 8 * i));
}

uint32_t load_be32(const Bytes &bytes, size_t at) {
  return uint32_t{bytes[at]} << 24 | uint32_t{bytes[at + 1]} << 16 | uint32_t{bytes[at + 2]} << 8 | bytes[at + 3];
}

// A genuine Argon2id file of two chunks, with the tiny costs above.
struct Sample {
  Bytes plaintext;
  Bytes sealed;
};

const Sample &sample() {
  static const Sample s = [] {
    TestRng rng(base_seed());
    Sample made{rng.bytes(kChunk + 100), {}};
    const Result sealed = seal_bytes(made.plaintext, argon2id_params());
    EXPECT_EQ(sealed.status, WC_OK) << sealed.detail;
    made.sealed = sealed.out;
    return made;
  }();
  return s;
}

void expect_format_error(const Result &result, const std::string &words) {
  EXPECT_EQ(result.status, WC_ERR_FORMAT) << wc_status_string(result.status);
  EXPECT_NE(result.detail.find(words), std::string::npos) << "detail: '" << result.detail << "'";
  EXPECT_TRUE(result.out.empty());
}

// ---------------------------------------------------------------------------
// Hostile headers: each is refused before the KDF runs, with its reason.
// ---------------------------------------------------------------------------

TEST(SealedKdfHostileHeader, MalformedArgon2idFieldsAreFormatErrors) {
  const Bytes &genuine = sample().sealed;
  ASSERT_EQ(genuine[12], 3) << "key source 3: a passphrase through Argon2id";
  const struct Case {
    const char *name;
    std::function<void(Bytes &)> damage;
    const char *detail;
  } cases[] = {
      {"no passes", [](Bytes &h) { store_be32(h, 16, 0); }, "no passes"},
      {"no memory", [](Bytes &h) { store_be32(h, 44, 0); }, "below libsodium's minimum"},
      {"7 KiB, under libsodium's minimum", [](Bytes &h) { store_be32(h, 44, 7); }, "below libsodium's minimum"},
      {"no lanes", [](Bytes &h) { h[43] = 0; }, "lanes"},
      {"two lanes", [](Bytes &h) { h[43] = 2; }, "lanes"},
      {"a digest", [](Bytes &h) { h[13] = 1; }, "takes no digest"},
      {"reserved byte 14", [](Bytes &h) { h[14] = 1; }, "reserved"},
      {"reserved byte 15", [](Bytes &h) { h[15] = 0x80; }, "reserved"},
      {"key source 4", [](Bytes &h) { h[12] = 4; }, "unknown key source"},
      {"key source 0", [](Bytes &h) { h[12] = 0; }, "unknown key source"},
      // Read as PBKDF2, the Argon2id fields are reserved bytes that are not zero.
      {"relabelled PBKDF2", [](Bytes &h) { h[12] = 1, h[13] = 1; }, "reserved"},
      // Read as a key file, Argon2id's pass count is an iteration count.
      {"relabelled key file", [](Bytes &h) { h[12] = 2, h[13] = 1; }, "iteration count"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    Bytes forged = genuine;
    c.damage(forged);
    expect_format_error(open_bytes(forged), c.detail);
  }
}

TEST(SealedKdfHostileHeader, CostsAboveTheReadersLimitsAreRefusedBeforeTheKdfRuns) {
  const Bytes &genuine = sample().sealed;
  // Each value is well formed, so only the limits stand between it and
  // libsodium: 4 TiB would be an allocation failure, 2 GiB or 2^32 - 1
  // passes minutes of work, not the refusal the test expects.
  const struct Case {
    const char *name;
    size_t at;
    uint32_t value;
    const char *detail;
  } cases[] = {
      {"one pass over the limit", 16, WC_OPEN_DEFAULT_MAX_ARGON2_OPS + 1, "more Argon2id passes"},
      {"2^32 - 1 passes", 16, UINT32_MAX, "more Argon2id passes"},
      {"1 KiB over the limit", 44, (WC_OPEN_DEFAULT_MAX_ARGON2_MEMORY >> 10) + 1, "more Argon2id memory"},
      {"2 GiB", 44, 2u << 20, "more Argon2id memory"},
      {"4 TiB - 1 KiB, the field's most", 44, UINT32_MAX, "more Argon2id memory"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    Bytes forged = genuine;
    store_be32(forged, c.at, c.value);
    expect_format_error(open_bytes(forged), c.detail);
  }
}

TEST(SealedKdfHostileHeader, CostsWithinTheLimitsAreAuthenticatedWithTheHeader) {
  // A changed pass count or memory size that the reader accepts derives
  // another key, and the header is every chunk's AAD besides: chunk 0 fails.
  for (const auto &[at, value] : std::vector<std::pair<size_t, uint32_t>>{{16, kOps + 1}, {44, (kMemory >> 10) + 1}}) {
    Bytes forged = sample().sealed;
    store_be32(forged, at, value);
    const Result opened = open_bytes(forged);
    EXPECT_EQ(opened.status, WC_ERR_AUTH) << wc_status_string(opened.status) << " " << opened.detail;
    EXPECT_TRUE(opened.out.empty());
  }
}

TEST(SealedKdfHostileHeader, ThePbkdf2AndKeyHeadersKeepTheirLastBytesReserved) {
  // Bytes 43 to 47 hold Argon2id's lanes and memory, and only for key source 3.
  wc_seal_params pbkdf2 = argon2id_params();
  pbkdf2.kdf = WC_SEAL_PBKDF2;
  pbkdf2.iterations = 1000;
  const Result sealed = seal_bytes(Bytes(10, 1), pbkdf2);
  ASSERT_EQ(sealed.status, WC_OK);
  for (size_t at = 43; at < kHeader; ++at) {
    Bytes forged = sealed.out;
    forged[at] = 1;
    expect_format_error(open_bytes(forged), "reserved");
  }
}

// ---------------------------------------------------------------------------
// The reader's limits and their overrides.
// ---------------------------------------------------------------------------

TEST(SealedKdfLimits, AFileAboveTheDefaultLimitsOpensOnlyWithThemRaised) {
  TestRng rng = TestRng::for_current_test();
  const Bytes plaintext = rng.bytes(100);
  const uint32_t ops = WC_OPEN_DEFAULT_MAX_ARGON2_OPS + 1;
  const Result sealed = seal_bytes(plaintext, argon2id_params(ops, 8 << 10));
  ASSERT_EQ(sealed.status, WC_OK) << sealed.detail;
  expect_format_error(open_bytes(sealed.out), "more Argon2id passes");
  wc_open_params raised;
  wc_open_params_init(&raised);
  raised.max_argon2_ops = ops;
  const Result opened = open_bytes(sealed.out, &raised);
  ASSERT_EQ(opened.status, WC_OK) << opened.detail;
  EXPECT_TRUE(same_bytes(plaintext, opened.out));

  // And a limit below the file's memory refuses what the default accepts.
  wc_open_params lowered;
  wc_open_params_init(&lowered);
  lowered.max_argon2_memory = kMemory - 1024;
  expect_format_error(open_bytes(sample().sealed, &lowered), "more Argon2id memory");
  lowered.max_argon2_memory = kMemory;
  EXPECT_EQ(open_bytes(sample().sealed, &lowered).status, WC_OK);
}

TEST(SealedKdfLimits, LimitsNoFileCouldMeetAreInvalidArguments) {
  for (const auto &[ops, memory] : std::vector<std::pair<uint32_t, uint64_t>>{
           {0, WC_OPEN_DEFAULT_MAX_ARGON2_MEMORY}, {1, 0}, {1, WC_SEAL_MIN_ARGON2_MEMORY - 1}}) {
    wc_open_params params;
    wc_open_params_init(&params);
    params.max_argon2_ops = ops;
    params.max_argon2_memory = memory;
    EXPECT_EQ(open_bytes(sample().sealed, &params).status, WC_ERR_INVALID_ARGUMENT) << ops << " " << memory;
  }
}

TEST(SealedKdfLimits, TheDefaultsAreLibsodiumsPresets) {
  // The documented choice: seal at MODERATE, open up to SENSITIVE.
  wc_seal_params seal;
  wc_seal_params_init(&seal);
  EXPECT_EQ(seal.key_source, WC_SEAL_PASSPHRASE);
  EXPECT_EQ(seal.kdf, WC_SEAL_ARGON2ID);
  EXPECT_EQ(seal.argon2_ops, crypto_pwhash_argon2id_OPSLIMIT_MODERATE);
  EXPECT_EQ(seal.argon2_memory, crypto_pwhash_argon2id_MEMLIMIT_MODERATE);
  wc_open_params open;
  wc_open_params_init(&open);
  EXPECT_EQ(open.max_argon2_ops, crypto_pwhash_argon2id_OPSLIMIT_SENSITIVE);
  EXPECT_EQ(open.max_argon2_memory, crypto_pwhash_argon2id_MEMLIMIT_SENSITIVE);
  EXPECT_EQ(WC_SEAL_MIN_ARGON2_MEMORY, crypto_pwhash_argon2id_MEMLIMIT_MIN);
  EXPECT_EQ(WC_SEAL_MAX_ARGON2_MEMORY, crypto_pwhash_argon2id_MEMLIMIT_MAX);
}

// ---------------------------------------------------------------------------
// Sealing: parameters, the header written, the key derived.
// ---------------------------------------------------------------------------

TEST(SealedKdfSeal, CostsTheFormatCannotHoldAreRefused) {
  const struct Case {
    uint32_t ops;
    uint64_t memory;
  } cases[] = {{0, kMemory},
               {1, 0},
               {1, WC_SEAL_MIN_ARGON2_MEMORY - 1024},
               {1, WC_SEAL_MIN_ARGON2_MEMORY + 1},
               {1, kMemory + 512},
               {1, WC_SEAL_MAX_ARGON2_MEMORY + 1024}};
  for (const Case &c : cases) {
    SCOPED_TRACE(std::to_string(c.ops) + " passes, " + std::to_string(c.memory) + " bytes");
    const Result sealed = seal_bytes(Bytes(10), argon2id_params(c.ops, c.memory));
    EXPECT_EQ(sealed.status, WC_ERR_INVALID_ARGUMENT);
    EXPECT_NE(sealed.detail.find("Argon2id"), std::string::npos) << sealed.detail;
  }
  wc_seal_params unknown = argon2id_params();
  unknown.kdf = static_cast<wc_seal_kdf>(7);
  EXPECT_EQ(seal_bytes(Bytes(10), unknown).status, WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(seal_bytes(Bytes(10), argon2id_params(), Bytes()).status, WC_ERR_INVALID_ARGUMENT)
      << "an empty passphrase protects nothing, whatever the KDF";
}

TEST(SealedKdfSeal, TheHeaderHoldsTheCostsAndInspectReportsThem) {
  const Result sealed = seal_bytes(Bytes(3 * kChunk), argon2id_params(2, 72 << 10));
  ASSERT_EQ(sealed.status, WC_OK) << sealed.detail;
  const Bytes &h = sealed.out;
  EXPECT_EQ(h[12], 3);
  EXPECT_EQ(h[13], 0) << "Argon2id takes no digest";
  EXPECT_EQ(load_be32(h, 16), 2u);
  EXPECT_EQ(h[43], 1) << "one lane";
  EXPECT_EQ(load_be32(h, 44), 72u) << "memory in KiB";
  EXPECT_EQ(h[14], 0);
  EXPECT_EQ(h[15], 0);

  const ScratchDir dir;
  write_file(dir / "sealed", sealed.out);
  const int fd = open((dir / "sealed").c_str(), O_RDONLY);
  wc_sealed_info info{};
  ASSERT_EQ(wc_sealed_inspect(fd, &info, nullptr), WC_OK);
  close(fd);
  EXPECT_EQ(info.key_source, WC_SEAL_PASSPHRASE);
  EXPECT_EQ(info.kdf, WC_SEAL_ARGON2ID);
  EXPECT_EQ(info.digest, nullptr);
  EXPECT_EQ(info.iterations, 0u);
  EXPECT_EQ(info.argon2_ops, 2u);
  EXPECT_EQ(info.argon2_memory, uint64_t{72} << 10);
  EXPECT_EQ(info.chunks, 3u);
}

// The file key is libsodium's crypto_pwhash over the passphrase and the
// header's salt, with the header's costs: derived here directly, it opens
// every chunk with OpenSSL, for every AEAD's key length. (tests/cli's
// test_seal_kdf.py checks the same against pyca/cryptography's Argon2id,
// which runs OpenSSL's.)
TEST(SealedKdfSeal, TheFileKeyIsCryptoPwhashOfTheHeadersFields) {
  TestRng rng = TestRng::for_current_test();
  for (const std::string &aead : aead_names()) {
    SCOPED_TRACE(aead);
    const Bytes plaintext = rng.bytes(kChunk + 33);
    wc_seal_params params = argon2id_params(2, 16 << 10);
    params.aead = wc_aead_by_name(aead.c_str());
    const Result sealed = seal_bytes(plaintext, params);
    ASSERT_EQ(sealed.status, WC_OK) << sealed.detail;
    const Bytes header(sealed.out.begin(), sealed.out.begin() + kHeader);

    AeadInput input;
    input.key.resize(wc_aead_key_len(params.aead));
    ASSERT_EQ(crypto_pwhash(input.key.data(), input.key.size(), reinterpret_cast<const char *>(kPassphrase.data()),
                            kPassphrase.size(), header.data() + 20, 2, 16 << 10, crypto_pwhash_ALG_ARGON2ID13),
              0);
    input.aad = header;
    Bytes opened;
    for (size_t chunk = 0; chunk < 2; ++chunk) {
      const size_t at = kHeader + chunk * (kChunk + 16);
      const size_t len = std::min<size_t>(kChunk, sealed.out.size() - at - 16);
      const uint8_t last = chunk == 1 ? 1 : 0;
      input.nonce.assign(header.begin() + 36, header.begin() + 43);
      input.nonce.insert(input.nonce.end(), {0, 0, 0, static_cast<uint8_t>(chunk), last});
      const auto begin = sealed.out.begin() + static_cast<ptrdiff_t>(at);
      const std::optional<Bytes> piece = openssl_aead_open(aead, input, Bytes(begin, begin + len),
                                                           Bytes(begin + len, begin + len + 16));
      ASSERT_TRUE(piece.has_value()) << "chunk " << chunk;
      opened.insert(opened.end(), piece->begin(), piece->end());
    }
    EXPECT_TRUE(same_bytes(plaintext, opened));
  }
}

TEST(SealedKdfSeal, AWrongPassphraseFailsTheFirstChunk) {
  wc_open_params params;
  wc_open_params_init(&params);
  const Bytes wrong = {'c', 'o', 'r', 'r', 'e', 'c', 't', ' ', 'h', 'o', 'r', 's', 'E'};
  const Result opened = run(
      [&](wc_job *job, const char *out, const char *in) {
        const wc_status status =
            wc_open_file(nullptr, &params, job, out, in, WC_SEAL_PASSPHRASE, wrong.data(), wrong.size());
        EXPECT_EQ(job->failed_chunk, 0u);
        return status;
      },
      sample().sealed);
  EXPECT_EQ(opened.status, WC_ERR_AUTH);
  const Result right = open_bytes(sample().sealed);
  ASSERT_EQ(right.status, WC_OK);
  EXPECT_TRUE(same_bytes(sample().plaintext, right.out));
}

}  // namespace
}  // namespace wctest
