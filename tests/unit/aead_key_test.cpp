// The keyed AEAD object (wc_aead_key): it seals and opens as the one-shot
// calls and OpenSSL do, from many threads at once, refuses what they refuse,
// and its device calls answer without a device as the one-shot ones do.
// Also the batch-overlap rule every AEAD batch call checks in the library,
// and HKDF against RFC 5869's test cases.
#include <algorithm>
#include <array>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "aead_support.h"
#include "core/memory_ranges.h"
#include "support/cipher_table.h"
#include "support/gpu_modes.h"
#include "support/test_rng.h"

namespace wctest {
namespace {

struct KeyDeleter {
  void operator()(wc_aead_key *key) const { wc_aead_key_free(key); }
};
using KeyPtr = std::unique_ptr<wc_aead_key, KeyDeleter>;

KeyPtr new_key(const std::string &name, const Bytes &key, wc_backend backend = WC_BACKEND_CPU) {
  wc_options options;
  wc_options_init(&options);
  options.backend = backend;
  wc_aead_key *raw = nullptr;
  EXPECT_EQ(wc_aead_key_new(&raw, &options, wc_aead_by_name(name.c_str()), key.data(), key.size()), WC_OK);
  return KeyPtr(raw);
}

wc_aead_message message_of(const AeadInput &input, Bytes &out, Bytes &tag) {
  return {out.data(),         input.plaintext.data(), input.plaintext.size(), input.nonce.data(),
          input.nonce.size(), input.aad.data(),       input.aad.size(),       tag.data()};
}

class AeadKey : public ::testing::TestWithParam<std::string> {};

TEST_P(AeadKey, SealsAndOpensAsOpenSslFromManyThreads) {
  TestRng rng = TestRng::for_current_test();
  const Bytes key = random_aead_input(rng, GetParam(), 0, 0).key;
  const KeyPtr keyed = new_key(GetParam(), key);
  ASSERT_TRUE(keyed);
  EXPECT_EQ(wc_aead_key_backend(keyed.get()), WC_BACKEND_CPU);

  constexpr size_t kThreads = 4, kMessagesPerThread = 8;
  std::vector<AeadInput> inputs;
  for (size_t i = 0; i < kThreads * kMessagesPerThread; ++i) {
    AeadInput input = random_aead_input(rng, GetParam(), rng.uniform(0, 3000), rng.uniform(0, 40));
    input.key = key;
    inputs.push_back(std::move(input));
  }
  std::vector<Bytes> ciphertexts(inputs.size()), tags(inputs.size(), Bytes(16));
  std::vector<wc_status> sealed(inputs.size(), WC_ERR_INVALID_ARGUMENT);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = t; i < inputs.size(); i += kThreads) {
        ciphertexts[i].resize(inputs[i].plaintext.size());
        const wc_aead_message m = message_of(inputs[i], ciphertexts[i], tags[i]);
        sealed[i] = wc_aead_key_seal(keyed.get(), &m, 1, 16);
      }
    });
  }
  for (std::thread &thread : threads) thread.join();
  for (size_t i = 0; i < inputs.size(); ++i) {
    ASSERT_EQ(sealed[i], WC_OK) << "message " << i;
    const AeadSealed expected = openssl_aead_seal(GetParam(), inputs[i]);
    EXPECT_TRUE(same_bytes(expected.ciphertext, ciphertexts[i])) << "message " << i;
    EXPECT_TRUE(same_bytes(expected.tag, tags[i])) << "message " << i;
  }

  // Opening the whole set as one batch; one forged tag fails alone.
  tags[3][0] ^= 1;
  std::vector<Bytes> opened(inputs.size());
  std::vector<wc_aead_message> messages;
  for (size_t i = 0; i < inputs.size(); ++i) {
    opened[i].assign(inputs[i].plaintext.size(), 0xEE);
    messages.push_back({opened[i].data(), ciphertexts[i].data(), ciphertexts[i].size(), inputs[i].nonce.data(),
                        inputs[i].nonce.size(), inputs[i].aad.data(), inputs[i].aad.size(), tags[i].data()});
  }
  std::vector<wc_status> results(inputs.size());
  EXPECT_EQ(wc_aead_key_open(keyed.get(), results.data(), messages.data(), messages.size(), 16), WC_ERR_AUTH);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i == 3) {
      EXPECT_EQ(results[i], WC_ERR_AUTH);
      EXPECT_EQ(opened[i], Bytes(opened[i].size(), 0)) << "a forged message's output is zeroed";
    } else {
      EXPECT_EQ(results[i], WC_OK) << "message " << i;
      EXPECT_TRUE(same_bytes(inputs[i].plaintext, opened[i])) << "message " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Aeads, AeadKey, ::testing::ValuesIn(aead_names()),
                         [](const auto &param_info) { return identifier_from(param_info.param); });

