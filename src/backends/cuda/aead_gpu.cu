// The GPU backend's AeadCipher: messages in device memory queued on the
// caller's stream, and host memory copied through the device on lanes of
// leased buffers. The kernels' keying and launches are aead_keyed.cuh's.
#include "backends/cuda/aead_gpu.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <utility>
#include <vector>

#include "core/memory_ranges.h"
#include "backends/cuda/aead_keyed.cuh"
#include "backends/cuda/device_context.h"
#include "backends/cuda/gpu_backend.h"
#include "backends/cuda/lane_buffers.h"
#include "backends/cuda/tuning.h"

namespace warpcrypt::cuda {
namespace {

// A lane for host memory: leased pinned and device buffers on a stream of
// their own, and what the host does once the stream has passed the work
// queued on it (copy a piece's tag or an opening's verdicts out).
struct HostLane {
  std::unique_ptr<LeasedBuffers> buffers;
  std::function<void()> collect;

  // Waits for the lane's work and collects it.
  wc_status finish() {
    const wc_status status = buffers->wait();
    if (status == WC_OK && collect) collect();
    collect = nullptr;
    return status;
  }
};

// A lane's buffers: the device buffer holds a group's ranges or a piece
// (8 MiB, tuning.h); the pinned one only what the host reads or writes
// itself, a group's descriptors and verdicts or a piece's trailer. Host
// memory is copied straight from and to where it is, so page-locked memory
// moves at the bus's rate, and pageable memory, which the driver copies
// through staging of its own, slower: whoever wants more stages it in
// page-locked memory first (engine/staged_aead.h).
constexpr size_t kLaneBytes = tuning::kAeadHostLaneBytes;
constexpr size_t kLanePinnedBytes = size_t{64} << 10;
// A piece's trailer: 16 bytes of tag, then a verdict.
constexpr size_t kTrailerBytes = 16 + sizeof(int32_t);

size_t round_up16(size_t n) { return (n + 15) / 16 * 16; }

wc_status verdict(const uint8_t *word) {
  int32_t value = 0;
  std::memcpy(&value, word, sizeof value);
  return value == 1 ? WC_OK : WC_ERR_AUTH;
}

// A long message's pieces on one device: runs of whole segments, as many
// as a lane holds, that run on the device's lanes at once, each piece's
// segment values going to one array in that device's memory; the finish
// kernel runs with the last piece, which holds the tail, after the others.
class MessagePieces {
 public:
  // With the device current: pieces of at most `piece_bytes`, or one
  // segment and the tail where that is more, and at most what a lane holds.
  static wc_status make(std::unique_ptr<MessagePieces> *out, const KeyedGpuAead &keyed, const wc_aead_message &m,
                        size_t tag_len, bool seal, size_t piece_bytes = kLaneBytes) {
    auto pieces = std::unique_ptr<MessagePieces>(new MessagePieces(keyed, m, tag_len, seal, piece_bytes));
    wc_status status = keyed.prepare_job(&pieces->job_, m, nullptr);
    if (status == WC_OK) {
      status = device_status(
          cudaMalloc(&pieces->values_, std::max<uint64_t>(pieces->segments_, 1) * keyed.segment_value_bytes()));
    }
    if (status == WC_OK) *out = std::move(pieces);
    return status;
  }
  // cudaFree waits for the device: every piece, and the finish kernel that
  // read the values, are done by then.
  ~MessagePieces() { cudaFree(values_); }
  MessagePieces(const MessagePieces &) = delete;
  MessagePieces &operator=(const MessagePieces &) = delete;

  const std::vector<uint64_t> &cuts() const { return cuts_; }
  size_t piece_len(size_t k) const { return (k + 1 < cuts_.size() ? cuts_[k + 1] : message_.len) - cuts_[k]; }

