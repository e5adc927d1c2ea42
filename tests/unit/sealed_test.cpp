// Sealed files through the C API (wc_seal_fd/_file, wc_open_fd/_file,
// wc_sealed_inspect): every chunk a job writes opens with OpenSSL's EVP AEAD
// under the nonce and key docs/format.md gives, whatever the input (regular
// file, pipe), window size, thread count and backend; open returns the
// plaintext or a range of it; and every failure is reported as documented,
// with nothing left behind by the file calls. GPU workers are covered in
// tests/gpu/gpu_engine_test.cpp.
#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "aead_support.h"
#include "support/bytes.h"
#include "support/scratch_files.h"
#include "support/test_rng.h"
#include "support/warpcrypt_calls.h"

namespace wctest {
namespace {

constexpr size_t kChunk = 4096;
constexpr size_t kHeader = WC_SEAL_HEADER_LEN;
constexpr size_t kSealedChunk = kChunk + 16;

enum class Io { file, pipe };

struct JobRun {
  wc_status status = WC_OK;
  Bytes out;
  wc_job job{};
};

// A descriptor job from `in` to a result: between regular files, or between
// pipes fed and drained by helper threads.
template <typename Call>
JobRun run_fd(Io io, const Bytes &in, Call call) {
  JobRun run;
  wc_job_init(&run.job);
  if (io == Io::file) {
    const ScratchDir dir;
    write_file(dir / "in", in);
    const int in_fd = open((dir / "in").c_str(), O_RDONLY);
    const int out_fd = open((dir / "out").c_str(), O_RDWR | O_CREAT, 0600);
    run.status = call(&run.job, out_fd, in_fd);
    close(in_fd);
    close(out_fd);
    run.out = read_file(dir / "out");
    return run;
  }
  run.out = through_pipes(in, [&](int out_fd, int in_fd) { return call(&run.job, out_fd, in_fd); }, &run.status);
  return run;
}

wc_options engine_options(unsigned threads, size_t window_bytes) {
  wc_options options;
  wc_options_init(&options);
  options.backend = WC_BACKEND_CPU;
  options.threads = threads;
  options.chunk_bytes = window_bytes;
  return options;
}

wc_seal_params key_params(const char *aead) { return key_seal_params(aead, kChunk); }

JobRun seal(Io io, const Bytes &plaintext, const wc_seal_params &params, const Bytes &secret,
         const wc_options &options) {
  return run_fd(io, plaintext, [&](wc_job *job, int out_fd, int in_fd) {
    return wc_seal_fd(&options, &params, job, out_fd, in_fd, secret.data(), secret.size());
  });
}

JobRun open_sealed(Io io, const Bytes &sealed, const Bytes &secret, const wc_options &options, uint64_t offset = 0,
                uint64_t length = UINT64_MAX, wc_seal_key_source source = WC_SEAL_KEY) {
  wc_open_params params;
  wc_open_params_init(&params);
  params.offset = offset;
  params.length = length;
  return run_fd(io, sealed, [&](wc_job *job, int out_fd, int in_fd) {
    return wc_open_fd(&options, &params, job, out_fd, in_fd, source, secret.data(), secret.size());
  });
}

// The file key of docs/format.md for key source 2, through OpenSSL's
// EVP_PKEY HKDF interface (the library uses EVP_KDF).
Bytes hkdf_file_key(const Bytes &key, const Bytes &header, size_t key_len) {
  static const char kInfo[] = "warpcrypt seal v1 file key";
  Bytes out(key_len);
  EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nullptr);
  size_t len = out.size();
  const bool ok = ctx != nullptr && EVP_PKEY_derive_init(ctx) == 1 &&
                  EVP_PKEY_CTX_set_hkdf_md(ctx, header[13] == 2 ? EVP_sha512() : EVP_sha256()) == 1 &&
                  EVP_PKEY_CTX_set1_hkdf_salt(ctx, header.data() + 20, 16) == 1 &&
                  EVP_PKEY_CTX_set1_hkdf_key(ctx, key.data(), static_cast<int>(key.size())) == 1 &&
                  EVP_PKEY_CTX_add1_hkdf_info(ctx, reinterpret_cast<const unsigned char *>(kInfo),
                                              sizeof kInfo - 1) == 1 &&
                  EVP_PKEY_derive(ctx, out.data(), &len) == 1;
  EVP_PKEY_CTX_free(ctx);
  EXPECT_TRUE(ok);
  return out;
}

// Opens every chunk of `sealed` with OpenSSL as docs/format.md says, and
// returns the plaintext they hold.
Bytes reference_open(const std::string &aead, const Bytes &sealed, const Bytes &key) {
  EXPECT_GE(sealed.size(), kHeader + 16);
  const Bytes header(sealed.begin(), sealed.begin() + kHeader);
  const size_t chunk = size_t{1} << header[10];
  AeadInput input;
  input.key = hkdf_file_key(key, header, wc_aead_key_len(wc_aead_by_name(aead.c_str())));
  input.aad = header;
  Bytes plaintext;
  const size_t body = sealed.size() - kHeader;
  const size_t chunks = (body + chunk + 15) / (chunk + 16);
  for (size_t i = 0; i < chunks; ++i) {
    const size_t at = kHeader + i * (chunk + 16);
    const size_t len = std::min(chunk + 16, sealed.size() - at) - 16;
    input.nonce.assign(header.begin() + 36, header.begin() + 43);
    for (int shift = 24; shift >= 0; shift -= 8) input.nonce.push_back(static_cast<uint8_t>(i >> shift));
    input.nonce.push_back(i + 1 == chunks ? 1 : 0);
    const Bytes ciphertext(sealed.begin() + static_cast<ptrdiff_t>(at),
                           sealed.begin() + static_cast<ptrdiff_t>(at + len));
    const Bytes tag(sealed.begin() + static_cast<ptrdiff_t>(at + len),
                    sealed.begin() + static_cast<ptrdiff_t>(at + len + 16));
    const std::optional<Bytes> opened = openssl_aead_open(aead, input, ciphertext, tag);
    EXPECT_TRUE(opened.has_value()) << "chunk " << i << " does not open with OpenSSL";
    if (opened) plaintext.insert(plaintext.end(), opened->begin(), opened->end());
  }
  return plaintext;
}

struct SealedCase {
  std::string aead;
  Io io;
};

class SealedJobTest : public ::testing::TestWithParam<SealedCase> {};

// Sizes around chunk and window boundaries (windows of 1 and 3 chunks), one
// and three workers: OpenSSL opens what was sealed, and open gives it back.
TEST_P(SealedJobTest, ChunksOpenWithOpenSslAndRoundTrip) {
  const SealedCase &c = GetParam();
  TestRng rng = TestRng::for_current_test();
  const Bytes key = rng.bytes(wc_aead_key_len(wc_aead_by_name(c.aead.c_str())));
  const wc_seal_params params = key_params(c.aead.c_str());
  for (size_t window : {kChunk, 3 * kChunk}) {
    for (unsigned threads : {1u, 3u}) {
      const wc_options options = engine_options(threads, window);
      for (size_t size : {size_t{0}, size_t{1}, kChunk - 1, kChunk, kChunk + 1, 3 * kChunk, 7 * kChunk + 17}) {
        SCOPED_TRACE("size " + std::to_string(size) + ", window " + std::to_string(window) + ", threads " +
                     std::to_string(threads));
        const Bytes plaintext = rng.bytes(size);
        const JobRun sealed = seal(c.io, plaintext, params, key, options);
        ASSERT_EQ(sealed.status, WC_OK) << wc_status_string(sealed.status);
        const size_t chunks = std::max<size_t>(1, (size + kChunk - 1) / kChunk);
        ASSERT_EQ(sealed.out.size(), kHeader + size + 16 * chunks);
        EXPECT_EQ(sealed.job.bytes_in, size);
        EXPECT_EQ(sealed.job.bytes_out, sealed.out.size());
        EXPECT_TRUE(same_bytes(plaintext, reference_open(c.aead, sealed.out, key)));
        const JobRun opened = open_sealed(c.io, sealed.out, key, options);
        ASSERT_EQ(opened.status, WC_OK) << wc_status_string(opened.status);
        EXPECT_STREQ(opened.job.message, "") << "no failure, no sentence";
        EXPECT_TRUE(same_bytes(plaintext, opened.out));
      }
    }
  }
}

std::vector<SealedCase> sealed_cases() {
  std::vector<SealedCase> cases;
  for (const std::string &aead : aead_names()) {
    for (Io io : {Io::file, Io::pipe}) cases.push_back({aead, io});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Aeads, SealedJobTest, ::testing::ValuesIn(sealed_cases()),
                         [](const ::testing::TestParamInfo<SealedCase> &param) {
                           std::string name = param.param.aead + (param.param.io == Io::file ? "_file" : "_pipe");
                           for (char &ch : name) ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                           return name;
                         });

// A sample file for the failure tests: 5 chunks and a bit, sealed with a key.
struct Sample {
  Bytes key;
  Bytes plaintext;
  Bytes sealed;
};

long peak_resident_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

Sample make_sample() {
  TestRng rng = TestRng::for_current_test();
  Sample sample{rng.bytes(32), rng.bytes(5 * kChunk + 100), {}};
  sample.sealed = seal(Io::file, sample.plaintext, key_params("aes-256-gcm"), sample.key, engine_options(2, kChunk)).out;
  return sample;
}

TEST(SealedRanges, EveryRangeEqualsTheSliceAndReadsOnlyItsChunks) {
  const Sample s = make_sample();
  const uint64_t total = s.plaintext.size();
  for (unsigned threads : {1u, 3u}) {
    const wc_options options = engine_options(threads, kChunk);
    for (auto [offset, length] : std::vector<std::pair<uint64_t, uint64_t>>{
             {0, 1}, {kChunk - 1, 2}, {kChunk, kChunk}, {100, 3 * kChunk}, {5 * kChunk, 100}, {5 * kChunk + 99, 50},
             {2 * kChunk, 0}, {total, 5}, {uint64_t{1} << 40, 5}, {7, UINT64_MAX}}) {
      SCOPED_TRACE("offset " + std::to_string(offset) + " length " + std::to_string(length));
      const JobRun run = open_sealed(Io::file, s.sealed, s.key, options, offset, length);
      ASSERT_EQ(run.status, WC_OK);
      const uint64_t begin = std::min(offset, total);
      const uint64_t end = begin + std::min(length, total - begin);
      EXPECT_TRUE(same_bytes(Bytes(s.plaintext.begin() + static_cast<ptrdiff_t>(begin),
                                   s.plaintext.begin() + static_cast<ptrdiff_t>(end)),
                             run.out));
    }
  }
  // Chunk 3 damaged: a range over chunks 1 and 2 does not read it.
  Bytes damaged = s.sealed;
  damaged[kHeader + 3 * kSealedChunk + 5] ^= 1;
  EXPECT_EQ(open_sealed(Io::file, damaged, s.key, engine_options(2, kChunk), kChunk, 2 * kChunk).status, WC_OK);
  const JobRun failed = open_sealed(Io::file, damaged, s.key, engine_options(2, kChunk), 3 * kChunk, 1);
  EXPECT_EQ(failed.status, WC_ERR_AUTH);
  EXPECT_EQ(failed.job.failed_chunk, 3u);
}

TEST(SealedFailures, DamageNamesTheFirstChunkThatFails) {
  const Sample s = make_sample();
  for (Io io : {Io::file, Io::pipe}) {
    Bytes damaged = s.sealed;
    damaged[kHeader + 4 * kSealedChunk + 7] ^= 0x20;
    damaged[kHeader + 2 * kSealedChunk + 7] ^= 0x20;
    const JobRun run = open_sealed(io, damaged, s.key, engine_options(3, kChunk));
    EXPECT_EQ(run.status, WC_ERR_AUTH);
    EXPECT_EQ(run.job.failed_chunk, 2u);
    ASSERT_NE(run.job.detail, nullptr);
    EXPECT_STREQ(run.job.message,
                 "authentication failed at chunk 2: wrong key, or the file was modified, truncated or "
                 "reordered");
    // Truncated at a chunk boundary: the new last chunk was not sealed as last.
    const Bytes truncated(s.sealed.begin(), s.sealed.begin() + kHeader + 3 * kSealedChunk);
    const JobRun cut = open_sealed(io, truncated, s.key, engine_options(3, kChunk));
    EXPECT_EQ(cut.status, WC_ERR_AUTH);
    EXPECT_EQ(cut.job.failed_chunk, 2u);
    // Wrong key: the first chunk fails.
    Bytes wrong_key = s.key;
    wrong_key[0] ^= 1;
    EXPECT_EQ(open_sealed(io, s.sealed, wrong_key, engine_options(3, kChunk)).job.failed_chunk, 0u);
  }
}

TEST(SealedFailures, HeaderAndSizeProblemsAreFormatErrorsWithADetail) {
  const Sample s = make_sample();
  const struct {
    size_t offset;
    uint8_t flip;
    const char *detail;
  } damage[] = {{0, 1, "bad magic number"},       {8, 1, "version"},          {9, 0x10, "unknown AEAD"},
                {10, 0x20, "chunk size"},         {11, 1, "tag length"},      {12, 0x10, "key source"},
                {13, 0x10, "unknown digest"},     {15, 1, "reserved"},        {16, 0x80, "iteration count"},
                {47, 1, "reserved"}};
  for (const auto &d : damage) {
    SCOPED_TRACE(d.detail);
    Bytes damaged = s.sealed;
    damaged[d.offset] ^= d.flip;
    const JobRun run = open_sealed(Io::file, damaged, s.key, engine_options(1, kChunk));
    EXPECT_EQ(run.status, WC_ERR_FORMAT);
    ASSERT_NE(run.job.detail, nullptr);
    EXPECT_NE(std::string(run.job.detail).find(d.detail), std::string::npos) << run.job.detail;
    EXPECT_STREQ(run.job.message, run.job.detail) << "the detail is the whole sentence";
  }
  for (size_t cut : {size_t{0}, kHeader - 1, kHeader, kHeader + 15}) {
    for (Io io : {Io::file, Io::pipe}) {
      const JobRun run = open_sealed(io, Bytes(s.sealed.begin(), s.sealed.begin() + cut), s.key, engine_options(1, kChunk));
      EXPECT_EQ(run.status, WC_ERR_FORMAT) << "cut at " << cut;
    }
  }
}

TEST(SealedFailures, SecretsOfTheWrongKindOrLengthAreRefused) {
  const Sample s = make_sample();
  const wc_options options = engine_options(1, kChunk);
  const JobRun as_passphrase = open_sealed(Io::file, s.sealed, s.key, options, 0, UINT64_MAX, WC_SEAL_PASSPHRASE);
  EXPECT_EQ(as_passphrase.status, WC_ERR_INVALID_ARGUMENT);
  ASSERT_NE(as_passphrase.job.detail, nullptr);
  EXPECT_STREQ(as_passphrase.job.detail, "this file was sealed with a key");
  const JobRun short_key = open_sealed(Io::file, s.sealed, Bytes(16), options);
  EXPECT_EQ(short_key.status, WC_ERR_KEY_LEN);
  EXPECT_STREQ(short_key.job.message, "wrong key length: the AEAD takes a 32-byte key") << "the length it needs";
  const JobRun sealing_short = seal(Io::file, s.plaintext, key_params("aes-128-gcm"), Bytes(32), options);
  EXPECT_EQ(sealing_short.status, WC_ERR_KEY_LEN);
  EXPECT_STREQ(sealing_short.job.message, "wrong key length: the AEAD takes a 16-byte key");
  // A range needs offsets into the input.
  EXPECT_EQ(open_sealed(Io::pipe, s.sealed, s.key, options, 5, 10).status, WC_ERR_INVALID_ARGUMENT);
}

TEST(SealedFailures, ParametersTheFormatCannotHoldAreRefused) {
  const wc_options options = engine_options(1, kChunk);
  wc_seal_params params = key_params("aes-256-gcm");
  for (uint64_t chunk : {uint64_t{2048}, uint64_t{5000}, uint64_t{2} << 30}) {
    params.chunk_bytes = chunk;
    const JobRun run = seal(Io::file, Bytes(10), params, Bytes(32), options);
    EXPECT_EQ(run.status, WC_ERR_INVALID_ARGUMENT) << chunk;
    EXPECT_NE(run.job.detail, nullptr);
  }
  params = key_params("aes-256-gcm");
  params.key_source = WC_SEAL_PASSPHRASE;
  params.kdf = WC_SEAL_PBKDF2;
  params.iterations = WC_SEAL_MAX_ITERATIONS + 1;
  EXPECT_EQ(seal(Io::file, Bytes(10), params, Bytes(3), options).status, WC_ERR_INVALID_ARGUMENT);
  params.iterations = 1000;
  params.digest = "md5";
  EXPECT_EQ(seal(Io::file, Bytes(10), params, Bytes(3), options).status, WC_ERR_DIGEST);
}

// The review's critical forgery: cut after a whole chunk, then 16 bytes
// standing in for an empty final chunk. Every input path and a range that
// reaches the end must refuse it; an empty file keeps its one empty chunk.
TEST(SealedTruncation, AnEmptyFinalChunkAfterChunkZeroIsRefusedOnEveryPath) {
  const Sample s = make_sample();
  for (size_t kept : {size_t{1}, size_t{3}}) {
    Bytes forged(s.sealed.begin(), s.sealed.begin() + kHeader + kept * kSealedChunk);
    forged.resize(forged.size() + 16);
    for (Io io : {Io::file, Io::pipe}) {
      SCOPED_TRACE(kept);
      for (size_t window : {kChunk, 4 * kChunk}) {
        const JobRun run = open_sealed(io, forged, s.key, engine_options(2, window));
        EXPECT_EQ(run.status, WC_ERR_FORMAT);
        ASSERT_NE(run.job.detail, nullptr);
        EXPECT_NE(std::string(run.job.detail).find("empty final chunk"), std::string::npos);
      }
    }
    const JobRun range = open_sealed(Io::file, forged, s.key, engine_options(1, kChunk), 10, UINT64_MAX);
    EXPECT_EQ(range.status, WC_ERR_FORMAT);
    EXPECT_TRUE(range.out.empty());
  }
  wc_seal_params params = key_params("aes-256-gcm");
  const JobRun empty = seal(Io::file, Bytes(), params, s.key, engine_options(1, kChunk));
  ASSERT_EQ(empty.status, WC_OK);
  EXPECT_EQ(empty.out.size(), kHeader + 16);
  EXPECT_EQ(open_sealed(Io::pipe, empty.out, s.key, engine_options(1, kChunk)).status, WC_OK);
}

TEST(SealedTruncation, ARangeThatReachesTheEndAuthenticatesTheFinalChunk) {
  const Sample s = make_sample();
  // The final chunk (index 5) replaced by one sealed as not-last would pass
  // a reader that never looked at the last flag; flipping its tag shows the
  // range reads it.
  Bytes damaged = s.sealed;
  damaged.back() ^= 1;
  const uint64_t plaintext_end = s.plaintext.size();
  const JobRun to_end = open_sealed(Io::file, damaged, s.key, engine_options(1, kChunk), plaintext_end - 1, 1);
  EXPECT_EQ(to_end.status, WC_ERR_AUTH);
  EXPECT_EQ(to_end.job.failed_chunk, 5u);
  const JobRun before_end = open_sealed(Io::file, damaged, s.key, engine_options(1, kChunk), 0, kChunk);
  EXPECT_EQ(before_end.status, WC_OK) << "a range that stops early reads only its own chunks";
}

TEST(SealedCost, AForgedIterationCountIsRefusedBeforeTheKdfRuns) {
  const Sample s = make_sample();
  Bytes forged = s.sealed;
  forged[12] = WC_SEAL_PASSPHRASE;
  const uint32_t iterations = WC_OPEN_DEFAULT_MAX_ITERATIONS + 1;
  for (int i = 0; i < 4; ++i) forged[16 + i] = static_cast<uint8_t>(iterations >> (24 - 8 * i));
  const JobRun run = open_sealed(Io::file, forged, Bytes{'p', 'w'}, engine_options(1, kChunk), 0, UINT64_MAX,
                                 WC_SEAL_PASSPHRASE);
  EXPECT_EQ(run.status, WC_ERR_FORMAT);
  ASSERT_NE(run.job.detail, nullptr);
  EXPECT_NE(std::string(run.job.detail).find("iterations"), std::string::npos);

  wc_open_params zero_limit;
  wc_open_params_init(&zero_limit);
  zero_limit.max_iterations = 0;
  EXPECT_EQ(wc_open_fd(nullptr, &zero_limit, nullptr, 1, 0, WC_SEAL_KEY, s.key.data(), s.key.size()),
            WC_ERR_INVALID_ARGUMENT);
}

TEST(SealedCost, AHugeChunkSizeInATinyFileOpensWithoutAllocatingIt) {
  // Exponent 30 (1 GiB chunks) in a file of a few hundred bytes: a reader
  // that sized its buffers from the header would fill 2 GiB of zeroed
  // buffers, which the process's peak resident size would show.
  const Sample s = make_sample();
  Bytes forged(s.sealed.begin(), s.sealed.begin() + kHeader + 100);
  forged[10] = 30;
  for (Io io : {Io::file, Io::pipe}) {
    const long peak_before_kib = peak_resident_kib();
    const JobRun run = open_sealed(io, forged, s.key, engine_options(2, 0));
    EXPECT_EQ(run.status, WC_ERR_AUTH) << wc_status_string(run.status);
    EXPECT_LT(peak_resident_kib() - peak_before_kib, 256 * 1024) << "open grew the process by the header's chunk size";
  }
}

TEST(SealedParameters, ZeroIsAnInvalidValueNotTheDefault) {
  const wc_options options = engine_options(1, kChunk);
  wc_seal_params params = key_params("aes-256-gcm");
  params.chunk_bytes = 0;
  EXPECT_EQ(seal(Io::file, Bytes(10), params, Bytes(32), options).status, WC_ERR_INVALID_ARGUMENT);
  params = key_params("aes-256-gcm");
  params.key_source = WC_SEAL_PASSPHRASE;
  params.kdf = WC_SEAL_PBKDF2;
  params.iterations = 0;
  EXPECT_EQ(seal(Io::file, Bytes(10), params, Bytes{'p', 'w'}, options).status, WC_ERR_INVALID_ARGUMENT);
}

TEST(SealedParameters, AnEmptyPassphraseIsRefused) {
  wc_seal_params params = key_params("aes-256-gcm");
  params.key_source = WC_SEAL_PASSPHRASE;
  const JobRun run = seal(Io::file, Bytes(10), params, Bytes(), engine_options(1, kChunk));
  EXPECT_EQ(run.status, WC_ERR_INVALID_ARGUMENT);
  ASSERT_NE(run.job.detail, nullptr);
  EXPECT_NE(std::string(run.job.detail).find("empty passphrase"), std::string::npos);
  EXPECT_TRUE(run.out.empty());
}

TEST(SealedInspect, ReportsTheHeaderAndTheLayout) {
  const ScratchDir dir;
  write_file(dir / "plain", Bytes(3 * kChunk + 5, 7));
  wc_seal_params params;
  wc_seal_params_init(&params);
  params.aead = wc_aead_by_name("chacha20-poly1305");
  params.kdf = WC_SEAL_PBKDF2;
  params.iterations = 1000;
  params.digest = "sha512";
  params.chunk_bytes = kChunk;
  const std::string passphrase = "correct horse";
  ASSERT_EQ(wc_seal_file(nullptr, &params, nullptr, (dir / "sealed").c_str(), (dir / "plain").c_str(),
                         reinterpret_cast<const uint8_t *>(passphrase.data()), passphrase.size()),
            WC_OK);
  const int fd = open((dir / "sealed").c_str(), O_RDONLY);
  wc_sealed_info info{};
  ASSERT_EQ(wc_sealed_inspect(fd, &info, nullptr), WC_OK);
  EXPECT_EQ(lseek(fd, 0, SEEK_CUR), 0);
  close(fd);
  EXPECT_EQ(info.aead, params.aead);
  EXPECT_EQ(info.key_source, WC_SEAL_PASSPHRASE);
  EXPECT_EQ(info.kdf, WC_SEAL_PBKDF2);
  EXPECT_STREQ(info.digest, "sha512");
  EXPECT_EQ(info.iterations, 1000u);
  EXPECT_EQ(info.argon2_ops, 0u);
  EXPECT_EQ(info.argon2_memory, 0u);
  EXPECT_EQ(info.chunk_bytes, kChunk);
  EXPECT_EQ(info.chunks, 4u);
  EXPECT_EQ(info.plaintext_len, 3 * kChunk + 5);

  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  EXPECT_EQ(wc_sealed_inspect(pipe_fds[0], &info, nullptr), WC_ERR_INVALID_ARGUMENT);
  close(pipe_fds[0]);
  close(pipe_fds[1]);
}

TEST(SealedFile, FailedOpenLeavesNoPlaintextAndKeepsAnExistingTarget) {
  const Sample s = make_sample();
  const ScratchDir dir;
  Bytes damaged = s.sealed;
  damaged.back() ^= 1;
  write_file(dir / "sealed", damaged);
  write_file(dir / "out", Bytes{'k', 'e', 'e', 'p'});
  wc_job job;
  wc_job_init(&job);
  EXPECT_EQ(wc_open_file(nullptr, nullptr, &job, (dir / "out").c_str(), (dir / "sealed").c_str(), WC_SEAL_KEY,
                         s.key.data(), s.key.size()),
            WC_ERR_AUTH);
  EXPECT_EQ(job.failed_chunk, 5u);
  EXPECT_TRUE(same_bytes(Bytes{'k', 'e', 'e', 'p'}, read_file(dir / "out")));
  EXPECT_EQ(dir.entries().size(), 2u) << "a temporary file was left behind";

  write_file(dir / "sealed", s.sealed);
  ASSERT_EQ(wc_open_file(nullptr, nullptr, nullptr, (dir / "out").c_str(), (dir / "sealed").c_str(), WC_SEAL_KEY,
                         s.key.data(), s.key.size()),
            WC_OK);
  EXPECT_TRUE(same_bytes(s.plaintext, read_file(dir / "out")));
}

int cancel_at_once(void *, uint64_t, uint64_t) { return 1; }

TEST(SealedFile, CancelledSealLeavesNothing) {
  const ScratchDir dir;
  write_file(dir / "plain", Bytes(1 << 20, 1));
  wc_job job;
  wc_job_init(&job);
  job.progress = cancel_at_once;
  const wc_seal_params params = key_params("aes-128-gcm");
  const Bytes key(16, 9);
  const wc_options options = engine_options(2, kChunk);
  EXPECT_EQ(wc_seal_file(&options, &params, &job, (dir / "sealed").c_str(), (dir / "plain").c_str(), key.data(),
                         key.size()),
            WC_ERR_CANCELLED);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"plain"});
}

