// The GPU backend's AeadCipher: messages in device memory queued on the
// caller's stream (queue_device, which the engine's transfer lanes use for
// host memory: engine/staged_aead.h), and one long host-memory message in
// pieces (MessagePieces), each piece copied straight from and to where it
// is. The kernels' keying and launches are aead_keyed.cuh's.
#include "backends/cuda/aead_gpu.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <utility>
#include <vector>

#include "backends/cuda/aead_keyed.cuh"
#include "backends/cuda/device_context.h"
#include "backends/cuda/gpu_backend.h"
#include "backends/cuda/lane_buffers.h"
#include "backends/cuda/tuning.h"

namespace warpcrypt::cuda {
namespace {

// A piece's lane: leased pinned and device buffers on a stream of their
// own, and what the host does once the stream has passed the work queued on
// it (copy the tag out, or the verdict).
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

// A piece lane's buffers: the device buffer holds a piece (8 MiB,
// tuning.h); the pinned one only its trailer. The piece is copied straight
// from and to where it is: the engine hands page-locked memory, its own
// window where the caller's is pageable (engine/staged_aead.h).
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

// A long message's pieces on the devices it was made for: runs of whole
// segments, as many as a lane holds, that run on the devices' lanes at once,
// each piece's segment values going to an array in its device's memory; the
// finish kernel runs with the last piece, which holds the tail, after the
// others. Over several devices, each other piece's values also come back
// to host memory, and the last piece takes them all up to its own device
// first: a few bytes a segment (16 for GCM, 20 for Poly1305, of 64 KiB and
// more), where moving the kernels' work would be the whole message.
class MessagePieces {
 public:
  // Pieces of at most `piece_bytes`, or one segment and the tail where that
  // is more, and at most what a lane holds, on `devices`.
  static wc_status make(std::unique_ptr<MessagePieces> *out, const KeyedGpuAead &keyed, const wc_aead_message &m,
                        size_t tag_len, bool seal, size_t piece_bytes, std::vector<int> devices) {
    auto pieces = std::unique_ptr<MessagePieces>(new MessagePieces(keyed, m, tag_len, seal, piece_bytes));
    wc_status status = keyed.prepare_job(&pieces->job_, m, nullptr);
    const size_t values_bytes = pieces->value_bytes(std::max<uint64_t>(pieces->segments_, 1));
    for (const int device : devices) {
      if (status != WC_OK) break;
      const CurrentDevice on_device(device);
      void *values = nullptr;
      status = on_device.status();
      if (status == WC_OK) status = device_status(cudaMalloc(&values, values_bytes));
      if (status == WC_OK) pieces->values_.push_back({device, values});
    }
    if (status == WC_OK && devices.size() > 1) pieces->gathered_.resize(values_bytes);
    if (status == WC_OK) *out = std::move(pieces);
    return status;
  }
  // cudaFree waits for its device: every piece there, and the finish kernel
  // that read the values, are done by then.
  ~MessagePieces() {
    for (const auto &[device, values] : values_) {
      const CurrentDevice on_device(device);
      cudaFree(values);
    }
  }
  MessagePieces(const MessagePieces &) = delete;
  MessagePieces &operator=(const MessagePieces &) = delete;

  const std::vector<uint64_t> &cuts() const { return cuts_; }
  size_t piece_len(size_t k) const { return (k + 1 < cuts_.size() ? cuts_[k + 1] : message_.len) - cuts_[k]; }

  // The values array on `device`; null where the pieces were not made for it.
  void *values_on(int device) const {
    for (const auto &[on, values] : values_) {
      if (on == device) return values;
    }
    return nullptr;
  }

