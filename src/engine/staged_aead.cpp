#include "engine/staged_aead.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "core/backend_tables.h"
#include "core/cpu_budget.h"
#include "core/memory_ranges.h"
#include "core/thread_pool.h"
#include "engine/transfer_lane.h"

namespace warpcrypt::engine {
namespace {

// What a window holds at most, unless one piece is longer: a group of short
// messages staged from pageable memory (their bytes and tags), or one piece
// of a long one, which the device AEAD cuts to fit its own lanes (8 MiB, the
// size measured best for them). A group of page-locked messages goes up as
// it is, its inputs and outputs apart: a lane's device buffer holds twice
// the window. A group has at most kGroupMessages messages, whose verdicts
// the window takes back, and whose descriptors the lane's scratch holds
// (some 100 bytes each).
constexpr size_t kWindowBytes = size_t{8} << 20;
constexpr size_t kGroupMessages = 8192;
constexpr size_t kVerdictBytes = kGroupMessages * sizeof(int32_t);
constexpr size_t kLaneWindowBytes = kWindowBytes + kVerdictBytes;
constexpr size_t kLaneDeviceBytes = 2 * kWindowBytes + kVerdictBytes;
constexpr size_t kScratchBytes = size_t{1} << 20;
// Page-locked memory needs no copying by the cores, only lanes enough to
// keep the device busy: four per device. Measured on the H100 from pinned
// memory (docs/lab-notes/performance-history.md), four lanes beat six and
// eight.
constexpr unsigned kDirectLanesPerDevice = 4;

size_t round_up16(size_t n) { return (n + 15) / 16 * 16; }

// A message's room in a group: staged, its bytes in the window from a
// 16-byte boundary, where the device's loads stay aligned, and 16 bytes of
// tag; page-locked, in the device buffer its input, output and tag, each in
// a range that may start 15 bytes on (HostRanges).
size_t window_bytes(const wc_aead_message &m) { return round_up16(m.len) + 16; }
size_t direct_bytes(const wc_aead_message &m) { return 2 * m.len + 3 * 15 + 16; }

// Page-locked host memory a group's kernels reach by copies straight from
// or to it: the messages' ranges of one direction (read by the kernels, or
// written), merged where they touch, so that a window of a file's chunks is
// one copy. Each is placed in the lane's device buffer at its host
// address's offset modulo 16, so the kernels' aligned loads stay aligned.
class HostRanges {
 public:
  void add(const uint8_t *host, size_t len) { added_.push_back({host, host + len}); }

  // Merges the ranges (merged_ranges) and places them from device offset
  // `at` on; returns the offset past the last.
  size_t place(size_t at) {
    for (const ByteRange &range : merged_ranges(std::move(added_))) {
      at += (reinterpret_cast<uintptr_t>(range.begin) - at) % 16;
      ranges_.push_back({range.begin, range.end, at});
      at += static_cast<size_t>(range.end - range.begin);
    }
    return at;
  }

  // Once placed: where host byte `host` of a range lies in `device`.
  uint8_t *on_device(const uint8_t *host, uint8_t *device) const {
    auto after = std::upper_bound(ranges_.begin(), ranges_.end(), host,
                                  [](const uint8_t *p, const Range &range) { return p < range.begin; });
    const Range &range = *(after - 1);
    return device + range.at + (host - range.begin);
  }

  wc_status upload(TransferLane &lane) const {
    for (const Range &range : ranges_) {
      const wc_status status = lane.upload(range.at, range.begin, range.len());
      if (status != WC_OK) return status;
    }
    return WC_OK;
  }

  // Only a written direction's ranges come back.
  wc_status download(TransferLane &lane) const {
    for (const Range &range : ranges_) {
      const wc_status status = lane.download(const_cast<uint8_t *>(range.begin), range.at, range.len());
      if (status != WC_OK) return status;
    }
    return WC_OK;
  }

 private:
  struct Range {
    const uint8_t *begin;
    const uint8_t *end;
    size_t at;  // its place in the device buffer
    size_t len() const { return static_cast<size_t>(end - begin); }
  };

  std::vector<ByteRange> added_;
  std::vector<Range> ranges_;  // once placed
};

// What one lane takes at a time: `count` whole messages from `first`, or
// where count is 0 piece `piece` of message `first`.
struct Work {
  size_t first = 0;
  size_t count = 0;
  size_t piece = 0;
};

class StagedAead final : public AeadCipher {
 public:
  StagedAead(std::unique_ptr<AeadCipher> device_aead, std::vector<int> devices, unsigned lanes,
             const TransferBackend &backend)
      : device_(std::move(device_aead)), devices_(std::move(devices)), lanes_(std::max(1u, lanes)),
        copy_workers_(std::max(1u, usable_cpus() / lanes_)), backend_(backend) {}