// ---- wc_sealed_stream: chunks one at a time ---------------------------------

// A stream's chunks for `plaintext`, as a program that does its own I/O
// writes them: the header, then each chunk, the last flagged.
Bytes seal_by_chunks(const Bytes &plaintext, const Bytes &key, const wc_seal_params &params) {
  wc_sealed_stream *stream = nullptr;
  Bytes sealed(kHeader);
  EXPECT_EQ(wc_sealed_stream_seal_new(&stream, nullptr, &params, nullptr, sealed.data(), sealed.size(), key.data(),
                                      key.size()),
            WC_OK);
  const size_t chunk = wc_sealed_stream_chunk_bytes(stream);
  const size_t chunks = std::max<size_t>(1, (plaintext.size() + chunk - 1) / chunk);
  for (size_t i = 0; i < chunks; ++i) {
    const size_t len = std::min(chunk, plaintext.size() - i * chunk);
    Bytes out(len + 16);
    size_t written = 0;
    EXPECT_EQ(wc_sealed_stream_seal(stream, nullptr, out.data(), out.size(), &written, i, i + 1 == chunks,
                                    plaintext.data() + i * chunk, len),
              WC_OK);
    EXPECT_EQ(written, out.size());
    sealed.insert(sealed.end(), out.begin(), out.end());
  }
  wc_sealed_stream_free(stream);
  return sealed;
}