TEST(AeadKeyErrors, RefusesWhatTheOneShotCallsRefuse) {
  const Bytes key(16, 1);
  const wc_aead *gcm = wc_aead_by_name("aes-128-gcm");
  wc_aead_key *raw = reinterpret_cast<wc_aead_key *>(&raw);
  EXPECT_EQ(wc_aead_key_new(&raw, nullptr, nullptr, key.data(), key.size()), WC_ERR_UNKNOWN_CIPHER);
  EXPECT_EQ(raw, nullptr) << "a failed call leaves no dangling key";
  EXPECT_EQ(wc_aead_key_new(&raw, nullptr, gcm, key.data(), 15), WC_ERR_KEY_LEN);
  EXPECT_EQ(wc_aead_key_new(&raw, nullptr, gcm, nullptr, 16), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_aead_key_new(nullptr, nullptr, gcm, key.data(), 16), WC_ERR_INVALID_ARGUMENT);
  wc_options options;
  wc_options_init(&options);
  options.backend = static_cast<wc_backend>(99);
  EXPECT_EQ(wc_aead_key_new(&raw, &options, gcm, key.data(), 16), WC_ERR_INVALID_ARGUMENT);

  const KeyPtr keyed = new_key("aes-128-gcm", key);
  Bytes data(32, 5), tag(16), nonce(12, 2);
  const wc_aead_message bad_nonce{data.data(), data.data(), data.size(), nonce.data(), 0, nullptr, 0, tag.data()};
  EXPECT_EQ(wc_aead_key_seal(keyed.get(), &bad_nonce, 1, 16), WC_ERR_IV_LEN);
  const wc_aead_message good{data.data(), data.data(), data.size(), nonce.data(), 12, nullptr, 0, tag.data()};
  EXPECT_EQ(wc_aead_key_seal(keyed.get(), &good, 1, 3), WC_ERR_INVALID_ARGUMENT) << "tag too short";
  EXPECT_EQ(wc_aead_key_seal(nullptr, &good, 1, 16), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_aead_key_seal(keyed.get(), nullptr, 1, 16), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_aead_key_seal(keyed.get(), nullptr, 0, 16), WC_OK);
  EXPECT_EQ(data, Bytes(32, 5)) << "nothing was sealed by a refused call";
  wc_aead_key_free(nullptr);
}