  wc_backend backend() const override { return device_->backend(); }

  wc_status seal(std::span<const wc_aead_message> messages, size_t tag_len) const override {
    return run(messages, tag_len, true, nullptr);
  }

  wc_status open(std::span<const wc_aead_message> messages, size_t tag_len, wc_status *results) const override {
    return run(messages, tag_len, false, results);
  }

  wc_status pieces(std::unique_ptr<AeadPieces> *out, const wc_aead_message &message, size_t tag_len, bool seal,
                   size_t piece_bytes) const override {
    return device_->pieces(out, message, tag_len, seal, piece_bytes);
  }

  wc_status queue_device(std::span<const wc_aead_message> messages, size_t tag_len, bool seal, int32_t *verified,
                         wc_cuda_stream stream, std::span<uint8_t> scratch) const override {
    return device_->queue_device(messages, tag_len, seal, verified, stream, scratch);
  }

  wc_status queue_device_strided(const wc_aead_strided &batch, size_t tag_len, bool seal, int32_t *verified,
                                 wc_cuda_stream stream) const override {
    return device_->queue_device_strided(batch, tag_len, seal, verified, stream);
  }

 private:
  // Whether the device can copy the call's data straight from and to where
  // it is. Tags are not asked: the device AEAD copies their few bytes from
  // wherever they are, and staging a call for them would copy all of its
  // data. The driver is asked once per run of touching buffers, tags
  // included (a GPU lane's window of chunks and tags is one or two runs, not
  // a call per chunk), about the first input or output in it: were a run
  // two allocations, one pageable, the device AEAD would still copy it
  // right, only slower.
  bool page_locked(std::span<const wc_aead_message> messages, size_t tag_len) const {
    std::vector<ByteRange> buffers;
    buffers.reserve(3 * messages.size());
    for (const wc_aead_message &m : messages) {
      buffers.push_back({m.in, m.in + m.len});
      buffers.push_back({m.out, m.out + m.len});
      buffers.push_back({m.tag, m.tag + tag_len});
    }
    const std::vector<ByteRange> runs = merged_ranges(std::move(buffers));
    auto run_of = [&runs](const uint8_t *data) {
      const auto after = std::upper_bound(runs.begin(), runs.end(), data,
                                          [](const uint8_t *p, const ByteRange &run) { return p < run.begin; });
      return static_cast<size_t>(after - runs.begin()) - 1;
    };
    std::vector<bool> asked(runs.size());
    for (const wc_aead_message &m : messages) {
      if (m.len == 0) continue;
      for (const uint8_t *data : {m.in, static_cast<const uint8_t *>(m.out)}) {
        const size_t run = run_of(data);
        if (asked[run]) continue;
        asked[run] = true;
        if (!backend_.page_locked(data)) return false;
      }
    }
    return true;
  }

