#include "engine/aead_stream.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "core/secret_bytes.h"
#include "core/thread_pool.h"
#include "engine/io_buffer.h"
#include "engine/lane_scheduler.h"
#include "engine/late_gpu_lanes.h"
#include "engine/placement.h"

namespace warpcrypt::engine {
namespace {

// All lanes' window buffers together stay below this, so 1 GiB chunks do
// not ask for a window per core.
constexpr uint64_t kBufferBudget = uint64_t{2} << 30;

// What one lane works with: an AEAD bound to the stream's key, and its
// window's buffers, which grow to what the input holds as it arrives, never
// to what an (unauthenticated) header's chunk size alone asks for. Each
// window is placed in them for its file offset (engine/io_buffer.h). Two
// for the output: where it goes out in order (a pipe, /dev/null), a window
// done before its turn is handed to the writer, and the lane goes on with
// the next window in the other buffer rather than wait (a 1 GiB age file to
// /dev/null on the H100 host's 16 lanes: 0.0661 s when each lane waited for
// its turn, 0.0593 s handing over, 0.0580 s with no order kept at all). A
// regular file's windows are written at once, so its lanes only ever place
// the first.
constexpr uint64_t kNoWindow = UINT64_MAX;

// A GPU lane's buffers are page-locked (engine/io_buffer.h): its reads
// from the file land where the device copies from, and its results where
// the writes take them.
struct AeadLane {
  explicit AeadLane(HostMemory memory) : in(memory), out{IoBuffer(memory), IoBuffer(memory)} {}

  std::unique_ptr<AeadCipher> cipher;
  IoBuffer in;
  std::array<IoBuffer, 2> out;
  std::array<uint64_t, 2> out_window{kNoWindow, kNoWindow};  // the window each holds, until written
  std::vector<wc_aead_message> messages;
  std::vector<std::array<uint8_t, kStreamNonceLen>> nonces;
  std::vector<wc_status> results;
};

// What the placement asks for (engine/placement.h): CPU lanes (auto stays
// there, as for every descriptor job), GPU lanes (`streams` of them on each
// device of the list), or both. Each window is whole chunks, about the
// placement's unit: small for CPU lanes, whose window stays in the core's
// cache (on the H100 host, 1 MiB windows sealed at 29 GB/s, 8 MiB ones at
// 12), large enough to fill a launch where GPU lanes take part from the
// start. A hybrid job's GPU lanes join late, on trial, as a plain cipher's
// do (engine/late_gpu_lanes.h), and claim several windows at once.
class StreamLanes {
 public:
  // Takes the job's plan (plan_stream_job) as it is.
  StreamLanes(const StreamShape &shape, std::span<const uint8_t> key, const Placement &plan)
      : shape_(shape), key_(key), placement_(plan) {
    const wc_backend backend = placement_.backend();
    const bool late = placement_.gpu_lanes_late();
    gpu_lanes_ = uses_gpu_lanes(backend) && !late
                     ? placement_.streams() * static_cast<unsigned>(placement_.devices().size())
                     : 0;
    cpu_lanes_ = uses_cpu_lanes(backend) ? placement_.cpu_lanes() + placement_.spare_cpu_lanes() : 0;
    window_chunks_ = std::max<uint64_t>(1, placement_.unit_bytes() / shape_.chunk_size);
    late_claim_ = late ? placement_.gpu_claim_units() : 1;
  }
  StreamLanes(const StreamLanes &) = delete;
  StreamLanes &operator=(const StreamLanes &) = delete;

  uint64_t window_chunks() const { return window_chunks_; }