struct StreamOpen {
  wc_status status = WC_OK;
  Bytes plaintext;
  wc_job job{};
};

// Opens `sealed` chunk by chunk, the last one found from the size.
StreamOpen open_by_chunks(const Bytes &sealed, const Bytes &key) {
  StreamOpen result;
  wc_job_init(&result.job);
  wc_sealed_stream *stream = nullptr;
  result.status = wc_sealed_stream_open_new(&stream, nullptr, nullptr, &result.job, sealed.data(),
                                            std::min(sealed.size(), kHeader), WC_SEAL_KEY, key.data(), key.size());
  if (result.status != WC_OK) return result;
  uint64_t chunks = 0;
  uint64_t plaintext_len = 0;
  result.status = wc_sealed_stream_layout(stream, &result.job, sealed.size() - kHeader, &chunks, &plaintext_len);
  for (uint64_t i = 0; result.status == WC_OK && i < chunks; ++i) {
    const size_t at = kHeader + i * kSealedChunk;
    const size_t len = std::min(kSealedChunk, sealed.size() - at);
    Bytes out(len - 16);
    size_t written = 0;
    result.status = wc_sealed_stream_open(stream, &result.job, out.data(), out.size(), &written, i, i + 1 == chunks,
                                          sealed.data() + at, len);
    result.plaintext.insert(result.plaintext.end(), out.begin(), out.begin() + static_cast<long>(written));
  }
  EXPECT_TRUE(result.status != WC_OK || result.plaintext.size() == plaintext_len);
  wc_sealed_stream_free(stream);
  return result;
}