  // The call's work: groups of messages a lane holds, and the pieces of
  // longer ones, every last piece in a second round, after its message's
  // other pieces. Then each round on the lanes, each lane taking the next
  // work in turn, on the transfer lane it holds for the round. Page-locked
  // memory goes up and down as it is, pageable memory through the lane's
  // window.
  wc_status run(std::span<const wc_aead_message> messages, size_t tag_len, bool seal, wc_status *results) const {
    if (devices_.empty()) return WC_ERR_NO_DEVICE;
    const bool direct = page_locked(messages, tag_len);
    const auto room = direct ? direct_bytes : window_bytes;
    const size_t budget = direct ? 2 * kWindowBytes : kWindowBytes;
    const size_t most_lanes = direct ? kDirectLanesPerDevice * devices_.size() : lanes_;
    std::vector<std::unique_ptr<AeadPieces>> pieces(messages.size());
    std::vector<Work> rounds[2];
    for (size_t first = 0; first < messages.size();) {
      if (room(messages[first]) > budget) {
        const wc_status status =
            device_->pieces(&pieces[first], messages[first], tag_len, seal, piece_bytes(messages[first].len, most_lanes));
        if (status != WC_OK) return status;
        const size_t count = pieces[first]->cuts().size();
        for (size_t k = 0; k + 1 < count; ++k) rounds[0].push_back({first, 0, k});
        rounds[1].push_back({first, 0, count - 1});
        ++first;
        continue;
      }
      size_t end = first;
      for (size_t bytes = 0; end < messages.size() && end - first < kGroupMessages &&
                             room(messages[end]) <= budget - bytes;
           ++end) {
        bytes += room(messages[end]);
      }
      rounds[0].push_back({first, end - first, 0});
      first = end;
    }
    std::mutex mutex;
    wc_status failure = WC_OK;  // the first error but a tag mismatch
    std::atomic<bool> failed{false};
    for (const std::vector<Work> &round : rounds) {
      std::atomic<size_t> next{0};
      const auto lanes = static_cast<unsigned>(std::min(most_lanes, round.size()));
      ThreadPool::instance().parallel_for(lanes, lanes, [&](size_t lane_index) {
        const int device = devices_[lane_index % devices_.size()];
        std::unique_ptr<TransferLane> lane;
        const wc_status leased = TransferLane::lease(&lane, backend_.lease, device, kLaneDeviceBytes,
                                                     kLaneWindowBytes, kScratchBytes, copy_workers_);
        for (size_t i = next++; i < round.size() && !failed; i = next++) {
          const Work &work = round[i];
          wc_status *result = results ? results + work.first : nullptr;
          const std::span<const wc_aead_message> group = messages.subspan(work.first, work.count);
          const wc_status status =
              leased != WC_OK ? leased
              : work.count == 0 ? run_piece(*lane, device, *pieces[work.first], work.piece, messages[work.first],
                                            direct, result)
              : direct          ? run_direct_group(*lane, group, tag_len, seal, result)
                                : run_group(*lane, group, tag_len, seal, result);
          if (status == WC_OK || status == WC_ERR_AUTH) continue;
          const std::lock_guard lock(mutex);
          if (failure == WC_OK) failure = status;
          if (result != nullptr && work.count == 0) *result = status;
          failed = true;
        }
      });
      if (failure != WC_OK) return failure;
    }
    return seal ? WC_OK : combined_open_status({results, messages.size()});
  }

  // A long message's pieces: a window's worth, or less where that gives
  // fewer pieces than lanes, so that the lanes share the message; not below
  // 1 MiB, since per lane 2 MiB pieces already ran slower than 8 MiB ones
  // (docs/lab-notes/performance-history.md, "Host memory through the GPU";
  // 1 MiB itself was not measured).
  static size_t piece_bytes(uint64_t len, size_t lanes) {
    constexpr uint64_t kLeast = uint64_t{1} << 20;
    return static_cast<size_t>(std::clamp<uint64_t>(len / lanes, kLeast, kWindowBytes));
  }

  // Whole messages through one lane: their bytes staged in its window, then
  // their tags, then room for their verdicts, all up to the device in one
  // copy, the device AEAD's kernels queued on the lane's stream, and all of
  // it back in one copy.
  wc_status run_group(TransferLane &lane, std::span<const wc_aead_message> messages, size_t tag_len, bool seal,
                      wc_status *results) const {
    std::vector<size_t> offsets(messages.size());
    size_t tags_at = 0;
    for (size_t i = 0; i < messages.size(); ++i) {
      offsets[i] = tags_at;
      tags_at += round_up16(messages[i].len);
    }
    const size_t verdicts_at = tags_at + 16 * messages.size();
    const size_t used = verdicts_at + (seal ? 0 : sizeof(int32_t) * messages.size());
    uint8_t *window = lane.window();
    uint8_t *device = lane.device();
    std::vector<wc_aead_message> staged(messages.begin(), messages.end());
    for (size_t i = 0; i < messages.size(); ++i) {
      lane.stage(offsets[i], messages[i].in, messages[i].len);
      if (!seal) std::memcpy(window + tags_at + 16 * i, messages[i].tag, tag_len);
      staged[i].in = staged[i].out = device + offsets[i];
      staged[i].tag = device + tags_at + 16 * i;
    }
    auto *verdicts = seal ? nullptr : reinterpret_cast<int32_t *>(device + verdicts_at);
    wc_status status = lane.upload(0, window, verdicts_at);
    if (status == WC_OK) {
      status = device_->queue_device(staged, tag_len, seal, verdicts, lane.stream(), lane.scratch());
    }
    if (status == WC_OK) status = lane.download(window, 0, used);
    // The lane's stream must pass what was queued before its window is
    // written again, whatever failed.
    const wc_status waited = lane.wait();
    if (status == WC_OK) status = waited;
    if (status != WC_OK) return status;
    for (size_t i = 0; i < messages.size(); ++i) {
      if (!seal) {
        int32_t verdict = 0;
        std::memcpy(&verdict, window + verdicts_at + sizeof(int32_t) * i, sizeof verdict);
        results[i] = verdict == 1 ? WC_OK : WC_ERR_AUTH;
        if (results[i] != WC_OK) continue;  // the caller zeroes its output
      }
      lane.unstage(messages[i].out, offsets[i], messages[i].len);
      if (seal) std::memcpy(messages[i].tag, window + tags_at + 16 * i, tag_len);
    }
    return WC_OK;
  }

