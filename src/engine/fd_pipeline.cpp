#include "engine/fd_pipeline.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>

#include "core/backend_tables.h"
#include "core/stream_state.h"
#include "engine/placement.h"
#include "engine/endpoint.h"
#include "engine/io_buffer.h"
#include "engine/lane_scheduler.h"
#include "engine/lane_set.h"

namespace warpcrypt::engine {
namespace {

// What one lane does with one chunk once its input sits in the lane's
// staging buffer: transform the body in place, run the edge after the last
// body, write the result.
struct ChunkWork {
  size_t index = 0;       // the first unit's
  size_t units = 1;
  uint64_t position = 0;  // stream byte of the body's first byte
  size_t body = 0;
  size_t tail = 0;        // edge bytes after the body (last chunk only)
  bool last = false;
  std::array<uint8_t, 16> chain{};       // IV || ciphertext before `position`
  std::array<uint8_t, 16> edge_chain{};  // ... before position + body
};

class Pipeline {
 public:
  Pipeline(const wc_cipher &cipher, wc_direction direction, const KeyMaterial &key, const Endpoint &in,
           const Endpoint &out, JobMonitor &monitor)
      : cipher_(cipher), direction_(direction), key_(key), in_(in), writer_(out, monitor), monitor_(monitor) {
    std::copy(key.iv.begin(), key.iv.end(), iv_.begin());
  }

  // Units of `unit` bytes; a hybrid set's GPU lanes join late and take
  // several units at once (LateLanes).
  wc_status run(LaneSet &lanes, size_t unit, JobTotals *totals) {
    LateLanes *late = lanes.late(/*staged=*/true);
    if (in_.seekable) {
      run_known_size(lanes, late, unit, totals);
    } else {
      run_stream(lanes, late, unit, totals);
    }
    totals->bytes_out = bytes_out_.load();
    return monitor_.status();
  }

 private:
  // A regular file: its size is known, so the body, the tail and every
  // chunk's place follow from it, and lanes read at their own offsets.
  void run_known_size(LaneSet &lanes, LateLanes *late, size_t unit, JobTotals *totals) {
    const uint64_t total = in_.size;
    const size_t tail = held_back_bytes(cipher_, direction_, total);
    const uint64_t body_end = total - tail;
    const size_t count = std::max<uint64_t>(1, (body_end + unit - 1) / unit);
    totals->bytes_in = total;
    auto work_on = [&](size_t lane_index, size_t first, size_t units) {
      Lane &lane = lanes[lane_index];
      ChunkWork work;
      work.index = first;
      work.units = units;
      work.position = uint64_t{first} * unit;
      work.body =
          static_cast<size_t>(std::min<uint64_t>(units * unit, body_end - std::min(body_end, work.position)));
      work.last = first + units == count;
      work.tail = work.last ? tail : 0;
      uint8_t *buffer = lane.staging();
      if (buffer == nullptr) return WC_ERR_OUT_OF_MEMORY;
      wc_status status = read_exactly(in_, buffer, work.body + work.tail, work.position, monitor_);
      if (status != WC_OK) return status;
      work.chain = iv_;
      if (chains_on_ciphertext(cipher_) && work.position >= 16) {
        status = read_exactly(in_, work.chain.data(), 16, work.position - 16, monitor_);
        if (status != WC_OK) return status;
      }
      work.edge_chain = edge_chain_of(work, buffer);
      return process(lane, work, buffer);
    };
    run_lanes_indexed(lanes.size(), count, monitor_, work_on, late);
  }