  // Queues piece k on `lane` (the device current): its bytes up from `in`,
  // its kernels, its output down to `out`. The last piece's finish kernel
  // first waits for the work queued so far on `others`, the lanes the other
  // pieces went to; once the lane has passed it, its collect copies the tag
  // out (sealing) or sets *result (opening).
  wc_status queue(HostLane &lane, size_t k, const uint8_t *in, uint8_t *out, wc_status *result,
                  std::span<const HostLane> others) const {
    const bool last = k + 1 == cuts_.size();
    const size_t len = piece_len(k);
    LeasedBuffers &buffers = *lane.buffers;
    cudaStream_t stream = buffers.stream();
    uint8_t *device = buffers.device();
    uint8_t *trailer = buffers.pinned();
    const size_t trailer_at = round_up16(len);
    buffers.mark_device_used(trailer_at + kTrailerBytes);
    buffers.mark_pinned_used(kTrailerBytes);

    wc_status status = device_status(cudaMemcpyAsync(device, in, len, cudaMemcpyHostToDevice, stream));
    if (status == WC_OK && last && !seal_) {
      std::memcpy(trailer, message_.tag, tag_len_);
      status = device_status(cudaMemcpyAsync(device + trailer_at, trailer, 16, cudaMemcpyHostToDevice, stream));
    }
    AeadMessageJob piece = job_;
    piece.in = piece.out = device;
    piece.base = cuts_[k];
    piece.tag = device + trailer_at;
    piece.verified = seal_ ? nullptr : reinterpret_cast<int32_t *>(device + trailer_at + 16);
    piece.aligned = true;
    const uint64_t first_segment = k * segments_per_piece_;
    const uint64_t end_segment = std::min(segments_, first_segment + segments_per_piece_);
    const AeadLaunch launch{nullptr, piece, 1, first_segment, values_, static_cast<uint32_t>(tag_len_), seal_};
    if (status == WC_OK) status = keyed_.queue_kernels(launch, end_segment - first_segment, false, stream);
    if (status == WC_OK && last) {
      for (const HostLane &other : others) {
        if (&other == &lane || other.buffers == nullptr || status != WC_OK) continue;
        status = buffers.order_after(*other.buffers);
      }
      if (status == WC_OK) status = keyed_.queue_kernels(launch, 0, true, stream);
    }
    if (status == WC_OK) status = device_status(cudaMemcpyAsync(out, device, len, cudaMemcpyDeviceToHost, stream));
    if (status == WC_OK && last) {
      status = device_status(
          cudaMemcpyAsync(trailer, device + trailer_at, kTrailerBytes, cudaMemcpyDeviceToHost, stream));
      lane.collect = [trailer, tag = message_.tag, tag_len = tag_len_, seal = seal_, result] {
        if (seal) {
          std::memcpy(tag, trailer, tag_len);
        } else {
          *result = verdict(trailer + 16);
        }
      };
    }
    return status;
  }

 private:
  MessagePieces(const KeyedGpuAead &keyed, const wc_aead_message &m, size_t tag_len, bool seal, size_t piece_bytes)
      : keyed_(keyed), message_(m), tag_len_(tag_len), seal_(seal), segments_(keyed.segment_count(m.len)) {
    const uint64_t block_bytes = keyed.block_bytes();
    const uint64_t segment_bytes = keyed.segment_bytes();
    const uint64_t bulk_bytes = aead_bulk_blocks(m.len, block_bytes) * block_bytes;
    // Room for a run of segments and the tail, which is at most a block.
    const uint64_t most = std::min<uint64_t>(std::max<uint64_t>(piece_bytes, block_bytes), kLaneBytes - kTrailerBytes);
    const uint64_t room = most - block_bytes;
    segments_per_piece_ = std::max<uint64_t>(1, room / segment_bytes);
    // Segments are aligned on the end of the bulk run; the first may be short.
    for (uint64_t first = 0; first == 0 || first < segments_; first += segments_per_piece_) {
      const uint64_t from_end = (segments_ - first) * segment_bytes;
      cuts_.push_back(from_end > bulk_bytes ? 0 : bulk_bytes - from_end);
    }
  }

  const KeyedGpuAead &keyed_;
  wc_aead_message message_;
  size_t tag_len_;
  bool seal_;
  uint64_t segments_;
  uint64_t segments_per_piece_ = 0;
  std::vector<uint64_t> cuts_;
  AeadMessageJob job_{};
  void *values_ = nullptr;
};

// MessagePieces for a caller that runs them (AeadCipher::pieces): each
// piece on a lane of its own, leased for the run, which returns once the
// lane has passed it.
class GpuPieces final : public AeadPieces {
 public:
  GpuPieces(int device, std::unique_ptr<MessagePieces> pieces) : device_(device), pieces_(std::move(pieces)) {}
  ~GpuPieces() override {
    const CurrentDevice on_device(device_);
    pieces_.reset();
  }