TEST(AeadKeyErrors, DeviceCallsAnswerAsTheOneShotOnes) {
  const Bytes key(32, 1);
  Bytes data(64, 5), tag(16), nonce(12, 2);
  int32_t verified = 7;
  const wc_aead_message message{data.data(), data.data(), data.size(), nonce.data(), 12, nullptr, 0, tag.data()};
  const KeyPtr cpu_key = new_key("aes-256-gcm", key, WC_BACKEND_CPU);
  const wc_status without_gpu_aead = gpu_available() ? WC_ERR_BACKEND_UNAVAILABLE : WC_ERR_NO_DEVICE;
  EXPECT_EQ(wc_aead_key_seal_device_async(cpu_key.get(), &message, 1, 16, nullptr), without_gpu_aead);
  EXPECT_EQ(wc_aead_key_open_device_async(cpu_key.get(), &verified, &message, 1, 16, nullptr), without_gpu_aead);
  EXPECT_EQ(wc_aead_key_open_device_async(cpu_key.get(), nullptr, &message, 1, 16, nullptr),
            WC_ERR_INVALID_ARGUMENT) << "opening needs somewhere to write the verdicts";
  if (gpu_available()) return;  // tests/gpu runs the device calls on a device
  wc_options options;
  wc_options_init(&options);
  options.backend = WC_BACKEND_GPU;
  wc_aead_key *raw = nullptr;
  EXPECT_EQ(wc_aead_key_new(&raw, &options, wc_aead_by_name("aes-256-gcm"), key.data(), key.size()),
            WC_ERR_NO_DEVICE);
  EXPECT_EQ(data, Bytes(64, 5));
}

// ---- The batch-overlap rule -----------------------------------------------

class BatchOverlap : public ::testing::Test {
 protected:
  const wc_aead *gcm = wc_aead_by_name("aes-128-gcm");
  const Bytes key = Bytes(16, 1);
  Bytes memory = Bytes(1024, 7);
  Bytes nonce = Bytes(12, 2);
  Bytes tags = Bytes(64, 0);

  wc_aead_message at(size_t out, size_t in, size_t len, uint8_t *tag) {
    return {memory.data() + out, memory.data() + in, len, nonce.data(), nonce.size(), nullptr, 0, tag};
  }
  wc_status seal(const std::vector<wc_aead_message> &messages) {
    return wc_aead_seal_batch(nullptr, gcm, messages.data(), messages.size(), 16, key.data(), key.size());
  }
  wc_status open(const std::vector<wc_aead_message> &messages) {
    std::vector<wc_status> results(messages.size());
    return wc_aead_open_batch(nullptr, gcm, results.data(), messages.data(), messages.size(), 16, key.data(),
                              key.size());
  }
};

TEST_F(BatchOverlap, InPlaceAndDisjointMessagesRun) {
  EXPECT_EQ(seal({at(0, 0, 100, tags.data()), at(100, 100, 100, tags.data() + 16)}), WC_OK);
  EXPECT_EQ(seal({at(0, 200, 100, tags.data()), at(100, 300, 100, tags.data() + 16)}), WC_OK);
  // Opening only reads the tags: two messages may share one tag's bytes
  // (whether they authenticate is not the point here).
  EXPECT_NE(open({at(0, 0, 100, tags.data()), at(100, 100, 100, tags.data())}), WC_ERR_INVALID_ARGUMENT);
}

