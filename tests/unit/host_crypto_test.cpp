// The formats draw every random byte from the HostCrypto they are given, so
// a seeded random source makes an age or sealed file reproducible: the same
// seed gives the same bytes, another seed other bytes, and the file still
// opens through the C API, which runs on the real provider.
#include <sys/stat.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "age/age_job.h"
#include "core/host_crypto.h"
#include "engine/fd_io.h"
#include "engine/memory_file.h"
#include "sealed/sealed_job.h"
#include "support/bytes.h"
#include "support/test_rng.h"
#include "warpcrypt/warpcrypt.h"

namespace wctest {
namespace {

namespace age = warpcrypt::age;
namespace sealed = warpcrypt::sealed;
using warpcrypt::HostCrypto;
using warpcrypt::kHostCrypto;
using warpcrypt::engine::JobMonitor;
using warpcrypt::engine::JobTotals;
using warpcrypt::engine::MemoryFile;

constexpr uint64_t kSeed = 0x5eed;

class SeededRandom final : public warpcrypt::RandomSource {
 public:
  explicit SeededRandom(uint64_t seed) : rng_(seed) {}
  wc_status fill(std::span<uint8_t> out) override {
    rng_.fill(out.data(), out.size());
    return WC_OK;
  }

 private:
  TestRng rng_;
};

// The real provider's primitives, with randomness from `random`.
HostCrypto drawing_from(SeededRandom &random) {
  HostCrypto crypto = kHostCrypto;
  crypto.random = &random;
  return crypto;
}

// A plaintext of a few chunks of either format, the last one partial.
Bytes plaintext() { return TestRng(1).bytes(200'000); }

// Runs `write` from a memory file holding `in` to another, and returns what
// it wrote.
template <typename Write>
Bytes written_by(const Bytes &in, Write write) {
  MemoryFile input;
  MemoryFile output;
  EXPECT_TRUE(warpcrypt::engine::pwrite_fully(input.fd(), in.data(), in.size(), 0));
  wc_options options;
  wc_options_init(&options);
  JobMonitor monitor(nullptr, in.size());
  JobTotals totals;
  std::optional<warpcrypt::engine::Placement> plan;
  EXPECT_EQ(warpcrypt::engine::plan_stream_job(&plan, options, monitor), WC_OK);
  if (!plan) return {};
  EXPECT_EQ(write(*plan, monitor, &totals, output.fd(), input.fd()), WC_OK);
  struct stat status{};
  EXPECT_EQ(fstat(output.fd(), &status), 0);
  Bytes out(static_cast<size_t>(status.st_size));
  size_t got = 0;
  EXPECT_TRUE(warpcrypt::engine::pread_fully(output.fd(), out.data(), out.size(), 0, &got));
  EXPECT_EQ(got, out.size());
  return out;
}

// An age file of plaintext() to an identity drawn from `crypto` too, and
// that identity's text for the reader.
struct AgeFile {
  Bytes bytes;
  std::string identity;
};

AgeFile age_file(const HostCrypto &crypto) {
  age::Identity identity;
  std::vector<age::Recipient> recipients(1);
  const char *detail = nullptr;
  EXPECT_EQ(age::generate_identity(crypto, &identity), WC_OK);
  EXPECT_EQ(age::recipient_of(crypto, identity, &recipients[0], &detail), WC_OK);
  const Bytes file = written_by(
      plaintext(), [&](const warpcrypt::engine::Placement &plan, JobMonitor &monitor, JobTotals *totals, int out_fd, int in_fd) {
        return age::run_encrypt_fd(crypto, plan, recipients, false, out_fd, in_fd, monitor, totals);
      });
  std::string secret;
  EXPECT_EQ(age::format_identity(identity, &secret, &detail), WC_OK);
  return {file, secret};
}

AgeFile age_file(uint64_t seed) {
  SeededRandom random(seed);
  return age_file(drawing_from(random));
}

// A sealed file of plaintext() under `key` (HKDF: no passphrase KDF's cost).
Bytes sealed_file(const HostCrypto &crypto, const Bytes &key) {
  wc_seal_params params;
  wc_seal_params_init(&params);
  params.key_source = WC_SEAL_KEY;
  params.chunk_bytes = WC_SEAL_MIN_CHUNK_BYTES;
  sealed::Header header;
  const char *detail = nullptr;
  EXPECT_EQ(sealed::make_header(crypto, params, &header, &detail), WC_OK);
  return written_by(plaintext(),
                    [&](const warpcrypt::engine::Placement &plan, JobMonitor &monitor, JobTotals *totals, int out_fd, int in_fd) {
                      return sealed::run_seal_fd(crypto, plan, header, key, out_fd, in_fd, monitor, totals);
                    });
}

Bytes sealed_file(uint64_t seed, const Bytes &key) {
  SeededRandom random(seed);
  return sealed_file(drawing_from(random), key);
}

Bytes age_decrypted(const AgeFile &file) {
  wc_age_identities *identities = nullptr;
  EXPECT_EQ(wc_age_identities_new(&identities), WC_OK);
  EXPECT_EQ(wc_age_identities_add(identities, file.identity.c_str(), nullptr), WC_OK);
  Bytes out(file.bytes.size());
  size_t out_len = 0;
  EXPECT_EQ(wc_age_decrypt_buffer(nullptr, identities, 0, UINT64_MAX, nullptr, out.data(), out.size(), &out_len,
                                  file.bytes.data(), file.bytes.size()),
            WC_OK);
  wc_age_identities_free(identities);
  out.resize(out_len);
  return out;
}

Bytes sealed_opened(const Bytes &file, const Bytes &key) {
  return written_by(file, [&](const warpcrypt::engine::Placement &, JobMonitor &, JobTotals *, int out_fd, int in_fd) {
    return wc_open_fd(nullptr, nullptr, nullptr, out_fd, in_fd, WC_SEAL_KEY, key.data(), key.size());
  });
}

TEST(HostCrypto, AgeFileFollowsTheSeed) {
  const AgeFile first = age_file(kSeed);
  EXPECT_TRUE(same_bytes(first.bytes, age_file(kSeed).bytes));
  EXPECT_EQ(first.identity, age_file(kSeed).identity);
  EXPECT_FALSE(same_bytes(first.bytes, age_file(kSeed + 1).bytes));
  EXPECT_TRUE(same_bytes(plaintext(), age_decrypted(first)));
}

TEST(HostCrypto, SealedFileFollowsTheSeed) {
  const Bytes key = TestRng(2).bytes(32);
  const Bytes first = sealed_file(kSeed, key);
  EXPECT_TRUE(same_bytes(first, sealed_file(kSeed, key)));
  EXPECT_FALSE(same_bytes(first, sealed_file(kSeed + 1, key)));
  EXPECT_TRUE(same_bytes(plaintext(), sealed_opened(first, key)));
}

TEST(HostCrypto, RealProviderNeverRepeatsAFile) {
  const AgeFile first = age_file(kHostCrypto);
  const AgeFile second = age_file(kHostCrypto);
  EXPECT_NE(first.identity, second.identity);
  EXPECT_FALSE(same_bytes(first.bytes, second.bytes));
  EXPECT_TRUE(same_bytes(plaintext(), age_decrypted(first)));
  const Bytes key = TestRng(2).bytes(32);
  const Bytes sealed_first = sealed_file(kHostCrypto, key);
  EXPECT_FALSE(same_bytes(sealed_first, sealed_file(kHostCrypto, key)));
  EXPECT_TRUE(same_bytes(plaintext(), sealed_opened(sealed_first, key)));
}

}  // namespace
}  // namespace wctest