  // Queues piece k on `lane` (its device current, one the pieces were made
  // for): its bytes up from `in`, its kernels, its output down to `out`.
  // The last piece's finish kernel reads every piece's segment values: its
  // caller runs it once the other pieces are done (engine/staged_aead.h).
  // Once the lane has passed it, its collect copies the tag out (sealing) or
  // sets *result (opening).
  wc_status queue(HostLane &lane, size_t k, void *values, const uint8_t *in, uint8_t *out, wc_status *result) {
    const bool last = k + 1 == cuts_.size();
    const size_t len = piece_len(k);
    LeasedBuffers &buffers = *lane.buffers;
    cudaStream_t stream = buffers.stream();
    uint8_t *device = buffers.device();
    uint8_t *trailer = buffers.pinned();
    const size_t trailer_at = round_up16(len);
    buffers.mark_device_used(trailer_at + kTrailerBytes);
    buffers.mark_pinned_used(kTrailerBytes);
    const uint64_t first_segment = first_segments_[k];
    const uint64_t end_segment = k + 1 < first_segments_.size() ? first_segments_[k + 1] : segments_;
    auto *segment_values = static_cast<uint8_t *>(values);

    wc_status status = WC_OK;
    if (last && !gathered_.empty()) {
      // Every other piece's values, wherever they were worked, from the
      // copy they left in host memory (pageable: the copy waits for the
      // stream, as the lane does anyway).
      status = device_status(cudaMemcpyAsync(values, gathered_.data(), value_bytes(first_segment),
                                             cudaMemcpyHostToDevice, stream));
    }
    if (status == WC_OK) status = device_status(cudaMemcpyAsync(device, in, len, cudaMemcpyHostToDevice, stream));
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
    const AeadLaunch launch{nullptr, piece, 1, first_segment, values, static_cast<uint32_t>(tag_len_), seal_};
    if (status == WC_OK) status = keyed_.queue_kernels(launch, end_segment - first_segment, false, stream);
    if (status == WC_OK && last) status = keyed_.queue_kernels(launch, 0, true, stream);
    if (status == WC_OK && !last && !gathered_.empty()) {
      // Pieces write disjoint runs of `gathered_`.
      const size_t at = value_bytes(first_segment);
      status = device_status(cudaMemcpyAsync(gathered_.data() + at, segment_values + at,
                                             value_bytes(end_segment) - at, cudaMemcpyDeviceToHost, stream));
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
    const uint64_t segments_per_piece = std::max<uint64_t>(1, room / segment_bytes);
    // Runs of segments_per_piece from the first segment on, but the last
    // piece holds the last segment and the tail alone: it runs after the
    // others (its finish kernel reads their values), so the less it holds,
    // the less of the message runs on one lane while the others wait.
    for (uint64_t first = 0; first == 0 || first < segments_; first += segments_per_piece) {
      first_segments_.push_back(first);
    }
    if (segments_ > 1 && first_segments_.back() != segments_ - 1) first_segments_.push_back(segments_ - 1);
    // Segments are aligned on the end of the bulk run; the first may be short.
    for (const uint64_t first : first_segments_) {
      const uint64_t from_end = (segments_ - first) * segment_bytes;
      cuts_.push_back(from_end > bulk_bytes ? 0 : bulk_bytes - from_end);
    }
  }

  size_t value_bytes(uint64_t segments) const { return static_cast<size_t>(segments) * keyed_.segment_value_bytes(); }

  const KeyedGpuAead &keyed_;
  wc_aead_message message_;
  size_t tag_len_;
  bool seal_;
  uint64_t segments_;
  std::vector<uint64_t> first_segments_;  // each piece's first segment
  std::vector<uint64_t> cuts_;
  AeadMessageJob job_{};
  std::vector<std::pair<int, void *>> values_;  // a segment values array per device
  std::vector<uint8_t> gathered_;                // over several devices: every value, in host memory
};

// MessagePieces for a caller that runs them (AeadCipher::pieces): each
// piece on a lane of its own on the device the caller names, leased for the
// run, which returns once the lane has passed it.
class GpuPieces final : public AeadPieces {
 public:
  explicit GpuPieces(std::unique_ptr<MessagePieces> pieces) : pieces_(std::move(pieces)) {}

  const std::vector<uint64_t> &cuts() const override { return pieces_->cuts(); }

  wc_status run(size_t k, int device, const uint8_t *in, uint8_t *out) override {
    void *values = pieces_->values_on(device);
    if (values == nullptr) return WC_ERR_INVALID_ARGUMENT;
    const CurrentDevice on_device(device);
    wc_status status = on_device.status();
    HostLane lane;
    if (status == WC_OK) status = LeasedBuffers::acquire(&lane.buffers, device, kLaneBytes, kLanePinnedBytes);
    wc_status checked = WC_OK;  // the last piece's verdict, when opening
    if (status == WC_OK) status = pieces_->queue(lane, k, values, in, out, &checked);
    if (status == WC_OK) status = lane.finish();
    return status != WC_OK ? status : checked;
  }

 private:
  std::unique_ptr<MessagePieces> pieces_;
};

// The device AEAD. Host memory reaches it through the engine's transfer
// lanes (engine/staged_aead.h), which queue its kernels on device memory
// (queue_device); only a long message's pieces copy host memory themselves.
class GpuAead final : public AeadCipher {
 public:
  GpuAead(std::unique_ptr<KeyedGpuAead> keyed, std::vector<int> devices)
      : keyed_(std::move(keyed)), devices_(std::move(devices)) {}

  wc_backend backend() const override { return WC_BACKEND_GPU; }

  wc_status seal(std::span<const wc_aead_message>, size_t) const override { return WC_ERR_BACKEND_UNAVAILABLE; }

  wc_status open(std::span<const wc_aead_message>, size_t, wc_status *) const override {
    return WC_ERR_BACKEND_UNAVAILABLE;
  }

  // On every device (the caller's current device where the list is empty).
  wc_status pieces(std::unique_ptr<AeadPieces> *out, const wc_aead_message &message, size_t tag_len, bool seal,
                   size_t piece_bytes) const override {
    std::vector<int> devices = devices_;
    if (devices.empty()) {
      int current = 0;
      const wc_status status = device_status(cudaGetDevice(&current));
      if (status != WC_OK) return status;
      devices.push_back(current);
    }
    std::unique_ptr<MessagePieces> pieces;
    const wc_status status =
        MessagePieces::make(&pieces, *keyed_, message, tag_len, seal, piece_bytes, std::move(devices));
    if (status == WC_OK) *out = std::make_unique<GpuPieces>(std::move(pieces));
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
  std::unique_ptr<KeyedGpuAead> keyed_;
  std::vector<int> devices_;
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