TEST_F(BatchOverlap, RefusesOutputsThatMeetAnythingElse) {
  const Bytes before = memory;
  // Two outputs sharing bytes.
  EXPECT_EQ(seal({at(0, 200, 100, tags.data()), at(50, 400, 100, tags.data() + 16)}), WC_ERR_INVALID_ARGUMENT);
  // One message's output over another's input.
  EXPECT_EQ(seal({at(0, 200, 100, tags.data()), at(300, 50, 100, tags.data() + 16)}), WC_ERR_INVALID_ARGUMENT);
  // Shifted in-place work: the output starts inside its own input.
  EXPECT_EQ(seal({at(8, 0, 100, tags.data()), at(300, 300, 10, tags.data() + 16)}), WC_ERR_INVALID_ARGUMENT);
  // Two sealed tags in the same place.
  EXPECT_EQ(seal({at(0, 0, 100, tags.data()), at(100, 100, 100, tags.data())}), WC_ERR_INVALID_ARGUMENT);
  // A sealed tag written into a message's output.
  EXPECT_EQ(seal({at(0, 0, 100, memory.data() + 40), at(200, 200, 10, tags.data())}), WC_ERR_INVALID_ARGUMENT);
  // An output over another message's nonce.
  std::vector<wc_aead_message> over_nonce{at(0, 0, 100, tags.data()), at(200, 200, 10, tags.data() + 16)};
  over_nonce[1].nonce = memory.data() + 10;
  EXPECT_EQ(seal(over_nonce), WC_ERR_INVALID_ARGUMENT);
  // Opening: an output over a tag being read.
  EXPECT_EQ(open({at(0, 0, 100, tags.data()), at(200, 200, 100, memory.data() + 20)}), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(memory, before) << "a refused batch changes nothing";
}

// ---- Strided batches (wc_aead_strided) ---------------------------------------

// The exact rule for buffers at one stride, against a check of every pair of
// pieces, over many small layouts; at different strides, the spans.
TEST(StridedOverlap, AgreesWithEveryPairOfPieces) {
  TestRng rng(20261126);
  auto below = [&rng](uint64_t n) { return rng.next() % n; };
  for (int trial = 0; trial < 20000; ++trial) {
    const uint64_t count = 1 + below(6);
    const uint64_t stride = below(24);
    const bool same_stride = below(4) != 0;
    const warpcrypt::StridedRange a{1000 + below(64), stride, below(12)};
    const warpcrypt::StridedRange b{1000 + below(64), same_stride ? stride : below(24), below(12)};
    bool pieces_meet = false;
    for (uint64_t i = 0; i < count; ++i) {
      for (uint64_t j = 0; j < count; ++j) {
        const uint64_t a0 = a.start + i * a.stride, b0 = b.start + j * b.stride;
        pieces_meet = pieces_meet || (a.len != 0 && b.len != 0 && a0 < b0 + b.len && b0 < a0 + a.len);
      }
    }
    const bool found = warpcrypt::strided_ranges_overlap(a, b, count);
    if (a.stride == b.stride || count == 1) {
      ASSERT_EQ(found, pieces_meet) << "trial " << trial;
    } else {
      ASSERT_TRUE(found || !pieces_meet) << "trial " << trial << ": a real overlap must never pass";
    }
  }
  // Far apart in the address space: no wrap in the arithmetic.
  const uintptr_t top = UINTPTR_MAX - 4096;
  EXPECT_FALSE(warpcrypt::strided_ranges_overlap({16, 64, 32}, {top, 64, 32}, 4));
  EXPECT_TRUE(warpcrypt::strided_ranges_overlap({top - 4 * 64, 64, 32}, {top - 64 + 8, 64, 8}, 4));
}

// Merged ranges against a map of the bytes they cover, over many small
// layouts: the same bytes, in address order, no two touching, none empty.
TEST(MergedRanges, CoverTheSameBytesApartAndInOrder) {
  TestRng rng(20261129);
  auto below = [&rng](uint64_t n) { return static_cast<size_t>(rng.next() % n); };
  static uint8_t memory[96];
  for (int trial = 0; trial < 20000; ++trial) {
    std::vector<warpcrypt::ByteRange> ranges;
    bool covered[sizeof memory] = {};
    for (size_t n = below(7); n > 0; --n) {
      const size_t begin = below(80), len = below(16);
      ranges.push_back({memory + begin, memory + begin + len});
      for (size_t i = begin; i < begin + len; ++i) covered[i] = true;
    }
    const std::vector<warpcrypt::ByteRange> merged = warpcrypt::merged_ranges(ranges);
    bool from_merged[sizeof memory] = {};
    for (size_t k = 0; k < merged.size(); ++k) {
      ASSERT_LT(merged[k].begin, merged[k].end) << "trial " << trial;
      if (k > 0) ASSERT_LT(merged[k - 1].end, merged[k].begin) << "trial " << trial << ": touching or out of order";
      for (const uint8_t *p = merged[k].begin; p < merged[k].end; ++p) from_merged[p - memory] = true;
    }
    ASSERT_TRUE(std::equal(std::begin(covered), std::end(covered), std::begin(from_merged))) << "trial " << trial;
  }
}

class StridedBatchRules : public ::testing::Test {
 protected:
  // Records of nonce (12) || message (100) || tag (16), 128 bytes apart.
  Bytes memory = Bytes(8 * 128, 7);
  std::vector<int32_t> verdicts = std::vector<int32_t>(8, 9);
  const KeyPtr key = new_key("chacha20-poly1305", Bytes(32, 1));
  const wc_status without_device = gpu_available() ? WC_ERR_BACKEND_UNAVAILABLE : WC_ERR_NO_DEVICE;

  wc_aead_strided records(size_t count) {
    uint8_t *base = memory.data();
    return {base + 12, base + 12, 100, 128, base, 128, base + 112, 128, count};
  }
  wc_status seal(const wc_aead_strided &batch, size_t tag_len = 16) {
    return wc_aead_key_seal_strided_device_async(key.get(), &batch, tag_len, nullptr);
  }
  wc_status open(const wc_aead_strided &batch, int32_t *verified) {
    return wc_aead_key_open_strided_device_async(key.get(), verified, &batch, 16, nullptr);
  }
};

// What is valid reaches the device (and this key is the CPU's: no GPU AEAD,
// or no device); what is not is refused before.
TEST_F(StridedBatchRules, RecordsSideBySideAndSeparateArraysPass) {
  EXPECT_EQ(seal(records(8)), without_device);
  EXPECT_EQ(open(records(8), verdicts.data()), without_device);
  Bytes in(4 * 64), out(4 * 64), nonces(4 * 12), tags(4 * 16);
  EXPECT_EQ(seal({out.data(), in.data(), 64, 64, nonces.data(), 12, tags.data(), 16, 4}), without_device);
  EXPECT_EQ(seal({out.data(), in.data(), 0, 0, nonces.data(), 12, tags.data(), 16, 4}), without_device)
      << "empty messages";
  EXPECT_EQ(seal({nullptr, nullptr, 0, 0, nullptr, 0, nullptr, 0, 0}), WC_OK) << "nothing to do";
}

TEST_F(StridedBatchRules, RefusesWhatWouldShareBytes) {
  const Bytes before = memory;
  wc_aead_strided batch = records(8);
  batch.stride = 99;  // messages of 100 bytes, 99 apart
  EXPECT_EQ(seal(batch), WC_ERR_INVALID_ARGUMENT);
  batch = records(8);
  batch.tag_stride = 8;
  EXPECT_EQ(seal(batch), WC_ERR_INVALID_ARGUMENT);
  batch = records(8);
  batch.out = batch.out + 1;  // shifted in place: over its own input
  EXPECT_EQ(seal(batch), WC_ERR_INVALID_ARGUMENT);
  batch = records(8);
  batch.tags = memory.data() + 100;  // a sealed tag over its message
  EXPECT_EQ(seal(batch), WC_ERR_INVALID_ARGUMENT);
  Bytes separate(8 * 16);
  batch = records(7);
  batch.len = 120;  // message i's output over message i + 1's nonce
  batch.tags = separate.data();
  batch.tag_stride = 16;
  EXPECT_EQ(seal(batch), WC_ERR_INVALID_ARGUMENT);
  // Opening: the verdicts over a tag being read, or over a message.
  EXPECT_EQ(open(records(8), reinterpret_cast<int32_t *>(memory.data() + 112)), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(open(records(8), reinterpret_cast<int32_t *>(memory.data() + 40)), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(open(records(8), nullptr), WC_ERR_INVALID_ARGUMENT) << "no verdicts";
  // Different strides meet in their spans: refused, though no byte is shared.
  batch = records(8);
  batch.tags = memory.data() + 112;
  batch.tag_stride = 256;
  batch.count = 4;
  EXPECT_EQ(seal(batch), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(memory, before) << "a refused batch changes nothing";
}

TEST_F(StridedBatchRules, RefusesMissingPointersAndImpossibleSizes) {
  wc_aead_strided batch = records(8);
  EXPECT_EQ(wc_aead_key_seal_strided_device_async(nullptr, &batch, 16, nullptr), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_aead_key_seal_strided_device_async(key.get(), nullptr, 16, nullptr), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(seal(batch, 3), WC_ERR_INVALID_ARGUMENT) << "tag too short";
  batch.nonces = nullptr;
  EXPECT_EQ(seal(batch), WC_ERR_INVALID_ARGUMENT);
  batch = records(8);
  batch.in = nullptr;
  EXPECT_EQ(seal(batch), WC_ERR_INVALID_ARGUMENT);
  batch = records(size_t{1} << 31);
  EXPECT_EQ(seal(batch), WC_ERR_INVALID_ARGUMENT) << "more messages than a grid holds";
  batch = records(3);
  batch.stride = SIZE_MAX / 2;  // the last message past the end of the address space
  batch.nonce_stride = batch.tag_stride = batch.stride;
  EXPECT_EQ(seal(batch), WC_ERR_INVALID_ARGUMENT);
  Bytes in(64), nonces(12), tags(16);
  const wc_aead_strided huge{in.data(), in.data(), uint64_t{1} << 40, 0, nonces.data(), 12, tags.data(), 16, 1};
  EXPECT_EQ(seal(huge), WC_ERR_RANGE) << "longer than ChaCha20's counter allows";
}

// ---- HKDF ------------------------------------------------------------------

TEST(Hkdf, Rfc5869Sha256TestCases) {
  struct Case {
    const char *ikm, *salt, *info, *okm;
  };
  // RFC 5869, appendix A.1 to A.3.
  const Case cases[] = {
      {"0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "000102030405060708090a0b0c", "f0f1f2f3f4f5f6f7f8f9",
       "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"},
      {"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f"
       "303132333435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f",
       "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f808182838485868788898a8b8c8d8e8f"
       "909192939495969798999a9b9c9d9e9fa0a1a2a3a4a5a6a7a8a9aaabacadaeaf",
       "b0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
       "e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
       "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c59045a99cac7827271cb41c65e590e09da32"
       "75600c2f09b8367793a9aca3db71cc30c58179ec3e87c14c01d5c1f3434f1d87"},
      {"0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "", "",
       "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"},
  };
  for (const Case &c : cases) {
    const Bytes ikm = from_hex(c.ikm), salt = from_hex(c.salt), info = from_hex(c.info), okm = from_hex(c.okm);
    Bytes out(okm.size(), 0xEE);
    ASSERT_EQ(wc_hkdf("sha256", out.data(), out.size(), ikm.data(), ikm.size(), salt.data(), salt.size(),
                      info.data(), info.size()),
              WC_OK);
    EXPECT_TRUE(same_bytes(okm, out));
  }
}

TEST(Hkdf, RefusesImpossibleLengthsAndUnknownDigests) {
  const Bytes secret(32, 1);
  Bytes out(255 * 32 + 1, 0xEE);
  EXPECT_EQ(wc_hkdf("sha256", out.data(), out.size(), secret.data(), secret.size(), nullptr, 0, nullptr, 0),
            WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(out, Bytes(out.size(), 0)) << "a failed derivation leaves no bytes behind";
  EXPECT_EQ(wc_hkdf("sha256", out.data(), 0, secret.data(), secret.size(), nullptr, 0, nullptr, 0),
            WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_hkdf("no-such-digest", out.data(), 32, secret.data(), secret.size(), nullptr, 0, nullptr, 0),
            WC_ERR_DIGEST);
  EXPECT_EQ(wc_hkdf(nullptr, out.data(), 32, secret.data(), secret.size(), nullptr, 0, nullptr, 0),
            WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_hkdf("sha256", out.data(), 32, nullptr, 4, nullptr, 0, nullptr, 0), WC_ERR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace wctest