  // Builds the lanes that start with the job, each with an AEAD bound to the
  // key from make_aead (one thread each: the lanes are the parallelism; one
  // device each, the GPU lanes taking the devices in turn, so that a file of
  // two windows already runs on two devices), and the late GPU lanes'
  // builder. No more than `windows` (a small file gives the rest nothing to
  // do), and no more than kBufferBudget affords with windows of up to
  // `window_bytes` (an input and an output buffer each, and a second output
  // buffer where `out` takes its bytes in order), but a CPU lane is kept.
  wc_status build(const Endpoint &out, uint64_t windows, uint64_t window_bytes, bool sealing) {
    const uint64_t buffers = out.seekable ? 2 : 3;
    const uint64_t affordable =
        std::max<uint64_t>(1, kBufferBudget / (buffers * std::max<uint64_t>(1, window_bytes)));
    for (unsigned i = 0; i < gpu_lanes_ && lanes_.size() < std::min(windows, affordable); ++i) {
      const wc_status status = add_lane(&lanes_, &placement_.devices()[i % placement_.devices().size()]);
      if (status != WC_OK) return status;
    }
    for (unsigned i = 0; i < cpu_lanes_ && lanes_.size() < windows && (i == 0 || lanes_.size() < affordable); ++i) {
      const wc_status status = add_lane(&lanes_, nullptr);
      if (status != WC_OK) return status;
    }
    if (placement_.gpu_lanes_late()) {
      if (placement_.devices().empty() && !placement_.device_check()) return WC_ERR_NO_DEVICE;
      late_ = std::make_unique<LateGpuLanes>(
          placement_, lanes_.size(), late_claim_, std::string(shape_.aead->name) + (sealing ? " seal" : " open"),
          [this](const std::vector<int> &devices, unsigned streams) { return build_late(devices, streams); });
    }
    return WC_OK;
  }

  // The lanes that start with the job, numbered from 0; the late ones after.
  size_t size() const { return lanes_.size(); }
  AeadLane &operator[](size_t index) {
    return index < lanes_.size() ? *lanes_[index] : *late_lanes_[index - lanes_.size()];
  }
  // The late GPU lanes for the scheduler; nullptr where none join late. An
  // AEAD lane always stages its data: it reads it into host buffers.
  LateLanes *late() { return late_ ? late_->late(/*staged=*/true) : nullptr; }

  // Waits for a device count beside the work: a count that found no device
  // has failed the job through the monitor.
  wc_status finish(JobMonitor &monitor) {
    release_windows();
    if (placement_.device_check() != nullptr && placement_.device_check()->wait() != WC_OK) return monitor.status();
    return WC_OK;
  }

 private:
  // A CPU lane, or (`device` set) a GPU lane on that device.
  wc_status add_lane(std::vector<std::unique_ptr<AeadLane>> *into, const int *device) {
    const LaneSpec spec = device == nullptr ? LaneSpec{}
                                            : LaneSpec{.backend = WC_BACKEND_GPU, .devices = {*device},
                                                       .streams = placement_.streams()};
    auto lane = std::make_unique<AeadLane>(device != nullptr ? HostMemory::page_locked : HostMemory::pageable);
    const wc_status status = make_aead(&lane->cipher, spec, *shape_.aead, {key_.data(), key_.size()});
    if (status == WC_OK) into->push_back(std::move(lane));
    return status;
  }

  wc_status build_late(const std::vector<int> &devices, unsigned streams) {
    std::vector<std::unique_ptr<AeadLane>> built;
    for (unsigned i = 0; i < streams * devices.size(); ++i) {
      const wc_status status = add_lane(&built, &devices[i % devices.size()]);
      if (status != WC_OK) return status;
    }
    late_lanes_ = std::move(built);
    return WC_OK;
  }

  // Wipes and frees the lanes' window buffers once they have run, each
  // lane's on a thread of its own: on the caller's thread alone, every job
  // ended with all lanes' windows wiped one after another (32 MiB for 16
  // lanes of 1 MiB; on the dev machine, 7.5-8.3 ms from the last write to the
  // exit, 5.1-5.8 ms in parallel).
  void release_windows() {
    const size_t count = lanes_.size() + late_lanes_.size();
    ThreadPool::instance().parallel_for(count, static_cast<unsigned>(count), [this](size_t i) {
      AeadLane &lane = (*this)[i];
      lane.in.release();
      for (IoBuffer &out : lane.out) out.release();
    });
  }