  // Whole page-locked messages through one lane: their ranges copied
  // straight up (HostRanges), the device AEAD's kernels queued on the lane's
  // stream, the written ranges straight back, and the verdicts into the
  // lane's window. An opening's outputs come back whatever their verdicts:
  // the caller zeroes those that failed.
  wc_status run_direct_group(TransferLane &lane, std::span<const wc_aead_message> messages, size_t tag_len,
                             bool seal, wc_status *results) const {
    HostRanges reads, writes;
    for (const wc_aead_message &m : messages) {
      reads.add(m.in, m.len);
      writes.add(m.out, m.len);
      (seal ? writes : reads).add(m.tag, tag_len);
    }
    const size_t verdicts_at = round_up16(writes.place(reads.place(0)));
    uint8_t *device = lane.device();
    std::vector<wc_aead_message> staged(messages.begin(), messages.end());
    for (wc_aead_message &m : staged) {
      m.in = m.len != 0 ? reads.on_device(m.in, device) : device;
      m.out = m.len != 0 ? writes.on_device(m.out, device) : device;
      m.tag = (seal ? writes : reads).on_device(m.tag, device);
    }
    auto *verdicts = seal ? nullptr : reinterpret_cast<int32_t *>(device + verdicts_at);
    wc_status status = reads.upload(lane);
    if (status == WC_OK) {
      status = device_->queue_device(staged, tag_len, seal, verdicts, lane.stream(), lane.scratch());
    }
    if (status == WC_OK) status = writes.download(lane);
    if (status == WC_OK && !seal) status = lane.download(lane.window(), verdicts_at, sizeof(int32_t) * messages.size());
    const wc_status waited = lane.wait();
    if (status == WC_OK) status = waited;
    if (status != WC_OK || seal) return status;
    for (size_t i = 0; i < messages.size(); ++i) {
      int32_t verdict = 0;
      std::memcpy(&verdict, lane.window() + sizeof(int32_t) * i, sizeof verdict);
      results[i] = verdict == 1 ? WC_OK : WC_ERR_AUTH;
    }
    return WC_OK;
  }

  // A piece on the lane's device, from page-locked memory as it is, else
  // through the lane's window, which the device AEAD's pieces copy from and
  // to (they hold its segment values on the device); the last one's status
  // is its message's result when opening (a failing piece's, the caller's
  // to record).
  wc_status run_piece(TransferLane &lane, int device, AeadPieces &pieces, size_t k, const wc_aead_message &m,
                      bool direct, wc_status *result) const {
    const std::vector<uint64_t> &cuts = pieces.cuts();
    const bool last = k + 1 == cuts.size();
    const auto len = static_cast<size_t>((last ? m.len : cuts[k + 1]) - cuts[k]);
    wc_status status;
    if (direct) {
      status = pieces.run(k, device, m.in + cuts[k], m.out + cuts[k]);
    } else {
      lane.stage(0, m.in + cuts[k], len);
      status = pieces.run(k, device, lane.window(), lane.window());
      if (status == WC_OK) lane.unstage(m.out + cuts[k], 0, len);
    }
    if (result != nullptr && last) *result = status;
    return status;
  }

  std::unique_ptr<AeadCipher> device_;
  std::vector<int> devices_;
  unsigned lanes_;
  unsigned copy_workers_;
  const TransferBackend &backend_;
};

}  // namespace

std::unique_ptr<AeadCipher> stage_host_memory(std::unique_ptr<AeadCipher> device_aead, std::vector<int> devices,
                                              unsigned lanes, const TransferBackend &backend) {
  return std::make_unique<StagedAead>(std::move(device_aead), std::move(devices), lanes, backend);
}

}  // namespace warpcrypt::engine