TEST(SealedStream, ChunksOneAtATimeAreTheFormatTheEngineReadsAndWrites) {
  TestRng rng = TestRng::for_current_test();
  const Bytes key = rng.bytes(32);
  for (size_t size : {size_t{0}, size_t{1}, kChunk, kChunk + 1, 3 * kChunk + 17}) {
    SCOPED_TRACE("size " + std::to_string(size));
    const Bytes plaintext = rng.bytes(size);
    const Bytes sealed = seal_by_chunks(plaintext, key, key_params("chacha20-poly1305"));
    EXPECT_EQ(reference_open("chacha20-poly1305", sealed, key), plaintext);
    for (Io io : {Io::file, Io::pipe}) {
      EXPECT_EQ(open_sealed(io, sealed, key, engine_options(2, kChunk)).out, plaintext);
    }
    const Bytes by_engine = seal(Io::file, plaintext, key_params("aes-256-gcm"), key, engine_options(2, kChunk)).out;
    const StreamOpen opened = open_by_chunks(by_engine, key);
    EXPECT_EQ(opened.status, WC_OK);
    EXPECT_EQ(opened.plaintext, plaintext);
  }
}

TEST(SealedStream, TheEnginesRulesHoldChunkByChunk) {
  const Sample s = make_sample();  // 5 chunks and 100 bytes
  // Cut at a chunk boundary: the new last chunk was not sealed as last.
  const StreamOpen cut = open_by_chunks(Bytes(s.sealed.begin(), s.sealed.begin() + kHeader + 3 * kSealedChunk), s.key);
  EXPECT_EQ(cut.status, WC_ERR_AUTH);
  EXPECT_EQ(cut.job.failed_chunk, 2u);
  EXPECT_STREQ(cut.job.message,
               "authentication failed at chunk 2: wrong key, or the file was modified, truncated or "
               "reordered");
  // Cut, then an empty "final chunk" appended: the layout refuses it.
  Bytes forged(s.sealed.begin(), s.sealed.begin() + kHeader + kSealedChunk);
  forged.resize(forged.size() + 16);
  EXPECT_EQ(open_by_chunks(forged, s.key).status, WC_ERR_FORMAT);
  EXPECT_EQ(open_by_chunks(Bytes(s.sealed.begin(), s.sealed.begin() + 20), s.key).status, WC_ERR_FORMAT);

  wc_sealed_stream *stream = nullptr;
  ASSERT_EQ(wc_sealed_stream_open_new(&stream, nullptr, nullptr, nullptr, s.sealed.data(), kHeader, WC_SEAL_KEY,
                                      s.key.data(), s.key.size()),
            WC_OK);
  Bytes out(kChunk, 0xAA);
  size_t written = 7;
  wc_job job;
  wc_job_init(&job);
  // A chunk opened at another index, or flagged last when it is not: the tag fails and nothing is released.
  EXPECT_EQ(wc_sealed_stream_open(stream, &job, out.data(), out.size(), &written, 1, 0, s.sealed.data() + kHeader,
                                  kSealedChunk),
            WC_ERR_AUTH);
  EXPECT_EQ(job.failed_chunk, 1u);
  EXPECT_EQ(written, 0u);
  EXPECT_EQ(out, Bytes(kChunk, 0));
  EXPECT_EQ(wc_sealed_stream_open(stream, nullptr, out.data(), out.size(), &written, 0, 1, s.sealed.data() + kHeader,
                                  kSealedChunk),
            WC_ERR_AUTH);
  // Lengths no sealing gives: a short chunk before the last, an empty final chunk after chunk 0, a short tag.
  wc_job_init(&job);
  EXPECT_EQ(wc_sealed_stream_open(stream, &job, out.data(), out.size(), &written, 0, 0, s.sealed.data() + kHeader,
                                  kSealedChunk - 1),
            WC_ERR_FORMAT);
  EXPECT_NE(std::string(job.message).find("shorter than the chunk size"), std::string::npos) << job.message;
  EXPECT_EQ(wc_sealed_stream_open(stream, nullptr, out.data(), out.size(), &written, 3, 1, s.sealed.data(), 16),
            WC_ERR_FORMAT);
  EXPECT_EQ(wc_sealed_stream_open(stream, nullptr, out.data(), out.size(), &written, 0, 1, s.sealed.data(), 15),
            WC_ERR_FORMAT);
  EXPECT_EQ(wc_sealed_stream_open(stream, nullptr, out.data(), 10, &written, 0, 0, s.sealed.data() + kHeader,
                                  kSealedChunk),
            WC_ERR_OUTPUT_TOO_SMALL);
  // Sealing takes whole chunks but the last, and an empty chunk only for an empty file.
  EXPECT_EQ(wc_sealed_stream_seal(stream, nullptr, out.data(), 100, &written, 0, 1, s.plaintext.data(), 100),
            WC_ERR_OUTPUT_TOO_SMALL);  // no room for the tag
  Bytes room(kChunk + 16);
  EXPECT_EQ(wc_sealed_stream_seal(stream, nullptr, room.data(), room.size(), &written, 0, 0, s.plaintext.data(), 100),
            WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_sealed_stream_seal(stream, nullptr, room.data(), room.size(), &written, 2, 1, s.plaintext.data(), 0),
            WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_sealed_stream_seal(stream, nullptr, room.data(), room.size(), &written, uint64_t{1} << 32, 1,
                                  s.plaintext.data(), 100),
            WC_ERR_INVALID_ARGUMENT);
  wc_sealed_stream_free(stream);
}