  const StreamShape &shape_;
  SecretBytes key_;
  const Placement placement_;  // the job's plan
  unsigned gpu_lanes_ = 0;  // built with the job
  unsigned cpu_lanes_ = 0;
  uint64_t window_chunks_ = 1;
  size_t late_claim_ = 1;  // windows a late GPU lane claims at once
  std::vector<std::unique_ptr<AeadLane>> lanes_;
  std::vector<std::unique_ptr<AeadLane>> late_lanes_;
  std::unique_ptr<LateGpuLanes> late_;  // last: its start builds into late_lanes_
};

// The `len` bytes at `position` of a regular file into the lane's input.
wc_status read_window(AeadLane &lane, const Endpoint &in, size_t len, uint64_t position, JobMonitor &monitor) {
  uint8_t *window = lane.in.place(len, in.base + position);
  if (window == nullptr) return WC_ERR_OUT_OF_MEMORY;
  return read_exactly(in, window, len, position, monitor);
}

// The unit of work the lanes run, sealing or opening: one window of whole
// chunks. What both share: the stream's shape, the output written in window
// order (or at each window's offset), and the byte counts.
class WindowJob {
 public:
  // Seals or opens `windows` windows from `window` on at lane.in.data()
  // (`len` bytes), the chunks from `first_chunk` on, the last of them the
  // stream's last when `ends_file`, and writes the result as that piece of
  // the output.
  virtual wc_status process(AeadLane &lane, uint64_t window, uint64_t windows, uint64_t first_chunk, size_t len,
                            bool ends_file) = 0;

  void add_totals(JobTotals *totals) const {
    totals->bytes_in += bytes_in_.load();
    totals->bytes_out += bytes_out_.load();
  }

 protected:
  WindowJob(const StreamShape &shape, const Endpoint &out, JobMonitor &monitor)
      : shape_(shape), monitor_(monitor), out_(out), writer_(out, monitor) {}
  ~WindowJob() = default;

  // Room for the window'th result, `len` bytes for output `position`, in
  // whichever of the lane's output buffers the writer is done with: the
  // one it wrote from longest ago is waited for when neither is.
  uint8_t *output_room(AeadLane &lane, uint64_t window, size_t len, uint64_t position) {
    size_t pick = lane.out.size();
    for (size_t i = 0; i < lane.out.size() && pick == lane.out.size(); ++i) {
      if (lane.out_window[i] == kNoWindow || writer_.written(lane.out_window[i])) pick = i;
    }
    if (pick == lane.out.size()) {
      pick = lane.out_window[0] < lane.out_window[1] ? 0 : 1;
      writer_.wait_written(lane.out_window[pick]);
    }
    lane.out_window[pick] = window;
    return lane.out[pick].place(len, position);
  }

  // Hands a window's `len` result bytes (in the buffer output_room gave) to
  // the writer for output `position`, and counts the `consumed` input bytes
  // and the `plaintext` bytes progress reports.
  wc_status emit(const AeadLane &lane, uint64_t window, uint64_t windows, uint64_t position, const uint8_t *data,
                 size_t len,
                 uint64_t consumed, uint64_t plaintext) {
    const wc_status written = writer_.hand_over(window, windows, position, data, len);
    if (written != WC_OK) return written;
    bytes_in_.fetch_add(consumed);
    bytes_out_.fetch_add(len);
    monitor_.advance(lane.cipher->backend(), plaintext);
    return WC_OK;
  }

  // A message of chunk `index`, its nonce kept in the lane.
  wc_aead_message &message(AeadLane &lane, uint64_t i, uint64_t index, bool last) const {
    lane.nonces[i] = shape_.chunk_nonce(index, last);
    wc_aead_message &m = lane.messages[i];
    m.nonce = lane.nonces[i].data();
    m.nonce_len = kStreamNonceLen;
    m.aad = shape_.aad.data();
    m.aad_len = shape_.aad.size();
    return m;
  }

  wc_status fail_format(const char *detail) {
    monitor_.fail_with_detail(WC_ERR_FORMAT, detail);
    return WC_ERR_FORMAT;
  }

  const StreamShape &shape_;
  JobMonitor &monitor_;
  const Endpoint &out_;

 private:
  OrderedWriter writer_;
  std::atomic<uint64_t> bytes_in_{0};
  std::atomic<uint64_t> bytes_out_{0};
};

class Sealer : public WindowJob {
 public:
  Sealer(const StreamShape &shape, const Endpoint &out, JobMonitor &monitor) : WindowJob(shape, out, monitor) {}