  const std::vector<uint64_t> &cuts() const override { return pieces_->cuts(); }

  wc_status run(size_t k, const uint8_t *in, uint8_t *out) override {
    const CurrentDevice on_device(device_);
    wc_status status = on_device.status();
    HostLane lane;
    if (status == WC_OK) status = LeasedBuffers::acquire(&lane.buffers, device_, kLaneBytes, kLanePinnedBytes);
    wc_status checked = WC_OK;  // the last piece's verdict, when opening
    if (status == WC_OK) status = pieces_->queue(lane, k, in, out, &checked, {});
    if (status == WC_OK) status = lane.finish();
    return status != WC_OK ? status : checked;
  }

 private:
  int device_;
  std::unique_ptr<MessagePieces> pieces_;
};

// Host memory through the GPU as the plain ciphers' lanes move it: leased
// buffers on several streams per device, so that one lane's upload overlaps
// another's kernels and a third's download. Messages that fit a lane travel
// in groups, one launch per group, the groups going to the devices in turn
// (and each call starting on the next device); a longer message travels in
// pieces (MessagePieces) on one device, one piece per lane in turn. A
// group's messages' bytes are gathered into ranges (HostRanges) and copied
// straight from and to the host.
class GpuAead final : public AeadCipher {
 public:
  GpuAead(std::unique_ptr<KeyedGpuAead> keyed, std::vector<int> devices)
      : keyed_(std::move(keyed)), devices_(std::move(devices)) {}

  wc_backend backend() const override { return WC_BACKEND_GPU; }

  wc_status seal(std::span<const wc_aead_message> messages, size_t tag_len) const override {
    return run(messages, tag_len, true, nullptr);
  }

  wc_status open(std::span<const wc_aead_message> messages, size_t tag_len, wc_status *results) const override {
    return run(messages, tag_len, false, results);
  }

  wc_status pieces(std::unique_ptr<AeadPieces> *out, const wc_aead_message &message, size_t tag_len, bool seal,
                   size_t piece_bytes) const override {
    std::vector<DeviceLanes> devices;
    wc_status status = list_devices(&devices);
    if (status != WC_OK) return status;
    const int device = devices[next_device_.fetch_add(1, std::memory_order_relaxed) % devices.size()].device;
    const CurrentDevice on_device(device);
    status = on_device.status();
    std::unique_ptr<MessagePieces> pieces;
    if (status == WC_OK) status = MessagePieces::make(&pieces, *keyed_, message, tag_len, seal, piece_bytes);
    if (status == WC_OK) *out = std::make_unique<GpuPieces>(device, std::move(pieces));
    return status;
  }

  // Every message of a batch lives on one device; the first one's buffers
  // say which.
  wc_status queue_device(std::span<const wc_aead_message> messages, size_t tag_len, bool seal, int32_t *verified,
                         wc_cuda_stream stream, std::span<uint8_t> page_locked) const override {
    if (messages.empty()) return WC_OK;
    const auto cuda_stream = static_cast<cudaStream_t>(stream);
    const WorkDevice on_device(cuda_stream, {messages[0].in, messages[0].out, messages[0].tag, verified});
    if (on_device.status() != WC_OK) return on_device.status();
    return keyed_->queue(messages, tag_len, seal, verified, cuda_stream, page_locked);
  }

  wc_status queue_device_strided(const wc_aead_strided &batch, size_t tag_len, bool seal, int32_t *verified,
                                 wc_cuda_stream stream) const override {
    if (batch.count == 0) return WC_OK;
    const auto cuda_stream = static_cast<cudaStream_t>(stream);
    const WorkDevice on_device(cuda_stream, {batch.in, batch.out, batch.tags, batch.nonces, verified});
    if (on_device.status() != WC_OK) return on_device.status();
    return keyed_->queue_strided(batch, tag_len, seal, verified, cuda_stream);
  }

 private:
  // One device's lanes, taken in turn.
  struct DeviceLanes {
    int device = 0;
    std::vector<HostLane> lanes;
    size_t next = 0;
  };

  // Host memory a group's kernels reach by copies straight from or to it:
  // the messages' ranges of one direction (read by the kernels, or written),
  // merged where they touch, so that a window of chunks is one copy. Each is
  // placed in the lane's device buffer at its host address's offset modulo
  // 16, so the kernels' aligned loads stay aligned.
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