TEST(SealedStream, HeadersAndSecretsAreCheckedAsTheEngineChecksThem) {
  const Sample s = make_sample();
  wc_sealed_stream *stream = reinterpret_cast<wc_sealed_stream *>(&stream);
  EXPECT_EQ(wc_sealed_stream_open_new(&stream, nullptr, nullptr, nullptr, s.sealed.data(), kHeader - 1, WC_SEAL_KEY,
                                      s.key.data(), s.key.size()),
            WC_ERR_FORMAT);
  EXPECT_EQ(stream, nullptr);
  Bytes damaged(s.sealed.begin(), s.sealed.begin() + kHeader);
  damaged[0] ^= 1;
  wc_job job;
  wc_job_init(&job);
  EXPECT_EQ(wc_sealed_stream_open_new(&stream, nullptr, nullptr, &job, damaged.data(), kHeader, WC_SEAL_KEY,
                                      s.key.data(), s.key.size()),
            WC_ERR_FORMAT);
  EXPECT_NE(std::string(job.message).find("bad magic number"), std::string::npos);
  EXPECT_EQ(wc_sealed_stream_open_new(&stream, nullptr, nullptr, nullptr, s.sealed.data(), kHeader,
                                      WC_SEAL_PASSPHRASE, s.key.data(), s.key.size()),
            WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_sealed_stream_open_new(&stream, nullptr, nullptr, nullptr, s.sealed.data(), kHeader, WC_SEAL_KEY,
                                      s.key.data(), 16),
            WC_ERR_KEY_LEN);
  // Each KDF's costs are bounded as the engine bounds them.
  wc_seal_params params;
  wc_seal_params_init(&params);
  params.kdf = WC_SEAL_PBKDF2;
  params.iterations = 1000;
  params.chunk_bytes = kChunk;
  Bytes header(kHeader);
  const uint8_t passphrase[] = {'p', 'w'};
  ASSERT_EQ(wc_sealed_stream_seal_new(&stream, nullptr, &params, nullptr, header.data(), header.size(), passphrase,
                                      sizeof passphrase),
            WC_OK);
  wc_sealed_stream_free(stream);
  wc_open_params limits;
  wc_open_params_init(&limits);
  limits.max_iterations = 999;
  EXPECT_EQ(wc_sealed_stream_open_new(&stream, nullptr, &limits, nullptr, header.data(), kHeader,
                                      WC_SEAL_PASSPHRASE, passphrase, sizeof passphrase),
            WC_ERR_FORMAT);
  wc_seal_params argon2id = params;
  argon2id.kdf = WC_SEAL_ARGON2ID;
  argon2id.argon2_ops = 2;
  argon2id.argon2_memory = 64 << 10;
  Bytes argon2id_header(kHeader);
  ASSERT_EQ(wc_sealed_stream_seal_new(&stream, nullptr, &argon2id, nullptr, argon2id_header.data(), kHeader,
                                      passphrase, sizeof passphrase),
            WC_OK);
  wc_sealed_stream_free(stream);
  wc_open_params_init(&limits);
  limits.max_argon2_ops = 1;
  EXPECT_EQ(wc_sealed_stream_open_new(&stream, nullptr, &limits, nullptr, argon2id_header.data(), kHeader,
                                      WC_SEAL_PASSPHRASE, passphrase, sizeof passphrase),
            WC_ERR_FORMAT);
  wc_open_params_init(&limits);
  limits.max_argon2_memory = 32 << 10;
  EXPECT_EQ(wc_sealed_stream_open_new(&stream, nullptr, &limits, nullptr, argon2id_header.data(), kHeader,
                                      WC_SEAL_PASSPHRASE, passphrase, sizeof passphrase),
            WC_ERR_FORMAT);
  EXPECT_EQ(wc_sealed_stream_seal_new(&stream, nullptr, &params, nullptr, header.data(), header.size(), passphrase, 0),
            WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_sealed_stream_seal_new(&stream, nullptr, &params, nullptr, header.data(), kHeader - 1, passphrase,
                                      sizeof passphrase),
            WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_sealed_stream_chunk_bytes(nullptr), 0u);
  wc_sealed_stream_free(nullptr);
}