  // The plaintext windows become that piece of the body.
  wc_status process(AeadLane &lane, uint64_t window, uint64_t windows, uint64_t first_chunk, size_t len,
                    bool ends_file) override {
    const uint64_t chunk = shape_.chunk_size;
    // An empty input still gets its one, empty, last chunk.
    const uint64_t count = std::max<uint64_t>((len + chunk - 1) / chunk, ends_file && first_chunk == 0 ? 1 : 0);
    if (first_chunk + count > shape_.max_chunks()) return WC_ERR_RANGE;
    const uint64_t position = shape_.body_offset + first_chunk * shape_.sealed_chunk_size();
    const size_t sealed_len = len + count * kStreamTagLen;
    uint8_t *body = output_room(lane, window, sealed_len, out_.base + position);
    if (body == nullptr) return WC_ERR_OUT_OF_MEMORY;
    lane.messages.resize(count);
    lane.nonces.resize(count);
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t begin = i * chunk;
      const size_t piece = static_cast<size_t>(std::min<uint64_t>(chunk, len - begin));
      uint8_t *sealed = body + i * shape_.sealed_chunk_size();
      wc_aead_message &m = message(lane, i, first_chunk + i, ends_file && i + 1 == count);
      m.out = sealed;
      m.in = lane.in.data() + begin;
      m.len = piece;
      m.tag = sealed + piece;
    }
    const wc_status status = lane.cipher->seal(lane.messages, kStreamTagLen);
    if (status != WC_OK) return status;
    return emit(lane, window, windows, position, body, sealed_len, len, len);
  }
};

class Opener : public WindowJob {
 public:
  // Plaintext [begin, end) goes out; the rest of each window is dropped.
  Opener(const StreamShape &shape, const Endpoint &out, uint64_t begin, uint64_t end, JobMonitor &monitor)
      : WindowJob(shape, out, monitor), begin_(begin), end_(end) {}

  // The sealed window's plaintext, the part of the range it holds, goes out.
  wc_status process(AeadLane &lane, uint64_t window, uint64_t windows, uint64_t first_chunk, size_t len,
                    bool ends_file) override {
    const uint64_t sealed_chunk = shape_.sealed_chunk_size();
    const uint64_t count = (len + sealed_chunk - 1) / sealed_chunk;
    if (count == 0) return fail_format(first_chunk == 0 ? shape_.messages.no_chunk : shape_.messages.short_chunk);
    if (len - (count - 1) * sealed_chunk < kStreamTagLen) return fail_format(shape_.messages.short_chunk);
    if (first_chunk + count > shape_.max_chunks()) return fail_format(shape_.messages.too_long);
    const char *detail = nullptr;
    const uint64_t final_len = len - (count - 1) * sealed_chunk - kStreamTagLen;
    if (ends_file && check_final_chunk(shape_, first_chunk + count - 1, final_len, &detail) != WC_OK) {
      return fail_format(detail);
    }
    const uint64_t plain_len = len - count * kStreamTagLen;
    const uint64_t window_begin = first_chunk * shape_.chunk_size;
    // Placed for where the window's first plaintext byte would go in the
    // output: before the range (wrapping below zero) when the range starts
    // inside the window, so that the part written lines up all the same.
    uint8_t *plain = output_room(lane, window, static_cast<size_t>(plain_len), out_.base + window_begin - begin_);
    if (plain == nullptr) return WC_ERR_OUT_OF_MEMORY;
    lane.messages.resize(count);
    lane.nonces.resize(count);
    lane.results.assign(count, WC_OK);
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t at = i * sealed_chunk;
      const size_t piece = static_cast<size_t>(std::min<uint64_t>(sealed_chunk, len - at) - kStreamTagLen);
      wc_aead_message &m = message(lane, i, first_chunk + i, ends_file && i + 1 == count);
      m.out = plain + i * shape_.chunk_size;
      m.in = lane.in.data() + at;
      m.len = piece;
      m.tag = lane.in.data() + at + piece;  // only read when opening
    }
    const wc_status status = lane.cipher->open(lane.messages, kStreamTagLen, lane.results.data());
    if (status == WC_ERR_AUTH) {
      for (uint64_t i = 0; i < count; ++i) {
        if (lane.results[i] == WC_ERR_AUTH) monitor_.fail_chunk(first_chunk + i);
      }
      return WC_ERR_AUTH;
    }
    if (status != WC_OK) return status;
    const uint64_t from = std::clamp(begin_, window_begin, window_begin + plain_len);
    const uint64_t to = std::clamp(end_, window_begin, window_begin + plain_len);
    return emit(lane, window, windows, from - begin_, plain + (from - window_begin),
                static_cast<size_t>(to - from), len, to - from);
  }