    wc_status upload(uint8_t *device, cudaStream_t stream) const {
      return copy(device, cudaMemcpyHostToDevice, stream);
    }
    wc_status download(uint8_t *device, cudaStream_t stream) const {
      return copy(device, cudaMemcpyDeviceToHost, stream);
    }

   private:
    struct Range {
      const uint8_t *begin;
      const uint8_t *end;
      size_t at;  // its place in the device buffer
    };

    wc_status copy(uint8_t *device, cudaMemcpyKind kind, cudaStream_t stream) const {
      for (const Range &range : ranges_) {
        uint8_t *on = device + range.at;
        const size_t len = static_cast<size_t>(range.end - range.begin);
        auto *host = const_cast<uint8_t *>(range.begin);  // written only by downloads, of written ranges
        const cudaError_t error = kind == cudaMemcpyHostToDevice ? cudaMemcpyAsync(on, host, len, kind, stream)
                                                                 : cudaMemcpyAsync(host, on, len, kind, stream);
        if (error != cudaSuccess) return device_status(error);
      }
      return WC_OK;
    }

    std::vector<ByteRange> added_;
    std::vector<Range> ranges_;  // once placed
  };

  // What a message needs of a lane's device buffer, at most: its input,
  // output and tag, each in a range that may start 15 bytes on, and a
  // verdict. A group's messages together may take the rest but 15 bytes:
  // its verdicts start on 16 bytes, up to 15 bytes after its ranges.
  static size_t lane_bytes(const wc_aead_message &m) { return 2 * m.len + 3 * 15 + kTrailerBytes; }
  static constexpr size_t kGroupBudget = kLaneBytes - 15;
  // A group's verdicts and descriptors fill at most the pinned buffer.
  static constexpr size_t kGroupMessages = (kLanePinnedBytes - 16) / (sizeof(int32_t) + sizeof(AeadMessageJob));

  wc_status run(std::span<const wc_aead_message> messages, size_t tag_len, bool seal, wc_status *results) const {
    std::vector<DeviceLanes> devices;
    wc_status status = list_devices(&devices);
    size_t turn = next_device_.fetch_add(1, std::memory_order_relaxed);
    for (size_t first = 0; first < messages.size() && status == WC_OK;) {
      DeviceLanes &device = devices[turn++ % devices.size()];
      const CurrentDevice on_device(device.device);
      status = on_device.status();
      if (status != WC_OK) break;
      if (lane_bytes(messages[first]) > kGroupBudget) {
        status = run_pieces(device, messages[first], tag_len, seal, results ? results + first : nullptr);
        ++first;
        continue;
      }
      size_t end = first;
      size_t bytes = 0;
      while (end < messages.size() && lane_bytes(messages[end]) <= kGroupBudget - bytes &&
             end - first < kGroupMessages) {
        bytes += lane_bytes(messages[end]);
        ++end;
      }
      HostLane &lane = next_lane_of(device, &status);
      if (status == WC_OK) {
        status = run_group(lane, messages.subspan(first, end - first), tag_len, seal,
                           results ? results + first : nullptr);
      }
      first = end;
    }
    for (DeviceLanes &device : devices) {
      for (HostLane &lane : device.lanes) {
        if (lane.buffers == nullptr) continue;
        const wc_status finished = lane.finish();
        if (status == WC_OK) status = finished;
      }
    }
    if (status == WC_OK && !seal) status = combined_open_status({results, messages.size()});
    return status;
  }

  // The devices of the list, or the caller's current device where the list
  // is empty, their lanes not yet leased.
  wc_status list_devices(std::vector<DeviceLanes> *devices) const {
    std::vector<int> ordinals = devices_;
    if (ordinals.empty()) {
      int current = 0;
      const wc_status status = device_status(cudaGetDevice(&current));
      if (status != WC_OK) return status;
      ordinals.push_back(current);
    }
    for (int ordinal : ordinals) devices->emplace_back().device = ordinal;
    return WC_OK;
  }