  // A pipe or terminal: read in order, one chunk per claim. Each read looks
  // 16 bytes ahead, so the edge always has the stream's true last block even
  // when the end arrives on a chunk boundary; the chain passes from chunk to
  // chunk in the reader's order.
  void run_stream(LaneSet &lanes, LateLanes *late, size_t unit, JobTotals *totals) {
    monitor_.set_total(0);
    OrderedReader reader(in_, unit, 16, monitor_);
    std::array<uint8_t, 16> chain = iv_;
    auto step = [&](size_t lane_index, bool *finished) {
      Lane &lane = lanes[lane_index];
      uint8_t *buffer = lane.staging();
      if (buffer == nullptr) return WC_ERR_OUT_OF_MEMORY;
      ChunkWork work;
      auto take_in_order = [&](const StreamWindow &window, const uint8_t *data) {
        work.index = window.index;
        work.position = window.offset;
        work.last = window.last;
        work.tail = window.last ? held_back_bytes(cipher_, direction_, window.len) : 0;
        work.body = window.len - work.tail;
        work.chain = chain;
        work.edge_chain = edge_chain_of(work, data);
        chain = work.edge_chain;
      };
      StreamWindow window;
      const wc_status read = reader.next([buffer](size_t) { return buffer; }, &window, finished, take_in_order);
      if (read != WC_OK || *finished) return read;
      return process(lane, work, buffer);
    };
    run_lanes(lanes.size(), monitor_, step, late);
    totals->bytes_in = reader.bytes_read();
  }

  // The 16 bytes of IV || ciphertext before the end of the chunk's body,
  // read before an in-place transform overwrites them.
  std::array<uint8_t, 16> edge_chain_of(const ChunkWork &work, const uint8_t *buffer) const {
    std::array<uint8_t, 16> chain{};
    if (!chains_on_ciphertext(cipher_)) return chain;
    // The last 16 bytes of chain || body.
    const size_t from_body = std::min<size_t>(work.body, 16);
    std::copy(work.chain.begin() + from_body, work.chain.end(), chain.begin());
    std::memcpy(chain.data() + 16 - from_body, buffer + work.body - from_body, from_body);
    return chain;
  }

  // The stream's end, after the lanes' body: PKCS#7 padding added or
  // checked, a last partial block, on a one-thread CPU stream started where
  // the body ends, whatever the job's backend and maybe while the job still
  // counts its devices (the list is the job's to check, once). Writes at
  // most len + 16 bytes to `out` (which may be `in`).
  wc_status run_edge(uint64_t position, const uint8_t chain[16], const uint8_t *in, size_t len, uint8_t *out,
                     size_t *out_len) const {
    BackendCipher backend_cipher;
    wc_status status = kCpuBackend.make_cipher(&backend_cipher, cipher_, direction_, key_);
    std::unique_ptr<StreamState> state;
    if (status == WC_OK) status = StreamState::create(&state, std::move(backend_cipher), cipher_, direction_, key_.iv);
    if (status != WC_OK) return status;
    state->start_at(position, chain);
    size_t body = 0;
    size_t last = 0;
    status = state->update(out, len + 16, &body, in, len);
    if (status == WC_OK) status = state->finish(out + body, 16, &last);
    *out_len = body + last;
    return status;
  }

  wc_status process(Lane &lane, const ChunkWork &work, uint8_t *buffer) {
    wc_status status = lane.transform(work.position, work.chain.data(), buffer, buffer, work.body);
    size_t produced = work.body;
    if (status == WC_OK && work.last) {
      size_t edge_out = 0;
      status = run_edge(work.position + work.body, work.edge_chain.data(), buffer + work.body, work.tail,
                        buffer + work.body, &edge_out);
      produced += edge_out;
    }
    if (status != WC_OK) return status;
    status = writer_.write(work.index, work.units, work.position, buffer, produced);
    if (status != WC_OK) return status;
    bytes_out_.fetch_add(produced);
    monitor_.advance(lane.backend(), work.body + work.tail);
    return WC_OK;
  }