 private:
  uint64_t begin_;
  uint64_t end_;
};

// A pipe's windows, read in order by whichever lane is free, each handed to
// `job` with its first chunk and whether it ends the input. One byte is read
// beyond each window, so the window that ends the input knows it: the last
// chunk's nonce says so.
void run_streamed(StreamLanes &lanes, const Endpoint &in, uint64_t window_bytes, WindowJob &job,
                  JobMonitor &monitor) {
  OrderedReader reader(in, window_bytes, 1, monitor);
  run_lanes(
      lanes.size(), monitor,
      [&](size_t lane_index, bool *finished) {
        AeadLane &lane = lanes[lane_index];
        // Bytes read in order have no file offset to match; one page offset
        // for all keeps what was read as the buffer grows.
        auto room = [&lane](size_t len) { return lane.in.place(len, 0); };
        StreamWindow window;
        const wc_status read = reader.next(room, &window, finished);
        if (read != WC_OK || *finished) return read;
        return job.process(lane, window.index, 1, window.index * lanes.window_chunks(), window.len, window.last);
      },
      lanes.late());
}

}  // namespace

std::array<uint8_t, kStreamNonceLen> StreamShape::chunk_nonce(uint64_t index, bool last) const {
  std::array<uint8_t, kStreamNonceLen> nonce = fixed;
  for (unsigned i = 0; i < counter_len; ++i) {
    nonce[kStreamNonceLen - 2 - i] = i < 8 ? static_cast<uint8_t>(index >> (8 * i)) : 0;
  }
  nonce[kStreamNonceLen - 1] = last ? 1 : 0;
  return nonce;
}

wc_status layout_of(const StreamShape &shape, uint64_t body_len, StreamLayout *layout, const char **detail) {
  const uint64_t sealed_chunk = shape.sealed_chunk_size();
  auto bad = [detail](const char *why) {
    *detail = why;
    return WC_ERR_FORMAT;
  };
  if (body_len < kStreamTagLen) return bad(shape.messages.no_chunk);
  // Rounded up without adding first, which would wrap near 2^64.
  layout->chunks = body_len / sealed_chunk + (body_len % sealed_chunk != 0 ? 1 : 0);
  const uint64_t last_sealed = body_len - (layout->chunks - 1) * sealed_chunk;
  if (last_sealed < kStreamTagLen) return bad(shape.messages.short_chunk);
  if (layout->chunks > shape.max_chunks()) return bad(shape.messages.too_long);
  layout->last_chunk_len = last_sealed - kStreamTagLen;
  layout->plaintext_len = (layout->chunks - 1) * shape.chunk_size + layout->last_chunk_len;
  return check_final_chunk(shape, layout->chunks - 1, layout->last_chunk_len, detail);
}

wc_status check_final_chunk(const StreamShape &shape, uint64_t index, uint64_t plaintext_len, const char **detail) {
  if (index == 0 || plaintext_len != 0) return WC_OK;
  *detail = shape.messages.empty_final;
  return WC_ERR_FORMAT;
}

