// The engine's staging of pageable host memory for a device AEAD
// (engine/staged_aead.h) on its transfer lanes, on the CPU: a toy AEAD
// stands for the device's, and host memory for the lanes' device buffers
// (HostTransfer), so that what is checked is the staging alone (groups of a
// window, pieces of long messages, the last piece after the others, results
// copied back, verdicts and failures, every byte written marked for the
// wipe). The real device AEAD and lanes are checked against OpenSSL on the
// GPU (tests/gpu/aead_device_test.cu).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "engine/staged_aead.h"
#include "support/host_transfer.h"
#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::engine {
namespace {

using wctest::HostTransfer;

constexpr size_t kTagLen = 16;
// The toy's pieces: not a power of two, so that cuts fall mid-window.
constexpr uint64_t kToyPieceBytes = (uint64_t{3} << 20) + 48;

// The toy works eight bytes at a time where it can: byte by byte, its
// 40 MiB a test were most of the staging tests' time under the sanitizers,
// which check every access. Its keystream is a word per eight bytes of the
// message, taken little-endian where a piece starts or ends mid-word.
static_assert(std::endian::native == std::endian::little);

uint64_t keystream_word(const wc_aead_message &m, uint64_t word) {
  return (word + 1) * 0x9E3779B97F4A7C15ull ^ m.nonce[0] * 0x0101010101010101ull;
}

// out[i] = in[i] ^ the keystream at message byte `from` + i.
void toy_crypt(const wc_aead_message &m, uint64_t from, const uint8_t *in, uint8_t *out, size_t len) {
  size_t i = 0;
  for (; i < len && (from + i) % 8 != 0; ++i) {
    out[i] = static_cast<uint8_t>(in[i] ^ keystream_word(m, (from + i) / 8) >> 8 * ((from + i) % 8));
  }
  for (; i + 8 <= len; i += 8) {
    uint64_t word;
    std::memcpy(&word, in + i, 8);
    word ^= keystream_word(m, (from + i) / 8);
    std::memcpy(out + i, &word, 8);
  }
  for (; i < len; ++i) {
    out[i] = static_cast<uint8_t>(in[i] ^ keystream_word(m, (from + i) / 8) >> 8 * ((from + i) % 8));
  }
}

// A tag over the plaintext and the nonce's first byte.
void toy_tag(const wc_aead_message &m, const uint8_t *plaintext, uint8_t *tag) {
  uint64_t h = 1469598103934665603ull ^ m.nonce[0];
  size_t i = 0;
  for (; i + 8 <= m.len; i += 8) {
    uint64_t word;
    std::memcpy(&word, plaintext + i, 8);
    h = (h ^ word) * 1099511628211ull;
  }
  for (; i < m.len; ++i) h = (h ^ plaintext[i]) * 1099511628211ull;
  for (size_t b = 0; b < kTagLen; ++b) tag[b] = static_cast<uint8_t>(h >> (8 * (b % 8)) ^ b);
}

// The device of the lane this thread leased last: a lane leases its
// buffers and runs its work on one thread.
thread_local int t_lane_device = -1;

// What the toy saw of the staging.
struct Seen {
  std::atomic<size_t> whole_calls{0};
  std::atomic<size_t> pieces_run{0};
  std::atomic<bool> caller_memory{false};  // a whole call on the caller's buffers
  std::atomic<bool> last_too_early{false};
  std::vector<const uint8_t *> caller_buffers;
  size_t fail_piece = SIZE_MAX;  // a piece that fails with WC_ERR_DEVICE
  std::set<int> piece_devices;   // the devices pieces ran on
  std::atomic<bool> off_lane_device{false};  // a piece on another device than its lane's
  // What the toy was handed: the staging's windows.
  std::mutex mutex;
  std::vector<std::pair<const uint8_t *, size_t>> staged;
  void saw(const uint8_t *bytes, size_t len) {
    const std::lock_guard lock(mutex);
    staged.emplace_back(bytes, len);
  }
  void ran_on(int device) {
    const std::lock_guard lock(mutex);
    piece_devices.insert(device);
  }
};

class ToyPieces final : public AeadPieces {
 public:
  ToyPieces(const wc_aead_message &m, bool seal, Seen &seen) : m_(m), seal_(seal), seen_(seen), plaintext_(m.len) {
    for (uint64_t at = 0; at == 0 || at < m.len; at += kToyPieceBytes) cuts_.push_back(at);
  }
  const std::vector<uint64_t> &cuts() const override { return cuts_; }