  // The device's next lane in turn, once its stream has passed its earlier
  // work and the host has collected that work's results. Up to
  // kAeadHostLanes lanes on the device, each leased when work first goes to
  // it: a call of one group leases one lane on one device.
  static HostLane &next_lane_of(DeviceLanes &device, wc_status *status) {
    if (device.lanes.empty()) device.lanes.resize(tuning::kAeadHostLanes);
    HostLane &lane = device.lanes[device.next++ % device.lanes.size()];
    if (*status != WC_OK) return lane;
    *status = lane.buffers == nullptr
                  ? LeasedBuffers::acquire(&lane.buffers, device.device, kLaneBytes, kLanePinnedBytes)
                  : lane.finish();
    return lane;
  }

  // A group's ranges go to the device and back as they are. The lane's
  // pinned buffer holds only an opening's verdicts, coming back, and the
  // messages' descriptors, going up.
  wc_status run_group(HostLane &lane, std::span<const wc_aead_message> messages, size_t tag_len, bool seal,
                      wc_status *results) const {
    LeasedBuffers &buffers = *lane.buffers;
    HostRanges reads, writes;
    for (const wc_aead_message &m : messages) {
      reads.add(m.in, m.len);
      writes.add(m.out, m.len);
      (seal ? writes : reads).add(m.tag, tag_len);
    }
    const size_t verdicts_at = round_up16(writes.place(reads.place(0)));
    const size_t verdict_bytes = seal ? 0 : sizeof(int32_t) * messages.size();
    const size_t descriptors_at = round_up16(verdict_bytes);
    buffers.mark_device_used(verdicts_at + verdict_bytes);
    buffers.mark_pinned_used(kLanePinnedBytes);
    uint8_t *device = buffers.device();
    std::vector<wc_aead_message> on_device(messages.begin(), messages.end());
    for (wc_aead_message &m : on_device) {
      m.in = m.len != 0 ? reads.on_device(m.in, device) : device;
      m.out = m.len != 0 ? writes.on_device(m.out, device) : device;
      m.tag = (seal ? writes : reads).on_device(m.tag, device);
    }
    cudaStream_t stream = buffers.stream();
    auto *verdicts = reinterpret_cast<int32_t *>(device + verdicts_at);
    wc_status status = reads.upload(device, stream);
    const std::span<uint8_t> descriptors(buffers.pinned() + descriptors_at, kLanePinnedBytes - descriptors_at);
    if (status == WC_OK) {
      status = keyed_->queue(on_device, tag_len, seal, seal ? nullptr : verdicts, stream, descriptors);
    }
    if (status == WC_OK) status = writes.download(device, stream);
    if (status == WC_OK && !seal) {
      status = device_status(
          cudaMemcpyAsync(buffers.pinned(), verdicts, verdict_bytes, cudaMemcpyDeviceToHost, stream));
    }
    if (status != WC_OK || seal) return status;
    lane.collect = [count = messages.size(), pinned = buffers.pinned(), results] {
      for (size_t i = 0; i < count; ++i) results[i] = verdict(pinned + sizeof(int32_t) * i);
    };
    return WC_OK;
  }

  // A long message's pieces on the device's lanes in turn (the device
  // current).
  wc_status run_pieces(DeviceLanes &device, const wc_aead_message &m, size_t tag_len, bool seal,
                       wc_status *result) const {
    std::unique_ptr<MessagePieces> pieces;
    wc_status status = MessagePieces::make(&pieces, *keyed_, m, tag_len, seal);
    for (size_t k = 0; status == WC_OK && k < pieces->cuts().size(); ++k) {
      HostLane &lane = next_lane_of(device, &status);
      const uint64_t at = pieces->cuts()[k];
      if (status == WC_OK) status = pieces->queue(lane, k, m.in + at, m.out + at, result, device.lanes);
    }
    return status;
  }

  std::unique_ptr<KeyedGpuAead> keyed_;
  std::vector<int> devices_;
  mutable std::atomic<size_t> next_device_{0};  // where the next call starts
};

}  // namespace

wc_status make_aead(std::unique_ptr<AeadCipher> *out, const wc_aead &aead, std::span<const uint8_t> key,
                    std::span<const int> devices) {
  if (device_count() == 0) return WC_ERR_NO_DEVICE;
  std::unique_ptr<KeyedGpuAead> keyed;
  const wc_status status = KeyedGpuAead::make(&keyed, aead, key);
  if (status == WC_OK) {
    *out = std::make_unique<GpuAead>(std::move(keyed), std::vector<int>(devices.begin(), devices.end()));
  }
  return status;
}

}  // namespace warpcrypt::cuda