namespace {

wc_status seal_chunks(const Placement &plan, const StreamShape &shape, std::span<const uint8_t> key,
                      const Endpoint &out, const Endpoint &in, JobMonitor &monitor, JobTotals *totals) {
  monitor.set_total(in.size);
  StreamLanes lanes(shape, key, plan);
  const uint64_t chunk = shape.chunk_size;
  const uint64_t window_plain = lanes.window_chunks() * chunk;
  const uint64_t window_sealed = lanes.window_chunks() * shape.sealed_chunk_size();

  // A regular file's windows are known before it is read; a pipe's are not.
  uint64_t windows = UINT64_MAX;
  if (in.seekable) {
    const uint64_t chunks = std::max<uint64_t>(1, (in.size + chunk - 1) / chunk);
    if (chunks > shape.max_chunks()) return WC_ERR_RANGE;
    windows = (chunks + lanes.window_chunks() - 1) / lanes.window_chunks();
  }
  const uint64_t window_bytes = in.seekable ? std::min(window_sealed, in.size + kStreamTagLen) : window_sealed;
  wc_status status = lanes.build(out, windows, window_bytes, /*sealing=*/true);
  if (status != WC_OK) return status;

  Sealer sealer(shape, out, monitor);
  if (in.seekable) {
    run_lanes_indexed(
        lanes.size(), windows, monitor,
        [&](size_t lane_index, size_t first, size_t count) {
          AeadLane &lane = lanes[lane_index];
          const uint64_t begin = first * window_plain;
          const auto len = static_cast<size_t>(std::min(count * window_plain, in.size - begin));
          const wc_status read = read_window(lane, in, len, begin, monitor);
          if (read != WC_OK) return read;
          return sealer.process(lane, first, count, first * lanes.window_chunks(), len, first + count == windows);
        },
        lanes.late());
  } else {
    run_streamed(lanes, in, window_plain, sealer, monitor);
  }
  status = lanes.finish(monitor);
  sealer.add_totals(totals);
  return status != WC_OK ? status : confirm_input_end(in, monitor);
}

wc_status open_chunks(const Placement &plan, const StreamShape &shape, std::span<const uint8_t> key,
                      uint64_t offset, uint64_t length, const Endpoint &out, const Endpoint &in,
                      JobMonitor &monitor, JobTotals *totals) {
  const bool whole = offset == 0 && length == UINT64_MAX;
  if (!whole && !in.seekable) return WC_ERR_INVALID_ARGUMENT;
  StreamLanes lanes(shape, key, plan);
  const uint64_t window_chunks = lanes.window_chunks();
  const uint64_t chunk = shape.chunk_size;
  const uint64_t sealed_chunk = shape.sealed_chunk_size();
  const uint64_t window_sealed = window_chunks * sealed_chunk;

  if (!in.seekable) {
    monitor.set_total(0);
    wc_status status = lanes.build(out, UINT64_MAX, window_sealed, /*sealing=*/false);
    if (status != WC_OK) return status;
    Opener opener(shape, out, 0, UINT64_MAX, monitor);
    run_streamed(lanes, in, window_sealed, opener, monitor);
    status = lanes.finish(monitor);
    opener.add_totals(totals);
    return status != WC_OK ? status : monitor.status();
  }
  StreamLayout layout;
  const char *detail = nullptr;
  wc_status status = layout_of(shape, in.size - std::min(in.size, shape.body_offset), &layout, &detail);
  if (status != WC_OK) {
    monitor.fail_with_detail(status, detail);
    return status;
  }
  const uint64_t begin = std::min(offset, layout.plaintext_len);
  const uint64_t end = begin + std::min(length, layout.plaintext_len - begin);
  monitor.set_total(end - begin);
  // A range that reaches the end always holds the final chunk: layout_of
  // refused an empty one after chunk 0, so the final chunk holds the last
  // plaintext byte.
  const uint64_t first = begin < end ? begin / chunk : layout.chunks - 1;
  const uint64_t last = begin < end ? (end - 1) / chunk : layout.chunks - 1;
  const uint64_t windows = (last - first) / window_chunks + 1;
  status = lanes.build(out, windows, std::min(window_sealed, in.size - shape.body_offset), /*sealing=*/false);
  if (status != WC_OK) return status;
  Opener opener(shape, out, begin, end, monitor);
  run_lanes_indexed(
      lanes.size(), windows, monitor,
      [&](size_t lane_index, size_t first_window, size_t count) {
        AeadLane &lane = lanes[lane_index];
        const uint64_t first_chunk = first + first_window * window_chunks;
        const uint64_t chunks = std::min(count * window_chunks, last + 1 - first_chunk);
        const bool ends_file = first_chunk + chunks == layout.chunks;
        const uint64_t at = shape.body_offset + first_chunk * sealed_chunk;
        const auto len = static_cast<size_t>(std::min(chunks * sealed_chunk, in.size - at));
        const wc_status read = read_window(lane, in, len, at, monitor);
        if (read != WC_OK) return read;
        return opener.process(lane, first_window, count, first_chunk, len, ends_file);
      },
      lanes.late());
  status = lanes.finish(monitor);
  opener.add_totals(totals);
  totals->bytes_in = in.size;  // the offset settles past the file, as after a full read
  return status != WC_OK ? status : confirm_input_end(in, monitor);
}

}  // namespace