  wc_status run(size_t k, int device, const uint8_t *in, uint8_t *out) override {
    if (k == seen_.fail_piece) return WC_ERR_DEVICE;
    seen_.ran_on(device);
    if (device != t_lane_device) seen_.off_lane_device = true;
    seen_.saw(in, static_cast<size_t>((k + 1 == cuts_.size() ? m_.len : cuts_[k + 1]) - cuts_[k]));
    const bool last = k + 1 == cuts_.size();
    if (last && done_.load() != cuts_.size() - 1) seen_.last_too_early = true;
    const uint64_t begin = cuts_[k];
    const uint64_t end = last ? m_.len : cuts_[k + 1];
    const size_t len = static_cast<size_t>(end - begin);
    uint8_t *plain = plaintext_.data() + begin;
    if (seal_) {
      std::memcpy(plain, in, len);
      toy_crypt(m_, begin, plain, out, len);
    } else {
      toy_crypt(m_, begin, in, plain, len);
      std::memcpy(out, plain, len);
    }
    ++seen_.pieces_run;
    if (!last) {
      ++done_;
      return WC_OK;
    }
    uint8_t tag[kTagLen];
    toy_tag(m_, plaintext_.data(), tag);
    if (seal_) {
      std::memcpy(m_.tag, tag, kTagLen);
      return WC_OK;
    }
    return std::memcmp(tag, m_.tag, kTagLen) == 0 ? WC_OK : WC_ERR_AUTH;
  }

 private:
  wc_aead_message m_;
  bool seal_;
  Seen &seen_;
  std::vector<uint64_t> cuts_;
  std::vector<uint8_t> plaintext_;
  std::atomic<size_t> done_{0};
};

wc_status lease_host_transfer(std::unique_ptr<TransferBuffers> *out, int device, size_t device_bytes,
                              size_t window_bytes) {
  t_lane_device = device;
  *out = std::make_unique<HostTransfer>(device_bytes, window_bytes);
  return WC_OK;
}

// The two ways host memory goes: staged through the window (pageable) or
// copied straight (page-locked).
const TransferBackend kStagedHost{lease_host_transfer, [](const void *) { return false; }};
const TransferBackend kDirectHost{lease_host_transfer, [](const void *) { return true; }};

class ToyAead final : public AeadCipher {
 public:
  explicit ToyAead(Seen &seen) : seen_(seen) {}
  wc_backend backend() const override { return WC_BACKEND_GPU; }

  wc_status seal(std::span<const wc_aead_message> messages, size_t tag_len) const override {
    note(messages);
    return seal_all(messages, tag_len);
  }

  wc_status open(std::span<const wc_aead_message> messages, size_t tag_len, wc_status *results) const override {
    note(messages);
    return open_all(messages, tag_len, results);
  }

  // The lanes' device buffers are host memory here (HostTransfer): the
  // toy's kernels run as they are queued.
  wc_status queue_device(std::span<const wc_aead_message> messages, size_t tag_len, bool seal, int32_t *verified,
                         wc_cuda_stream, std::span<uint8_t>) const override {
    note(messages);
    if (seal) return seal_all(messages, tag_len);
    std::vector<wc_status> results(messages.size());
    const wc_status status = open_all(messages, tag_len, results.data());
    for (size_t i = 0; i < messages.size(); ++i) verified[i] = results[i] == WC_OK ? 1 : 0;
    return status == WC_ERR_AUTH ? WC_OK : status;
  }

  // Its own cut, whatever the piece size asked: a backend's unit may be
  // larger.
  wc_status pieces(std::unique_ptr<AeadPieces> *out, const wc_aead_message &message, size_t tag_len, bool seal,
                   size_t piece_bytes) const override {
    EXPECT_EQ(tag_len, kTagLen);
    EXPECT_GE(piece_bytes, size_t{1} << 20);
    *out = std::make_unique<ToyPieces>(message, seal, seen_);
    return WC_OK;
  }

 private:
  static wc_status seal_all(std::span<const wc_aead_message> messages, size_t tag_len) {
    for (const wc_aead_message &m : messages) {
      std::vector<uint8_t> plaintext(m.in, m.in + m.len);
      toy_crypt(m, 0, plaintext.data(), m.out, m.len);
      uint8_t tag[kTagLen];
      toy_tag(m, plaintext.data(), tag);
      std::memcpy(m.tag, tag, tag_len);
    }
    return WC_OK;
  }

  static wc_status open_all(std::span<const wc_aead_message> messages, size_t tag_len, wc_status *results) {
    for (size_t i = 0; i < messages.size(); ++i) {
      const wc_aead_message &m = messages[i];
      toy_crypt(m, 0, m.in, m.out, m.len);
      uint8_t tag[kTagLen];
      toy_tag(m, m.out, tag);
      results[i] = std::memcmp(tag, m.tag, tag_len) == 0 ? WC_OK : WC_ERR_AUTH;
    }
    return combined_open_status({results, messages.size()});
  }

