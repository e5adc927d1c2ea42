// The AEAD part of the C API apart from its arithmetic: the table, argument
// checks and their status codes, zeroed outputs on failure, backend rules,
// and the streaming contexts (split equals whole, state errors).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "aead_support.h"
#include "support/cipher_table.h"
#include "support/gpu_modes.h"
#include "support/test_rng.h"
#include "support/warpcrypt_calls.h"

namespace wctest {
namespace {

const wc_aead *aead(const std::string &name) { return wc_aead_by_name(name.c_str()); }

TEST(AeadRegistry, NamesSizesAndLimits) {
  ASSERT_EQ(wc_aead_count(), aead_names().size());
  for (size_t i = 0; i < wc_aead_count(); ++i) {
    EXPECT_EQ(wc_aead_name(wc_aead_at(i)), aead_names()[i]);
    EXPECT_EQ(wc_aead_by_name(aead_names()[i].c_str()), wc_aead_at(i));
  }
  EXPECT_EQ(wc_aead_at(wc_aead_count()), nullptr);
  EXPECT_EQ(wc_aead_by_name("AES-256-GCM"), aead("aes-256-gcm"));
  EXPECT_EQ(wc_aead_by_name("aes-256-ctr"), nullptr);
  EXPECT_EQ(wc_aead_by_name(nullptr), nullptr);
  EXPECT_EQ(wc_cipher_by_name("aes-256-gcm"), nullptr) << "AEADs are not enc ciphers";

  EXPECT_EQ(wc_aead_key_len(aead("aes-128-gcm")), 16u);
  EXPECT_EQ(wc_aead_key_len(aead("aes-192-gcm")), 24u);
  EXPECT_EQ(wc_aead_key_len(aead("aes-256-gcm")), 32u);
  EXPECT_EQ(wc_aead_key_len(aead("chacha20-poly1305")), 32u);
  for (const std::string &name : aead_names()) EXPECT_EQ(wc_aead_nonce_len(aead(name)), 12u);

  EXPECT_TRUE(wc_aead_nonce_len_valid(aead("aes-128-gcm"), 1));
  EXPECT_TRUE(wc_aead_nonce_len_valid(aead("aes-128-gcm"), WC_AEAD_MAX_NONCE_LEN));
  EXPECT_FALSE(wc_aead_nonce_len_valid(aead("aes-128-gcm"), 0));
  EXPECT_FALSE(wc_aead_nonce_len_valid(aead("aes-128-gcm"), WC_AEAD_MAX_NONCE_LEN + 1));
  EXPECT_TRUE(wc_aead_nonce_len_valid(aead("chacha20-poly1305"), 12));
  EXPECT_FALSE(wc_aead_nonce_len_valid(aead("chacha20-poly1305"), 8));

  EXPECT_EQ(wc_aead_max_message_len(aead("aes-256-gcm")), (uint64_t{1} << 36) - 32);
  EXPECT_EQ(wc_aead_max_message_len(aead("chacha20-poly1305")), ((uint64_t{1} << 32) - 1) * 64);
  EXPECT_EQ(wc_aead_key_len(nullptr), 0u);
  EXPECT_STRNE(wc_status_string(WC_ERR_AUTH), "unknown status");
}

// A seal call with one argument changed from a valid set.
struct SealCall {
  const wc_aead *aead = wc_aead_by_name("aes-128-gcm");
  Bytes key = Bytes(16, 1);
  Bytes nonce = Bytes(12, 2);
  Bytes aad = Bytes(5, 3);
  Bytes in = Bytes(40, 4);
  Bytes out = Bytes(40, 0xEE);
  Bytes tag = Bytes(16, 0xEE);
  size_t out_cap = 40;
  size_t tag_len = 16;
  wc_options options = make_options();