TEST(SealedFile, AFailedReadOrWriteSaysWhichSide) {
  const ScratchDir dir;
  write_file(dir / "in", Bytes(10, 1));
  const uint8_t key[32] = {};
  const wc_seal_params params = key_params("aes-256-gcm");
  const wc_seal_params *p = &params;
  wc_job job;
  wc_job_init(&job);
  EXPECT_EQ(wc_seal_file(nullptr, p, &job, (dir / "out").c_str(), (dir / "absent").c_str(), key, sizeof key),
            WC_ERR_IO);
  EXPECT_EQ(job.os_error, ENOENT);
  EXPECT_EQ(job.io_side, WC_IO_INPUT);
  wc_job_init(&job);
  EXPECT_EQ(wc_seal_file(nullptr, p, &job, (dir / "no" / "out").c_str(), (dir / "in").c_str(), key, sizeof key),
            WC_ERR_IO);
  EXPECT_EQ(job.os_error, ENOENT);
  EXPECT_EQ(job.io_side, WC_IO_OUTPUT);
  wc_job_init(&job);
  EXPECT_EQ(wc_seal_file(nullptr, p, &job, (dir / "out").c_str(), (dir / "in").c_str(), key, sizeof key), WC_OK);
  EXPECT_EQ(job.io_side, WC_IO_NONE);
}