  const wc_cipher &cipher_;
  wc_direction direction_;
  const KeyMaterial &key_;
  std::array<uint8_t, 16> iv_{};
  const Endpoint &in_;
  OrderedWriter writer_;
  JobMonitor &monitor_;
  std::atomic<uint64_t> bytes_out_{0};
};

// OFB, CFB8, and CBC and CFB encryption: one stream on one thread, in order,
// in the placement's chunks.
wc_status run_sequential(const Placement &plan, const wc_cipher &cipher, wc_direction direction,
                         const KeyMaterial &key, const Endpoint &in, const Endpoint &out, JobMonitor &monitor,
                         JobTotals *totals) {
  BackendCipher backend_cipher;
  wc_status status = kCpuBackend.make_cipher(&backend_cipher, cipher, direction, key);
  std::unique_ptr<StreamState> state;
  if (status == WC_OK) status = StreamState::create(&state, std::move(backend_cipher), cipher, direction, key.iv);
  if (status != WC_OK) return status;
  const size_t chunk = plan.chunk_bytes();
  // Placed by the file offsets they are read from and written to, so the
  // kernel's copies take their fast case (io_buffer.h); wiped as they go.
  IoBuffer in_buffer;
  IoBuffer out_buffer;
  // The output's room for `len` more bytes, nullptr when memory runs out.
  auto room = [&](size_t len) { return out_buffer.place(len, out.base + totals->bytes_out); };
  auto emit = [&](const uint8_t *bytes, size_t len) {
    const bool ok = write_at(out, bytes, len, totals->bytes_out);
    totals->bytes_out += len;
    return ok ? WC_OK : monitor.fail_io(WC_IO_OUTPUT, errno);
  };
  bool ended = false;
  while (status == WC_OK && !ended && !monitor.stopped()) {
    uint8_t *input = in_buffer.place(chunk, in.base + totals->bytes_in);
    uint8_t *output = room(chunk + 16);
    if (input == nullptr || output == nullptr) {
      status = WC_ERR_OUT_OF_MEMORY;
      break;
    }
    size_t got = 0;
    if (!read_at(in, input, chunk, totals->bytes_in, &got)) {
      status = monitor.fail_io(WC_IO_INPUT, errno);
      break;
    }
    ended = got < chunk;
    size_t produced = 0;
    status = state->update(output, chunk + 16, &produced, input, got);
    if (status == WC_OK) status = emit(output, produced);
    totals->bytes_in += got;
    if (status == WC_OK) monitor.advance(WC_BACKEND_CPU, got);
  }
  if (status == WC_OK && !monitor.stopped()) {
    uint8_t *output = room(16);
    size_t produced = 0;
    status = output == nullptr ? WC_ERR_OUT_OF_MEMORY : state->finish(output, 16, &produced);
    if (status == WC_OK) status = emit(output, produced);
  }
  if (status != WC_OK) monitor.fail(status);
  return monitor.status();
}

}  // namespace

wc_status run_fd_job(const Placement &plan, const wc_cipher &cipher, wc_direction direction,
                     const KeyMaterial &key, int out_fd, int in_fd, JobMonitor &monitor, JobTotals *totals) {
  Endpoint in;
  Endpoint out;
  if (open_input_endpoint(&in, in_fd) != WC_OK) return monitor.fail_io(WC_IO_INPUT, errno);
  if (open_endpoint(&out, out_fd) != WC_OK) return monitor.fail_io(WC_IO_OUTPUT, errno);
  monitor.set_total(in.size);

  // A descriptor job damages no input: its lanes may count the devices
  // beside their first work (plan.device_check()), and its output file is kept
  // only once they are counted. The sequential modes run on one CPU stream.
  wc_status status = WC_OK;
  if (!is_parallel(cipher, direction)) {
    status = run_sequential(plan, cipher, direction, key, in, out, monitor, totals);
  } else {
    std::unique_ptr<LaneSet> lanes;
    // Room for a claim, the 16 bytes a stream carries to the next, and the
    // padding block the edge may add.
    status = LaneSet::create(&lanes, plan, cipher, direction, key, 32);
    if (status != WC_OK) return status;
    Pipeline pipeline(cipher, direction, key, in, out, monitor);
    status = pipeline.run(*lanes, plan.unit_bytes(), totals);
  }
  // The check has failed the job through the monitor where it found no device.
  if (plan.device_check() != nullptr && plan.device_check()->wait() != WC_OK) status = monitor.status();
  if (status == WC_OK) status = confirm_input_end(in, monitor);
  settle_offsets(in, out, *totals);
  return status;
}

}  // namespace warpcrypt::engine