  void note(std::span<const wc_aead_message> messages) const {
    ++seen_.whole_calls;
    for (const wc_aead_message &m : messages) {
      seen_.saw(m.in, m.len);
      for (const uint8_t *caller : seen_.caller_buffers) {
        if (m.in == caller || m.out == caller) seen_.caller_memory = true;
      }
    }
  }
  Seen &seen_;
};

// Messages of `lengths`, each with its own buffers and nonce.
struct Batch {
  std::vector<std::vector<uint8_t>> in, out, tags;
  std::vector<std::array<uint8_t, 12>> nonces;
  std::vector<wc_aead_message> messages;

  explicit Batch(const std::vector<size_t> &lengths) {
    const size_t n = lengths.size();
    in.resize(n), out.resize(n), tags.resize(n), nonces.resize(n);
    for (size_t i = 0; i < n; ++i) {
      in[i].resize(lengths[i]);
      for (size_t b = 0; b < lengths[i]; ++b) in[i][b] = static_cast<uint8_t>(b * 7 + i);
      out[i].assign(lengths[i], 0xEE);
      tags[i].assign(kTagLen, 0);
      nonces[i].fill(static_cast<uint8_t>(i * 3 + 1));
    }
    for (size_t i = 0; i < n; ++i) {
      messages.push_back(wc_aead_message{out[i].data(), in[i].data(), lengths[i], nonces[i].data(), 12, nullptr, 0,
                                         tags[i].data()});
    }
  }
  // The messages with input and output swapped: to open what was sealed.
  std::vector<wc_aead_message> reversed() {
    std::vector<wc_aead_message> back = messages;
    for (size_t i = 0; i < back.size(); ++i) {
      back[i].in = out[i].data();
      back[i].out = in[i].data();
    }
    return back;
  }
};

std::vector<size_t> mixed_lengths() {
  std::vector<size_t> lengths = {0, 1, 15, 16, 17, 1000, 65536};
  for (size_t i = 0; i < 300; ++i) lengths.push_back(40000 + 13 * i);  // about 12 MiB: several windows
  lengths.push_back((size_t{8} << 20) + 1);                             // a window's worth and a byte: pieces
  lengths.push_back(33);
  lengths.push_back(3 * kToyPieceBytes);  // pieces ending on a cut
  lengths.push_back((size_t{20} << 20) + 5);
  return lengths;
}

// Lanes, and whether the memory counts as page-locked.
class StagedAeadTest : public ::testing::TestWithParam<std::tuple<unsigned, bool>> {
 protected:
  std::unique_ptr<AeadCipher> staged(Seen &seen) const {
    const auto [lanes, direct] = GetParam();
    return stage_host_memory(std::make_unique<ToyAead>(seen), {0}, lanes, direct ? kDirectHost : kStagedHost);
  }
};

TEST_P(StagedAeadTest, SealsAsTheDeviceAeadDoesAndOpensBack) {
  const std::vector<size_t> lengths = mixed_lengths();
  Batch expected(lengths);
  Seen direct_seen;
  ASSERT_EQ(ToyAead(direct_seen).seal(expected.messages, kTagLen), WC_OK);

  Batch batch(lengths);
  Seen seen;
  for (const auto &buffer : batch.in) seen.caller_buffers.push_back(buffer.data());
  for (const auto &buffer : batch.out) seen.caller_buffers.push_back(buffer.data());
  const auto staged = this->staged(seen);
  ASSERT_EQ(staged->seal(batch.messages, kTagLen), WC_OK);
  EXPECT_FALSE(seen.caller_memory) << "a whole-message call reached the caller's buffers unstaged";
  EXPECT_FALSE(seen.last_too_early) << "a last piece ran before its message's other pieces";
  EXPECT_GE(seen.whole_calls.load(), 2u) << "12 MiB of short messages should take several windows";
  // 8 MiB + 1 and 20 MiB + 5 take 3 and 7 pieces, 3 * kToyPieceBytes 3.
  EXPECT_EQ(seen.pieces_run.load(), 13u);
  for (size_t i = 0; i < lengths.size(); ++i) {
    ASSERT_EQ(batch.out[i], expected.out[i]) << "message " << i << " of " << lengths[i] << " bytes";
    ASSERT_EQ(batch.tags[i], expected.tags[i]) << "message " << i;
  }

  for (auto &plain : batch.in) std::fill(plain.begin(), plain.end(), 0);
  std::vector<wc_status> results(lengths.size(), WC_ERR_DEVICE);
  ASSERT_EQ(staged->open(batch.reversed(), kTagLen, results.data()), WC_OK);
  for (size_t i = 0; i < lengths.size(); ++i) {
    EXPECT_EQ(results[i], WC_OK) << "message " << i;
    ASSERT_EQ(batch.in[i], expected.in[i]) << "message " << i;
  }
}

TEST_P(StagedAeadTest, ChangedMessagesFailAloneAndTheRestOpen) {
  const std::vector<size_t> lengths = mixed_lengths();
  Batch batch(lengths);
  Seen seen;
  const auto staged = this->staged(seen);
  ASSERT_EQ(staged->seal(batch.messages, kTagLen), WC_OK);
  const Batch expected(lengths);
  const size_t changed_short = 100;
  const size_t changed_long = lengths.size() - 1;  // 20 MiB + 5, in pieces
  const size_t changed_tag = 3;
  batch.out[changed_short][7] ^= 1;
  batch.out[changed_long][(size_t{9} << 20) + 3] ^= 0x80;  // in its fourth piece
  batch.tags[changed_tag][15] ^= 1;
  std::vector<wc_status> results(lengths.size(), WC_ERR_DEVICE);
  EXPECT_EQ(staged->open(batch.reversed(), kTagLen, results.data()), WC_ERR_AUTH);
  for (size_t i = 0; i < lengths.size(); ++i) {
    const bool changed = i == changed_short || i == changed_long || i == changed_tag;
    EXPECT_EQ(results[i], changed ? WC_ERR_AUTH : WC_OK) << "message " << i;
    if (!changed) {
      ASSERT_EQ(batch.in[i], expected.in[i]) << "message " << i;
    }
  }
  EXPECT_FALSE(seen.last_too_early);
}

TEST_P(StagedAeadTest, AFailingPieceFailsTheCall) {
  Batch batch({1000, (size_t{20} << 20) + 5, 2000});
  Seen seen;
  seen.fail_piece = 2;
  const auto staged = this->staged(seen);
  EXPECT_EQ(staged->seal(batch.messages, kTagLen), WC_ERR_DEVICE);
  std::vector<wc_status> results(3, WC_OK);
  EXPECT_EQ(staged->open(batch.reversed(), kTagLen, results.data()), WC_ERR_DEVICE);
  EXPECT_EQ(results[1], WC_ERR_DEVICE);
}

// A long message's pieces run on the devices of the lanes that take them,
// lane i on device i % 2: which lanes get which pieces is the threads'
// race, so only that each piece runs on its own lane's device is certain.
TEST_P(StagedAeadTest, PiecesRunOnTheirLanesDevices) {
  const auto [lanes, direct] = GetParam();
  Batch batch({size_t{40} << 20});
  Seen seen;
  const auto staged =
      stage_host_memory(std::make_unique<ToyAead>(seen), {0, 1}, lanes, direct ? kDirectHost : kStagedHost);
  ASSERT_EQ(staged->seal(batch.messages, kTagLen), WC_OK);
  EXPECT_FALSE(seen.off_lane_device);
  EXPECT_FALSE(seen.piece_devices.empty());
  const std::set<int> devices{0, 1};
  EXPECT_TRUE(std::includes(devices.begin(), devices.end(), seen.piece_devices.begin(), seen.piece_devices.end()));
  Batch expected({size_t{40} << 20});
  Seen direct_seen;
  ASSERT_EQ(ToyAead(direct_seen).seal(expected.messages, kTagLen), WC_OK);
  EXPECT_EQ(batch.out[0], expected.out[0]);
  EXPECT_EQ(batch.tags[0], expected.tags[0]);
}

std::string lanes_name(const ::testing::TestParamInfo<std::tuple<unsigned, bool>> &info) {
  return std::to_string(std::get<0>(info.param)) + "_lanes_" + (std::get<1>(info.param) ? "page_locked" : "pageable");
}

// What the lanes write into their windows is plaintext: the pool wipes
// what a lane marked as used when it gives the window back, so every byte
// written must lie within the mark (HostTransfer checks).
TEST_P(StagedAeadTest, EveryByteWrittenToAWindowIsMarkedForTheWipe) {
  HostTransfer::reset_written_past_mark();
  Batch batch(mixed_lengths());
  Seen seen;
  const auto staged = this->staged(seen);
  ASSERT_EQ(staged->seal(batch.messages, kTagLen), WC_OK);
  std::vector<wc_status> results(batch.messages.size());
  ASSERT_EQ(staged->open(batch.reversed(), kTagLen, results.data()), WC_OK);
  EXPECT_FALSE(HostTransfer::written_past_mark());
}

// Pageable memory on 1, 4 and 16 staging lanes; page-locked memory runs on
// its own four lanes a device whatever the staging lanes, so once.
INSTANTIATE_TEST_SUITE_P(Lanes, StagedAeadTest,
                         ::testing::Values(std::tuple{1u, false}, std::tuple{4u, false}, std::tuple{16u, false},
                                           std::tuple{4u, true}),
                         lanes_name);

}  // namespace
}  // namespace warpcrypt::engine