wc_status seal_chunk(const AeadCipher &cipher, const StreamShape &shape, uint64_t index, bool last, uint8_t *out,
                     const uint8_t *in, size_t len, JobMonitor &monitor) {
  const bool whole = len == shape.chunk_size;
  const bool valid_last = len < shape.chunk_size && (len > 0 || index == 0);
  if (index >= shape.max_chunks() || !(whole || (last && valid_last))) {
    monitor.fail_with_detail(WC_ERR_INVALID_ARGUMENT,
                             index >= shape.max_chunks() ? shape.messages.too_long
                                                         : "every chunk but the last holds exactly the chunk size, "
                                                           "and only an empty plaintext ends with an empty chunk");
    return WC_ERR_INVALID_ARGUMENT;
  }
  const std::array<uint8_t, kStreamNonceLen> nonce = shape.chunk_nonce(index, last);
  const wc_aead_message message{out,         in, len, nonce.data(), nonce.size(), shape.aad.data(), shape.aad.size(),
                                out + len};
  const wc_status status = cipher.seal({&message, 1}, kStreamTagLen);
  if (status == WC_OK) monitor.advance(cipher.backend(), len);
  return status;
}

wc_status open_chunk(const AeadCipher &cipher, const StreamShape &shape, uint64_t index, bool last, uint8_t *out,
                     const uint8_t *in, size_t sealed_len, JobMonitor &monitor) {
  const char *detail = nullptr;
  if (sealed_len < kStreamTagLen) {
    detail = shape.messages.short_chunk;
  } else if (index >= shape.max_chunks()) {
    detail = shape.messages.too_long;
  } else if (!last && sealed_len != shape.sealed_chunk_size()) {
    detail = "a chunk before the last is shorter than the chunk size";
  } else if (sealed_len > shape.sealed_chunk_size()) {
    detail = "a chunk is longer than the chunk size";
  } else if (last) {
    (void)check_final_chunk(shape, index, sealed_len - kStreamTagLen, &detail);
  }
  if (detail != nullptr) {
    monitor.fail_with_detail(WC_ERR_FORMAT, detail);
    return WC_ERR_FORMAT;
  }
  const size_t len = sealed_len - kStreamTagLen;
  const std::array<uint8_t, kStreamNonceLen> nonce = shape.chunk_nonce(index, last);
  const wc_aead_message message{out,         in, len, nonce.data(), nonce.size(), shape.aad.data(), shape.aad.size(),
                                const_cast<uint8_t *>(in + len)};
  wc_status result = WC_OK;
  const wc_status status = cipher.open({&message, 1}, kStreamTagLen, &result);
  if (status != WC_OK) {
    secure_wipe(out, len);
    if (status == WC_ERR_AUTH) monitor.fail_chunk(index);
    return status;
  }
  monitor.advance(cipher.backend(), len);
  return WC_OK;
}

wc_status seal_stream(const Placement &plan, const StreamShape &shape, std::span<const uint8_t> key,
                      const Endpoint &out, const Endpoint &in, JobMonitor &monitor, JobTotals *totals) {
  const wc_status status = seal_chunks(plan, shape, key, out, in, monitor, totals);
  // A failure before the lanes ran (no device, no memory) is the job's too.
  if (status != WC_OK) monitor.fail(status);
  return monitor.status();
}

wc_status open_stream(const Placement &plan, const StreamShape &shape, std::span<const uint8_t> key,
                      uint64_t offset, uint64_t length, const Endpoint &out, const Endpoint &in,
                      JobMonitor &monitor, JobTotals *totals) {
  const wc_status status = open_chunks(plan, shape, key, offset, length, out, in, monitor, totals);
  if (status != WC_OK) monitor.fail(status);
  return monitor.status();
}

}  // namespace warpcrypt::engine