// An option the engine refuses is refused at the job's entry, before the
// passphrase's KDF runs and the header is written: nothing reaches the
// output (the 48-byte header once did, after a full Argon2id).
TEST(SealedFile, ABadOptionIsRefusedBeforeTheKdfAndTheHeader) {
  wc_seal_params params;
  wc_seal_params_init(&params);
  params.aead = wc_aead_by_name("aes-256-gcm");
  params.kdf = WC_SEAL_ARGON2ID;
  params.argon2_ops = 1;
  params.argon2_memory = 64 << 10;
  const uint8_t passphrase[] = "correct horse";
  struct Case {
    wc_options options;
    const char *rule;
  };
  wc_options odd_chunk = engine_options(1, 4097);
  wc_options many_streams = engine_options(1, 0);
  many_streams.streams = 65;
  wc_options half_list = engine_options(1, 0);
  half_list.device_count = 1;
  for (const Case &bad : {Case{odd_chunk, "chunk size"}, Case{many_streams, "streams"},
                          Case{half_list, "device list"}}) {
    int out[2];
    int in[2];
    ASSERT_EQ(pipe(out), 0);
    ASSERT_EQ(pipe(in), 0);
    ASSERT_EQ(write(in[1], "plaintext", 9), 9);
    close(in[1]);
    wc_job job;
    wc_job_init(&job);
    EXPECT_EQ(wc_seal_fd(&bad.options, &params, &job, out[1], in[0], passphrase, sizeof passphrase - 1),
              WC_ERR_INVALID_ARGUMENT);
    ASSERT_NE(job.detail, nullptr);
    EXPECT_NE(std::string(job.detail).find(bad.rule), std::string::npos) << job.detail;
    close(out[1]);
    char written[64];
    EXPECT_EQ(read(out[0], written, sizeof written), 0) << bad.rule << ": the output got bytes";
    close(out[0]);
    close(in[0]);
  }
}

}  // namespace
}  // namespace wctest