  wc_status run() {
    size_t written = 99;
    const wc_status status = wc_aead_seal(&options, aead, out.data(), out_cap, &written, tag.data(), tag_len,
                                          key.data(), key.size(), nonce.data(), nonce.size(), aad.data(), aad.size(),
                                          in.data(), in.size());
    EXPECT_EQ(written, status == WC_OK ? in.size() : 0u);
    return status;
  }
};

TEST(AeadErrors, SealArgumentsGetTheirStatusAndZeroedOutputs) {
  auto expect_status = [](SealCall call, wc_status expected, const char *what) {
    EXPECT_EQ(call.run(), expected) << what;
    EXPECT_TRUE(all_zero(call.out.data(), std::min(call.out_cap, call.out.size()))) << what;
    if (call.tag_len >= WC_AEAD_MIN_TAG_LEN && call.tag_len <= WC_AEAD_MAX_TAG_LEN) {
      EXPECT_TRUE(all_zero(call.tag.data(), call.tag_len)) << what;
    }
  };
  SealCall call;
  EXPECT_EQ(call.run(), WC_OK);

  call = {};
  call.aead = nullptr;
  EXPECT_EQ(call.run(), WC_ERR_UNKNOWN_CIPHER);
  call = {};
  call.key.resize(15);
  expect_status(call, WC_ERR_KEY_LEN, "short key");
  call = {};
  call.nonce.clear();
  expect_status(call, WC_ERR_IV_LEN, "empty GCM nonce");
  call = {};
  call.nonce.resize(WC_AEAD_MAX_NONCE_LEN + 1);
  expect_status(call, WC_ERR_IV_LEN, "GCM nonce too long");
  call = {};
  call.aead = aead("chacha20-poly1305");
  call.key.resize(32);
  call.nonce.resize(16);
  expect_status(call, WC_ERR_IV_LEN, "ChaCha20-Poly1305 nonce not 12 bytes");
  call = {};
  call.tag_len = 3;
  expect_status(call, WC_ERR_INVALID_ARGUMENT, "tag too short");
  call = {};
  call.tag_len = 17;
  call.tag.resize(17);
  expect_status(call, WC_ERR_INVALID_ARGUMENT, "tag too long");
  call = {};
  call.out_cap = 39;
  expect_status(call, WC_ERR_OUTPUT_TOO_SMALL, "output too small");
  call = {};
  call.options.backend = static_cast<wc_backend>(wc_backend_count());
  expect_status(call, WC_ERR_INVALID_ARGUMENT, "no such backend");
  if (!gpu_available()) {
    call = {};
    call.options.backend = WC_BACKEND_GPU;
    expect_status(call, WC_ERR_NO_DEVICE, "GPU without a device");
  }
}

TEST(AeadErrors, OverlapAndNullPointers) {
  const wc_aead *gcm = aead("aes-128-gcm");
  const Bytes key(16, 1), nonce(12, 2);
  Bytes buffer(64, 7), tag(16);
  size_t written = 0;
  // Output starting inside the input: neither in place nor separate.
  EXPECT_EQ(wc_aead_seal(nullptr, gcm, buffer.data() + 1, 40, &written, tag.data(), 16, key.data(), 16, nonce.data(),
                         12, nullptr, 0, buffer.data(), 40),
            WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_aead_seal(nullptr, gcm, buffer.data(), 40, nullptr, tag.data(), 16, key.data(), 16, nonce.data(), 12,
                         nullptr, 0, buffer.data(), 40),
            WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_aead_seal(nullptr, gcm, buffer.data(), 40, &written, nullptr, 16, key.data(), 16, nonce.data(), 12,
                         nullptr, 0, buffer.data(), 40),
            WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_aead_seal(nullptr, gcm, buffer.data(), 40, &written, tag.data(), 16, key.data(), 16, nonce.data(), 12,
                         nullptr, 5, buffer.data(), 40),
            WC_ERR_INVALID_ARGUMENT)
      << "AAD length without AAD";
  EXPECT_EQ(wc_aead_open(nullptr, gcm, buffer.data(), 40, &written, key.data(), 16, nonce.data(), 12, nullptr, 0,
                         buffer.data(), 40, nullptr, 16),
            WC_ERR_INVALID_ARGUMENT)
      << "no tag to check";
  // An empty message with no buffers at all is fine.
  EXPECT_EQ(wc_aead_seal(nullptr, gcm, nullptr, 0, &written, tag.data(), 16, key.data(), 16, nonce.data(), 12,
                         nullptr, 0, nullptr, 0),
            WC_OK);
  EXPECT_EQ(wc_aead_open(nullptr, gcm, nullptr, 0, &written, key.data(), 16, nonce.data(), 12, nullptr, 0, nullptr, 0,
                         tag.data(), 16),
            WC_OK);
}

// wc_aead_find_overlap: the first pair of buffers that breaks the rule,
// written first.
TEST(AeadErrors, OverlapFinderNamesTheBuffers) {
  const Bytes nonce(12, 2);
  Bytes memory(256);
  uint8_t *at = memory.data();
  const auto message = [&](size_t out, size_t in, size_t len, size_t tag) {
    return wc_aead_message{at + out, at + in, len, nonce.data(), nonce.size(), nullptr, 0, at + tag};
  };
  const auto expect_pair = [](const wc_aead_overlap &found, size_t written_message, wc_aead_buffer written,
                              size_t other_message, wc_aead_buffer other) {
    EXPECT_EQ(found.written_message, written_message);
    EXPECT_EQ(found.written, written);
    EXPECT_EQ(found.other_message, other_message);
    EXPECT_EQ(found.other, other);
  };
  wc_aead_overlap found{};

  const wc_aead_message in_place_and_apart[] = {message(0, 0, 32, 32), message(48, 48, 32, 80)};
  EXPECT_EQ(wc_aead_find_overlap(&found, in_place_and_apart, 2, 16, WC_ENCRYPT, nullptr), 0);
  EXPECT_EQ(wc_aead_find_overlap(&found, in_place_and_apart, 2, 16, WC_DECRYPT, nullptr), 0);

  const wc_aead_message two_outputs[] = {message(0, 100, 32, 200), message(16, 140, 32, 220)};
  ASSERT_NE(wc_aead_find_overlap(&found, two_outputs, 2, 16, WC_ENCRYPT, nullptr), 0);
  expect_pair(found, 0, WC_AEAD_BUFFER_OUT, 1, WC_AEAD_BUFFER_OUT);
  EXPECT_NE(wc_aead_find_overlap(nullptr, two_outputs, 2, 16, WC_ENCRYPT, nullptr), 0) << "overlap may be NULL";

  // A tag inside its own ciphertext: written by sealing, read by opening,
  // and wrong either way.
  const wc_aead_message tag_inside[] = {message(0, 100, 32, 16)};
  ASSERT_NE(wc_aead_find_overlap(&found, tag_inside, 1, 16, WC_ENCRYPT, nullptr), 0);
  expect_pair(found, 0, WC_AEAD_BUFFER_OUT, 0, WC_AEAD_BUFFER_TAG);
  ASSERT_NE(wc_aead_find_overlap(&found, tag_inside, 1, 16, WC_DECRYPT, nullptr), 0);
  expect_pair(found, 0, WC_AEAD_BUFFER_OUT, 0, WC_AEAD_BUFFER_TAG);

  // An output that starts inside its own input is not in place.
  const wc_aead_message shifted[] = {message(1, 0, 32, 64)};
  ASSERT_NE(wc_aead_find_overlap(&found, shifted, 1, 16, WC_ENCRYPT, nullptr), 0);
  expect_pair(found, 0, WC_AEAD_BUFFER_OUT, 0, WC_AEAD_BUFFER_IN);

  // One message's output is another's input, nonce or associated data.
  const wc_aead_message crossed[] = {message(0, 100, 32, 200), message(140, 8, 16, 220)};
  ASSERT_NE(wc_aead_find_overlap(&found, crossed, 2, 16, WC_ENCRYPT, nullptr), 0);
  expect_pair(found, 0, WC_AEAD_BUFFER_OUT, 1, WC_AEAD_BUFFER_IN);
  wc_aead_message reads_an_output[] = {message(0, 0, 32, 200), message(100, 100, 32, 220)};
  reads_an_output[1].nonce = at + 4;
  ASSERT_NE(wc_aead_find_overlap(&found, reads_an_output, 2, 16, WC_ENCRYPT, nullptr), 0);
  expect_pair(found, 0, WC_AEAD_BUFFER_OUT, 1, WC_AEAD_BUFFER_NONCE);
  reads_an_output[1].nonce = nonce.data();
  reads_an_output[1].aad = at + 110;
  reads_an_output[1].aad_len = 4;
  ASSERT_NE(wc_aead_find_overlap(&found, reads_an_output, 2, 16, WC_ENCRYPT, nullptr), 0);
  expect_pair(found, 1, WC_AEAD_BUFFER_OUT, 1, WC_AEAD_BUFFER_AAD);

  // A device opening's verdicts are written too: here inside the first
  // message's output, then well away from every buffer.
  const auto *verdicts = reinterpret_cast<const int32_t *>(at + 4);
  ASSERT_NE(wc_aead_find_overlap(&found, in_place_and_apart, 2, 16, WC_DECRYPT, verdicts), 0);
  expect_pair(found, 0, WC_AEAD_BUFFER_OUT, 0, WC_AEAD_BUFFER_VERIFIED);
  EXPECT_EQ(wc_aead_find_overlap(&found, in_place_and_apart, 2, 16, WC_DECRYPT,
                                 reinterpret_cast<const int32_t *>(at + 240)),
            0);

  EXPECT_EQ(wc_aead_find_overlap(&found, nullptr, 0, 16, WC_ENCRYPT, nullptr), 0);
}

// Every call that takes messages applies the rule, one-shot calls and
// single messages included; a batch refused for it is left as it was.
// A buffer's bytes as addresses [first, second), empty where it is null,
// and whether two such spans share a byte: the oracle the overlap tests
// check the finder against.
using AddressSpan = std::pair<uintptr_t, uintptr_t>;
AddressSpan address_span(const void *start, size_t len) {
  const auto from = reinterpret_cast<uintptr_t>(start);
  return {from, start == nullptr ? from : from + len};
}
bool spans_meet(AddressSpan a, AddressSpan b) {
  return a.first < a.second && b.first < b.second && a.first < b.second && b.first < a.second;
}

// The finder against the rule checked pair by pair, on random batches in a
// small arena: laid out in message order (the finder's linear path) and
// shuffled (its sorting path), sealing and opening, with and without
// verdicts. Buffers land on each other often enough that both answers occur.
TEST(AeadErrors, OverlapFinderAgreesWithEveryPairChecked) {
  TestRng rng = TestRng::for_current_test();
  Bytes memory(4096);
  std::vector<int32_t> verdicts(64);
  size_t overlapping = 0;
  for (int round = 0; round < 400; ++round) {
    const size_t count = rng.uniform(1, 12);
    const bool seal = rng.uniform(0, 1) == 0;
    const bool with_verdicts = !seal && rng.uniform(0, 1) == 0;
    const size_t tag_len = 16;
    // Message i's buffers march forward through the arena, so the batch is
    // in message order; a few jump back to land on earlier ones.
    std::vector<wc_aead_message> batch(count);
    size_t cursor = 0;
    for (wc_aead_message &m : batch) {
      const size_t len = rng.uniform(0, 40);
      const size_t spread = rng.uniform(0, 9) == 0 ? 0 : 1;
      const size_t out = spread ? cursor : rng.uniform(0, cursor);
      const size_t in = rng.uniform(0, 3) == 0 ? out : out + len + rng.uniform(0, 8) * spread;
      const size_t tag = in + len + rng.uniform(0, 8);
      const size_t nonce = tag + tag_len;
      m = wc_aead_message{memory.data() + out, memory.data() + in, len, memory.data() + nonce, 12, nullptr, 0,
                          memory.data() + tag};
      cursor = nonce + 12 + rng.uniform(0, 4);
    }
    for (bool shuffled : {false, true}) {
      if (shuffled) {
        for (size_t i = count; i > 1; --i) std::swap(batch[i - 1], batch[rng.uniform(0, i - 1)]);
      }
      const int32_t *verified = with_verdicts ? verdicts.data() : nullptr;
      // Every written range against every other range of the batch.
      bool expected = false;
      for (size_t i = 0; i < count && !expected; ++i) {
        const wc_aead_message &a = batch[i];
        std::vector<AddressSpan> written = {address_span(a.out, a.len)};
        if (seal) written.push_back(address_span(a.tag, tag_len));
        if (verified) written.push_back(address_span(verified + i, sizeof(int32_t)));
        for (size_t j = 0; j < count && !expected; ++j) {
          const wc_aead_message &b = batch[j];
          std::vector<AddressSpan> others = {address_span(b.out, b.len), address_span(b.in, b.len),
                                             address_span(b.nonce, b.nonce_len), address_span(b.tag, tag_len)};
          if (verified) others.push_back(address_span(verified + j, sizeof(int32_t)));
          for (size_t w = 0; w < written.size(); ++w) {
            for (size_t o = 0; o < others.size(); ++o) {
              const bool same_buffer = i == j && ((w == 0 && o == 0) || (w == 1 && seal && o == 3) ||
                                                  (verified && w + 1 == written.size() && o + 1 == others.size()));
              const bool in_place = i == j && w == 0 && o == 1 && a.in == a.out;
              if (!same_buffer && !in_place && spans_meet(written[w], others[o])) expected = true;
            }
          }
        }
      }
      overlapping += expected;
      EXPECT_EQ(wc_aead_find_overlap(nullptr, batch.data(), count, tag_len, seal ? WC_ENCRYPT : WC_DECRYPT, verified) != 0,
                expected)
          << "round " << round << (shuffled ? " shuffled" : " in order");
    }
  }
  EXPECT_GT(overlapping, 50u);
  EXPECT_LT(overlapping, 750u);
}

// A lone message, the one-shot calls' case, takes a shorter path than a
// batch (memory_ranges.cpp): the same rule, against the pair-by-pair check,
// with every buffer (associated data and verdicts included) dropped anywhere
// in a small arena, so that each kind of buffer lands on each other kind.
// Where the rule is broken, the pair named is one that breaks it.
TEST(AeadErrors, LoneMessageOverlapAgreesWithEveryPairChecked) {
  TestRng rng = TestRng::for_current_test();
  Bytes memory(160);
  uint8_t *at = memory.data();
  size_t broken = 0;
  for (int round = 0; round < 3000; ++round) {
    const bool seal = rng.uniform(0, 1) == 0;
    const size_t tag_len = rng.uniform(0, 3) == 0 ? 4 : 16;
    const size_t len = rng.uniform(0, 32);
    const size_t out = rng.uniform(0, 100);
    const size_t in = rng.uniform(0, 3) == 0 ? out : rng.uniform(0, 100);
    const size_t aad_len = rng.uniform(0, 2) == 0 ? 0 : rng.uniform(1, 24);
    wc_aead_message m{at + out, at + in, len, at + rng.uniform(0, 120), 12,
                      aad_len == 0 ? nullptr : at + rng.uniform(0, 120), aad_len, at + rng.uniform(0, 120)};
    const int32_t *verified =
        !seal && rng.uniform(0, 1) == 0 ? reinterpret_cast<const int32_t *>(at + 4 * rng.uniform(0, 35)) : nullptr;

    // Index order: out, tag, verdict, in, nonce, aad.
    const AddressSpan spans[] = {address_span(m.out, len), address_span(m.tag, tag_len),
                                 address_span(verified, sizeof(int32_t)), address_span(m.in, len),
                                 address_span(m.nonce, m.nonce_len), address_span(m.aad, aad_len)};
    const wc_aead_buffer kinds[] = {WC_AEAD_BUFFER_OUT, WC_AEAD_BUFFER_TAG,   WC_AEAD_BUFFER_VERIFIED,
                                    WC_AEAD_BUFFER_IN,  WC_AEAD_BUFFER_NONCE, WC_AEAD_BUFFER_AAD};
    const bool written[] = {true, seal, verified != nullptr, false, false, false};
    const auto breaks = [&](size_t w, size_t o) {
      const bool in_place = w == 0 && o == 3 && m.in == m.out;
      return w != o && written[w] && !in_place && spans_meet(spans[w], spans[o]);
    };
    bool expected = false;
    for (size_t w = 0; w < 6; ++w) {
      for (size_t o = 0; o < 6; ++o) expected = expected || breaks(w, o);
    }
    broken += expected;
    wc_aead_overlap found{};
    const int refused = wc_aead_find_overlap(&found, &m, 1, tag_len, seal ? WC_ENCRYPT : WC_DECRYPT, verified);
    ASSERT_EQ(refused != 0, expected) << "round " << round;
    if (!expected) continue;
    const auto index = [&](wc_aead_buffer kind) {
      return static_cast<size_t>(std::find(std::begin(kinds), std::end(kinds), kind) - std::begin(kinds));
    };
    EXPECT_EQ(found.written_message, 0u);
    EXPECT_EQ(found.other_message, 0u);
    EXPECT_TRUE(breaks(index(found.written), index(found.other)) || breaks(index(found.other), index(found.written)))
        << "round " << round << ": the pair named does not break the rule";
  }
  EXPECT_GT(broken, 600u);
  EXPECT_LT(broken, 2700u);
}

TEST(AeadErrors, EveryCallRefusesOverlappingBuffers) {
  const wc_aead *gcm = aead("aes-128-gcm");
  const Bytes key(16, 1), nonce(12, 2);
  Bytes memory(256, 7);
  uint8_t *at = memory.data();
  const wc_aead_message two_outputs[] = {{at, at + 100, 32, nonce.data(), 12, nullptr, 0, at + 200},
                                         {at + 16, at + 140, 32, nonce.data(), 12, nullptr, 0, at + 220}};
  EXPECT_EQ(wc_aead_seal_batch(nullptr, gcm, two_outputs, 2, 16, key.data(), 16), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_aead_open_batch(nullptr, gcm, nullptr, two_outputs, 2, 16, key.data(), 16), WC_ERR_INVALID_ARGUMENT);
  // The device calls check their arguments before they look for a device.
  EXPECT_EQ(wc_aead_seal_batch_device_async(gcm, two_outputs, 2, 16, key.data(), 16, nullptr),
            WC_ERR_INVALID_ARGUMENT);
  const wc_aead_message in_place{at, at, 32, nonce.data(), 12, nullptr, 0, at + 200};
  auto *verdict_inside = reinterpret_cast<int32_t *>(at + 8);
  EXPECT_EQ(wc_aead_open_batch_device_async(gcm, verdict_inside, &in_place, 1, 16, key.data(), 16, nullptr),
            WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_aead_open_device_async(gcm, at, verdict_inside, key.data(), 16, nonce.data(), 12, nullptr, 0,
                                      at, 32, at + 200, 16, nullptr),
            WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(memory, Bytes(256, 7)) << "nothing was written";

  // One message alone: its tag inside its ciphertext.
  size_t written = 0;
  EXPECT_EQ(wc_aead_seal(nullptr, gcm, at, 64, &written, at + 50, 16, key.data(), 16, nonce.data(), 12, nullptr, 0,
                         at + 100, 64),
            WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_aead_open(nullptr, gcm, at, 64, &written, key.data(), 16, nonce.data(), 12, nullptr, 0, at + 100, 64,
                         at + 50, 16),
            WC_ERR_INVALID_ARGUMENT);
}

// A batch with one bad message is refused as a whole before any work.
TEST(AeadErrors, BatchCheckedBeforeAnyWork) {
  const wc_aead *gcm = aead("aes-256-gcm");
  const Bytes key(32, 9), nonce(12, 1), short_nonce;
  Bytes first(100, 5), second(100, 6), tags(32, 0xEE);
  const wc_aead_message messages[] = {
      {first.data(), first.data(), first.size(), nonce.data(), nonce.size(), nullptr, 0, tags.data()},
      {second.data(), second.data(), second.size(), short_nonce.data(), 0, nullptr, 0, tags.data() + 16}};
  EXPECT_EQ(wc_aead_seal_batch(nullptr, gcm, messages, 2, 16, key.data(), key.size()), WC_ERR_IV_LEN);
  EXPECT_EQ(first, Bytes(100, 5)) << "nothing sealed";
  EXPECT_EQ(wc_aead_seal_batch(nullptr, gcm, nullptr, 0, 16, key.data(), key.size()), WC_OK);
  EXPECT_EQ(wc_aead_seal_batch(nullptr, gcm, nullptr, 1, 16, key.data(), key.size()), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_aead_open_batch(nullptr, nullptr, nullptr, messages, 1, 16, key.data(), key.size()),
            WC_ERR_UNKNOWN_CIPHER);
}

TEST(AeadErrors, DeviceCallsWithoutADevice) {
  if (gpu_available()) GTEST_SKIP() << "a CUDA device is present; tests/gpu covers the device calls";
  const wc_aead *gcm = aead("aes-128-gcm");
  const Bytes key(16, 1), nonce(12, 2);
  Bytes buffer(32), tag(16);
  int32_t verified = 7;
  EXPECT_EQ(wc_aead_seal_device_async(gcm, buffer.data(), tag.data(), 16, key.data(), 16, nonce.data(), 12,
                                      nullptr, 0, buffer.data(), 32, nullptr),
            WC_ERR_NO_DEVICE);
  EXPECT_EQ(wc_aead_open_device_async(gcm, buffer.data(), &verified, key.data(), 16, nonce.data(), 12,
                                      nullptr, 0, buffer.data(), 32, tag.data(), 16, nullptr),
            WC_ERR_NO_DEVICE);
  const wc_aead_message message{buffer.data(), buffer.data(), 32, nonce.data(), 12, nullptr, 0, tag.data()};
  EXPECT_EQ(wc_aead_seal_batch_device_async(gcm, &message, 1, 16, key.data(), 16, nullptr), WC_ERR_NO_DEVICE);
  EXPECT_EQ(wc_aead_open_batch_device_async(gcm, &verified, &message, 1, 16, key.data(), 16, nullptr),
            WC_ERR_NO_DEVICE);
}

// ---- Streaming contexts ----------------------------------------------------

struct CtxDeleter {
  void operator()(wc_aead_ctx *ctx) const { wc_aead_ctx_free(ctx); }
};
using CtxPtr = std::unique_ptr<wc_aead_ctx, CtxDeleter>;

CtxPtr new_ctx(const std::string &name, wc_direction direction, const AeadInput &input,
               const wc_options &options = make_options()) {
  wc_aead_ctx *raw = nullptr;
  EXPECT_EQ(wc_aead_ctx_new(&raw, &options, aead(name), direction, input.key.data(), input.key.size(),
                            input.nonce.data(), input.nonce.size()),
            WC_OK);
  return CtxPtr(raw);
}

// Feeds `in` through `ctx` in the given pieces; AAD first in `aad_pieces`.
Bytes stream_through(wc_aead_ctx *ctx, const Bytes &aad, const std::vector<size_t> &aad_pieces, const Bytes &in,
                     const std::vector<size_t> &pieces) {
  size_t at = 0;
  for (size_t piece : aad_pieces) {
    EXPECT_EQ(wc_aead_ctx_aad(ctx, data_or_dummy(aad) + at, piece), WC_OK);
    at += piece;
  }
  Bytes out(in.size() + 1);
  at = 0;
  for (size_t piece : pieces) {
    size_t written = 0;
    EXPECT_EQ(wc_aead_ctx_update(ctx, out.data() + at, piece, &written, data_or_dummy(in) + at, piece), WC_OK);
    EXPECT_EQ(written, piece);
    at += piece;
  }
  out.resize(in.size());
  return out;
}

std::vector<size_t> random_pieces(TestRng &rng, size_t total) {
  std::vector<size_t> pieces;
  for (size_t left = total; left > 0;) {
    const size_t piece = std::min(left, rng.uniform(0, 3) == 0 ? size_t{0} : rng.uniform(1, 5000));
    pieces.push_back(piece);
    left -= piece;
  }
  return pieces;
}

class AeadStreaming : public ::testing::TestWithParam<std::string> {};

TEST_P(AeadStreaming, SplitEqualsWholeBothWays) {
  TestRng rng = TestRng::for_current_test();
  for (size_t length : {size_t{0}, size_t{15}, size_t{64}, size_t{20000}}) {
    const AeadInput input = random_aead_input(rng, GetParam(), length, rng.uniform(0, 100));
    const AeadSealed whole = openssl_aead_seal(GetParam(), input);

    const CtxPtr sealer = new_ctx(GetParam(), WC_ENCRYPT, input);
    EXPECT_EQ(wc_aead_ctx_backend(sealer.get()), WC_BACKEND_CPU);
    const Bytes ciphertext = stream_through(sealer.get(), input.aad, random_pieces(rng, input.aad.size()),
                                            input.plaintext, random_pieces(rng, length));
    Bytes tag(16);
    ASSERT_EQ(wc_aead_ctx_seal_final(sealer.get(), tag.data(), tag.size()), WC_OK);
    EXPECT_TRUE(same_bytes(whole.ciphertext, ciphertext));
    EXPECT_TRUE(same_bytes(whole.tag, tag));

    const CtxPtr opener = new_ctx(GetParam(), WC_DECRYPT, input);
    const Bytes plaintext = stream_through(opener.get(), input.aad, random_pieces(rng, input.aad.size()),
                                           whole.ciphertext, random_pieces(rng, length));
    EXPECT_EQ(wc_aead_ctx_open_final(opener.get(), whole.tag.data(), whole.tag.size()), WC_OK);
    EXPECT_TRUE(same_bytes(input.plaintext, plaintext));

    const CtxPtr forged = new_ctx(GetParam(), WC_DECRYPT, input);
    stream_through(forged.get(), input.aad, {input.aad.size()}, whole.ciphertext, {length});
    const Bytes bad_tag = with_bit_flipped(whole.tag, 5);
    EXPECT_EQ(wc_aead_ctx_open_final(forged.get(), bad_tag.data(), bad_tag.size()), WC_ERR_AUTH);
  }
}

TEST_P(AeadStreaming, StateErrors) {
  TestRng rng = TestRng::for_current_test();
  const AeadInput input = random_aead_input(rng, GetParam(), 32, 8);
  Bytes out(32), tag(16);
  size_t written = 0;

  CtxPtr ctx = new_ctx(GetParam(), WC_ENCRYPT, input);
  ASSERT_EQ(wc_aead_ctx_update(ctx.get(), out.data(), 32, &written, input.plaintext.data(), 32), WC_OK);
  EXPECT_EQ(wc_aead_ctx_aad(ctx.get(), input.aad.data(), input.aad.size()), WC_ERR_CONTEXT_STATE)
      << "AAD after the message started";
  EXPECT_EQ(wc_aead_ctx_seal_final(ctx.get(), tag.data(), 16), WC_ERR_CONTEXT_STATE) << "dead after an error";

  ctx = new_ctx(GetParam(), WC_ENCRYPT, input);
  EXPECT_EQ(wc_aead_ctx_update(ctx.get(), out.data(), 31, &written, input.plaintext.data(), 32),
            WC_ERR_OUTPUT_TOO_SMALL);
  EXPECT_TRUE(all_zero(out.data(), 31));

  ctx = new_ctx(GetParam(), WC_ENCRYPT, input);
  EXPECT_EQ(wc_aead_ctx_open_final(ctx.get(), tag.data(), 16), WC_ERR_CONTEXT_STATE) << "open_final when sealing";
  ctx = new_ctx(GetParam(), WC_ENCRYPT, input);
  EXPECT_EQ(wc_aead_ctx_seal_final(ctx.get(), tag.data(), 2), WC_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(wc_aead_ctx_seal_final(ctx.get(), tag.data(), 16), WC_OK);
  EXPECT_EQ(wc_aead_ctx_update(ctx.get(), out.data(), 32, &written, input.plaintext.data(), 32), WC_ERR_CONTEXT_STATE)
      << "update after final";

  wc_aead_ctx *raw = nullptr;
  const wc_options gpu = make_options(0, WC_BACKEND_GPU);
  EXPECT_EQ(wc_aead_ctx_new(&raw, &gpu, aead(GetParam()), WC_ENCRYPT, input.key.data(), input.key.size(),
                            input.nonce.data(), input.nonce.size()),
            WC_ERR_BACKEND_UNAVAILABLE)
      << "streaming contexts run on the CPU";
  EXPECT_EQ(raw, nullptr);
  EXPECT_EQ(wc_aead_ctx_new(&raw, nullptr, aead(GetParam()), WC_ENCRYPT, input.key.data(), input.key.size() - 1,
                            input.nonce.data(), input.nonce.size()),
            WC_ERR_KEY_LEN);
  wc_aead_ctx_free(nullptr);
}

INSTANTIATE_TEST_SUITE_P(Aeads, AeadStreaming, ::testing::ValuesIn(aead_names()),
                         [](const auto &param_info) { return identifier_from(param_info.param); });

}  // namespace
}  // namespace wctest
