#include "sealed/sealed_job.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <memory>
#include <new>
#include <vector>

#include "core/secret_bytes.h"
#include "engine/backend_policy.h"
#include "engine/lane_scheduler.h"
#include "engine/lane_set.h"

namespace warpcrypt::sealed {
namespace {

using engine::Endpoint;
using engine::JobMonitor;
using engine::JobTotals;

// All lanes' window buffers together stay below this, so 1 GiB chunks do
// not ask for a window per core.
constexpr uint64_t kBufferBudget = uint64_t{2} << 30;

// What one lane of a sealed job works with: an AEAD bound to the file key,
// and its window's buffers, which grow to what the input holds as it
// arrives, never to what the (unauthenticated) header's chunk size alone
// asks for.
struct AeadLane {
  std::unique_ptr<AeadCipher> cipher;
  std::vector<uint8_t> in;
  std::vector<uint8_t> out;
  std::vector<wc_aead_message> messages;
  std::vector<std::array<uint8_t, 12>> nonces;
  std::vector<wc_status> results;

  ~AeadLane() {
    // Plaintext passed through one of the two.
    secure_wipe(in.data(), in.size());
    secure_wipe(out.data(), out.size());
  }
};

using AeadLanes = std::vector<std::unique_ptr<AeadLane>>;

// What the engine options ask for: CPU lanes (auto and staged input stay
// there, as for every descriptor job), GPU lanes on the current device
// (`streams` of them), or both. Each window is whole chunks, about the
// engine's chunk size: small for CPU lanes alone, whose window stays in the
// core's cache (on the H100 host, 1 MiB windows sealed at 29 GB/s, 8 MiB
// ones at 12), large enough to fill a launch where GPU lanes take part.
struct LanePlan {
  wc_backend backend = WC_BACKEND_CPU;  // resolved: cpu, gpu, gpu-ref or hybrid
  unsigned gpu_lanes = 0;
  unsigned cpu_lanes = 0;
  uint64_t window_chunks = 1;
};

wc_status plan_lanes(const wc_options &options, const Header &header, LanePlan *plan, JobMonitor &monitor) {
  plan->backend = options.backend == WC_BACKEND_AUTO ? WC_BACKEND_CPU : options.backend;
  engine::EngineShape shape;
  const wc_status status = engine::resolve_shape(&shape, options, plan->backend, &monitor);
  if (status != WC_OK) return status;
  const bool hybrid = plan->backend == WC_BACKEND_HYBRID;
  plan->gpu_lanes = plan->backend == WC_BACKEND_GPU || hybrid ? shape.streams : 0;
  plan->cpu_lanes = plan->backend == WC_BACKEND_CPU || hybrid ? shape.cpu_lanes : 0;
  plan->window_chunks = std::max<uint64_t>(1, shape.chunk_bytes / header.chunk_size());
  return WC_OK;
}

// Builds the planned lanes, each with an AEAD bound to the file key from
// engine::make_aead (one thread each: the lanes are the parallelism). No
// more than `windows` (a small file gives the rest nothing to do), and no
// more than kBufferBudget affords with windows of up to `window_bytes`, but
// hybrid keeps a CPU lane.
wc_status build_lanes(const LanePlan &plan, const Header &header, const FileKey &key, uint64_t windows,
                      uint64_t window_bytes, AeadLanes *lanes) {
  const uint64_t affordable = std::max<uint64_t>(1, kBufferBudget / (2 * std::max<uint64_t>(1, window_bytes)));
  auto add_lane = [&](wc_backend backend) {
    auto lane = std::make_unique<AeadLane>();
    const wc_status status =
        engine::make_aead(&lane->cipher, backend, *header.aead, {key.bytes.data(), key.len}, 1);
    if (status == WC_OK) lanes->push_back(std::move(lane));
    return status;
  };
  const wc_backend gpu_backend = plan.backend == WC_BACKEND_HYBRID ? WC_BACKEND_GPU : plan.backend;
  for (unsigned i = 0; i < plan.gpu_lanes && lanes->size() < std::min(windows, affordable); ++i) {
    const wc_status status = add_lane(gpu_backend);
    // Hybrid carries on with the CPU alone where there is no GPU.
    if (status == WC_ERR_NO_DEVICE && plan.backend == WC_BACKEND_HYBRID) break;
    if (status != WC_OK) return status;
  }
  for (unsigned i = 0; i < plan.cpu_lanes && lanes->size() < windows && (i == 0 || lanes->size() < affordable);
       ++i) {
    const wc_status status = add_lane(WC_BACKEND_CPU);
    if (status != WC_OK) return status;
  }
  return WC_OK;
}

// Makes `buffer` at least `len` bytes, keeping what it holds;
// WC_ERR_OUT_OF_MEMORY if it cannot.
wc_status reserve(std::vector<uint8_t> &buffer, size_t len) {
  try {
    if (buffer.size() < len) buffer.resize(len);
  } catch (const std::bad_alloc &) {
    return WC_ERR_OUT_OF_MEMORY;
  }
  return WC_OK;
}

// The `len` bytes at `position` of a regular file into the lane's input.
wc_status read_window(AeadLane &lane, const Endpoint &in, size_t len, uint64_t position, JobMonitor &monitor) {
  const wc_status room = reserve(lane.in, len);
  if (room != WC_OK) return room;
  return engine::read_exactly(in, lane.in.data(), len, position, monitor);
}

// The unit of work the lanes run, sealing or opening: one window of whole
// chunks. What both share: the file's header, the output written in window
// order (or at each window's offset), and the byte counts.
class WindowJob {
 public:
  // Seals or opens the window in lane.in (`len` bytes), the chunks from
  // `first_chunk` on, the last of them the file's last when `ends_file`,
  // and writes the result as the window'th piece of the output.
  virtual wc_status process(AeadLane &lane, uint64_t window, uint64_t first_chunk, size_t len, bool ends_file) = 0;

  void add_totals(JobTotals *totals) const {
    totals->bytes_in += bytes_in_.load();
    totals->bytes_out += bytes_out_.load();
  }

 protected:
  WindowJob(const Header &header, const std::array<uint8_t, kHeaderLen> &header_bytes, const Endpoint &out,
            JobMonitor &monitor)
      : header_(header), header_bytes_(header_bytes), monitor_(monitor), writer_(out, monitor) {}
  ~WindowJob() = default;

  // Writes a window's `len` result bytes at output `position`, and counts
  // the `consumed` input bytes and the `plaintext` bytes progress reports.
  wc_status emit(const AeadLane &lane, uint64_t window, uint64_t position, const uint8_t *data, size_t len,
                 uint64_t consumed, uint64_t plaintext) {
    const wc_status written = writer_.write(window, position, data, len);
    if (written != WC_OK) return written;
    bytes_in_.fetch_add(consumed);
    bytes_out_.fetch_add(len);
    monitor_.advance(lane.cipher->backend(), plaintext);
    return WC_OK;
  }

  const Header &header_;
  const std::array<uint8_t, kHeaderLen> &header_bytes_;
  JobMonitor &monitor_;

 private:
  engine::OrderedWriter writer_;
  std::atomic<uint64_t> bytes_in_{0};
  std::atomic<uint64_t> bytes_out_{0};
};

// ---- seal ------------------------------------------------------------------

class Sealer : public WindowJob {
 public:
  Sealer(const Header &header, const std::array<uint8_t, kHeaderLen> &header_bytes, const Endpoint &out,
         JobMonitor &monitor)
      : WindowJob(header, header_bytes, out, monitor) {}

  // The plaintext window becomes the window'th piece of the body.
  wc_status process(AeadLane &lane, uint64_t window, uint64_t first_chunk, size_t len, bool ends_file) override {
    const uint64_t chunk = header_.chunk_size();
    // An empty input still gets its one, empty, last chunk.
    const uint64_t count = std::max<uint64_t>((len + chunk - 1) / chunk, ends_file && first_chunk == 0 ? 1 : 0);
    if (first_chunk + count > kMaxChunks) return WC_ERR_RANGE;
    const wc_status room = reserve(lane.out, len + count * kTagLen);
    if (room != WC_OK) return room;
    lane.messages.resize(count);
    lane.nonces.resize(count);
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t begin = i * chunk;
      const size_t piece = static_cast<size_t>(std::min<uint64_t>(chunk, len - begin));
      uint8_t *sealed = lane.out.data() + i * header_.sealed_chunk_size();
      lane.nonces[i] = chunk_nonce(header_, first_chunk + i, ends_file && i + 1 == count);
      lane.messages[i] = {sealed,  lane.in.data() + begin, piece,       lane.nonces[i].data(),
                          12,      header_bytes_.data(),   kHeaderLen,  sealed + piece};
    }
    const wc_status status = lane.cipher->seal(lane.messages, kTagLen);
    if (status != WC_OK) return status;
    const uint64_t position = kHeaderLen + first_chunk * header_.sealed_chunk_size();
    return emit(lane, window, position, lane.out.data(), len + count * kTagLen, len, len);
  }
};

// ---- open ------------------------------------------------------------------

class Opener : public WindowJob {
 public:
  // Plaintext [begin, end) goes out; the rest of each window is dropped.
  Opener(const Header &header, const std::array<uint8_t, kHeaderLen> &header_bytes, const Endpoint &out,
         uint64_t begin, uint64_t end, JobMonitor &monitor)
      : WindowJob(header, header_bytes, out, monitor), begin_(begin), end_(end) {}

  // The sealed window's plaintext, the part of the range it holds, goes out.
  wc_status process(AeadLane &lane, uint64_t window, uint64_t first_chunk, size_t len, bool ends_file) override {
    const uint64_t sealed_chunk = header_.sealed_chunk_size();
    const uint64_t count = (len + sealed_chunk - 1) / sealed_chunk;
    if (count == 0 || len - (count - 1) * sealed_chunk < kTagLen) {
      monitor_.fail_with_detail(WC_ERR_FORMAT, "truncated sealed file: the last chunk is shorter than its tag");
      return WC_ERR_FORMAT;
    }
    if (first_chunk + count > kMaxChunks) {
      monitor_.fail_with_detail(WC_ERR_FORMAT, "sealed file too long: more than 2^32 chunks");
      return WC_ERR_FORMAT;
    }
    const char *detail = nullptr;
    const uint64_t final_len = len - (count - 1) * sealed_chunk - kTagLen;
    if (ends_file && check_final_chunk(first_chunk + count - 1, final_len, &detail) != WC_OK) {
      monitor_.fail_with_detail(WC_ERR_FORMAT, detail);
      return WC_ERR_FORMAT;
    }
    const wc_status room = reserve(lane.out, len - count * kTagLen);
    if (room != WC_OK) return room;
    lane.messages.resize(count);
    lane.nonces.resize(count);
    lane.results.assign(count, WC_OK);
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t at = i * sealed_chunk;
      const size_t piece = static_cast<size_t>(std::min<uint64_t>(sealed_chunk, len - at) - kTagLen);
      lane.nonces[i] = chunk_nonce(header_, first_chunk + i, ends_file && i + 1 == count);
      // The tag member is only read when opening.
      lane.messages[i] = {lane.out.data() + i * header_.chunk_size(),
                          lane.in.data() + at,
                          piece,
                          lane.nonces[i].data(),
                          12,
                          header_bytes_.data(),
                          kHeaderLen,
                          lane.in.data() + at + piece};
    }
    const wc_status status = lane.cipher->open(lane.messages, kTagLen, lane.results.data());
    if (status == WC_ERR_AUTH) {
      for (uint64_t i = 0; i < count; ++i) {
        if (lane.results[i] == WC_ERR_AUTH) monitor_.fail_chunk(first_chunk + i);
      }
      return WC_ERR_AUTH;
    }
    if (status != WC_OK) return status;
    const uint64_t plain_len = len - count * kTagLen;
    const uint64_t window_begin = first_chunk * header_.chunk_size();
    const uint64_t from = std::clamp(begin_, window_begin, window_begin + plain_len);
    const uint64_t to = std::clamp(end_, window_begin, window_begin + plain_len);
    return emit(lane, window, from - begin_, lane.out.data() + (from - window_begin),
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
void run_streamed(AeadLanes &lanes, const Endpoint &in, uint64_t window_bytes, uint64_t window_chunks,
                  WindowJob &job, JobMonitor &monitor) {
  engine::OrderedReader reader(in, window_bytes, 1, monitor);
  engine::run_lanes(lanes.size(), monitor, [&](size_t lane_index, bool *finished) {
    AeadLane &lane = *lanes[lane_index];
    auto room = [&lane](size_t len) { return reserve(lane.in, len) == WC_OK ? lane.in.data() : nullptr; };
    engine::StreamWindow window;
    const wc_status read = reader.next(room, &window, finished);
    if (read != WC_OK || *finished) return read;
    return job.process(lane, window.index, window.index * window_chunks, window.len, window.last);
  });
}

}  // namespace

wc_status read_header(const Endpoint &in, Header *header, std::array<uint8_t, kHeaderLen> *bytes,
                      const char **detail) {
  size_t got = 0;
  if (!engine::read_at(in, bytes->data(), kHeaderLen, 0, &got)) return WC_ERR_IO;
  if (got != kHeaderLen) {
    *detail = "not a sealed file: shorter than the 48-byte header";
    return WC_ERR_FORMAT;
  }
  return decode(*bytes, header, detail);
}

wc_status accept_header(const Header &header, const wc_open_params &params, wc_seal_key_source key_source,
                        JobMonitor &monitor) {
  if (header.key_source != key_source) {
    monitor.fail_with_detail(WC_ERR_INVALID_ARGUMENT, header.key_source == WC_SEAL_PASSPHRASE
                                                          ? "this file was sealed with a passphrase"
                                                          : "this file was sealed with a key");
    return WC_ERR_INVALID_ARGUMENT;
  }
  const char *detail = nullptr;
  const wc_status status = check_kdf_cost(header, params, &detail);
  if (status != WC_OK) monitor.fail_with_detail(status, detail);
  return status;
}

wc_status seal_chunk(const AeadCipher &cipher, const Header &header,
                     const std::array<uint8_t, kHeaderLen> &header_bytes, uint64_t index, bool last,
                     uint8_t *out, const uint8_t *in, size_t len, JobMonitor &monitor) {
  const bool whole = len == header.chunk_size();
  const bool valid_last = len < header.chunk_size() && (len > 0 || index == 0);
  if (index >= kMaxChunks || !(whole || (last && valid_last))) {
    monitor.fail_with_detail(WC_ERR_INVALID_ARGUMENT,
                             index >= kMaxChunks ? "a sealed file holds at most 2^32 chunks"
                                                 : "every chunk but the last holds exactly the chunk size, "
                                                   "and only an empty file ends with an empty chunk");
    return WC_ERR_INVALID_ARGUMENT;
  }
  const std::array<uint8_t, 12> nonce = chunk_nonce(header, index, last);
  const wc_aead_message message{out, in, len, nonce.data(), nonce.size(), header_bytes.data(), kHeaderLen, out + len};
  const wc_status status = cipher.seal({&message, 1}, kTagLen);
  if (status == WC_OK) monitor.advance(cipher.backend(), len);
  return status;
}

wc_status open_chunk(const AeadCipher &cipher, const Header &header,
                     const std::array<uint8_t, kHeaderLen> &header_bytes, uint64_t index, bool last,
                     uint8_t *out, const uint8_t *in, size_t sealed_len, JobMonitor &monitor) {
  const char *detail = nullptr;
  if (sealed_len < kTagLen) {
    detail = "truncated sealed file: the last chunk is shorter than its tag";
  } else if (index >= kMaxChunks) {
    detail = "sealed file too long: more than 2^32 chunks";
  } else if (!last && sealed_len != header.sealed_chunk_size()) {
    detail = "truncated sealed file: a chunk before the last is shorter than the chunk size";
  } else if (sealed_len > header.sealed_chunk_size()) {
    detail = "bad sealed chunk: longer than the chunk size";
  } else if (last) {
    (void)check_final_chunk(index, sealed_len - kTagLen, &detail);
  }
  if (detail != nullptr) {
    monitor.fail_with_detail(WC_ERR_FORMAT, detail);
    return WC_ERR_FORMAT;
  }
  const size_t len = sealed_len - kTagLen;
  const std::array<uint8_t, 12> nonce = chunk_nonce(header, index, last);
  const wc_aead_message message{out,        in,         len, nonce.data(), nonce.size(), header_bytes.data(),
                                kHeaderLen, const_cast<uint8_t *>(in + len)};
  wc_status result = WC_OK;
  const wc_status status = cipher.open({&message, 1}, kTagLen, &result);
  if (status != WC_OK) {
    secure_wipe(out, len);
    if (status == WC_ERR_AUTH) monitor.fail_chunk(index);
    return status;
  }
  monitor.advance(cipher.backend(), len);
  return WC_OK;
}

wc_status run_seal_fd(const wc_options &options, const Header &header, std::span<const uint8_t> secret, int out_fd,
                      int in_fd, JobMonitor &monitor, JobTotals *totals) {
  Endpoint in;
  Endpoint out;
  if (engine::open_input_endpoint(&in, in_fd) != WC_OK) return monitor.fail_io(WC_IO_INPUT, errno);
  if (engine::open_endpoint(&out, out_fd) != WC_OK) return monitor.fail_io(WC_IO_OUTPUT, errno);
  monitor.set_total(in.size);
  FileKey key;
  wc_status status = derive_file_key(header, secret, &key);
  if (status != WC_OK) return status;
  LanePlan plan;
  status = plan_lanes(options, header, &plan, monitor);
  if (status != WC_OK) return status;
  const uint64_t chunk = header.chunk_size();
  const uint64_t window_plain = plan.window_chunks * chunk;
  const uint64_t window_sealed = plan.window_chunks * header.sealed_chunk_size();

  // A regular file's windows are known before it is read; a pipe's are not.
  uint64_t windows = UINT64_MAX;
  if (in.seekable) {
    const uint64_t chunks = std::max<uint64_t>(1, (in.size + chunk - 1) / chunk);
    if (chunks > kMaxChunks) return WC_ERR_RANGE;
    windows = (chunks + plan.window_chunks - 1) / plan.window_chunks;
  }
  AeadLanes lanes;
  status = build_lanes(plan, header, key, windows,
                       in.seekable ? std::min(window_sealed, in.size + kTagLen) : window_sealed, &lanes);
  if (status != WC_OK) return status;

  const std::array<uint8_t, kHeaderLen> header_bytes = encode(header);
  if (!engine::write_at(out, header_bytes.data(), kHeaderLen, 0)) return monitor.fail_io(WC_IO_OUTPUT, errno);
  totals->bytes_out = kHeaderLen;

  Sealer sealer(header, header_bytes, out, monitor);
  if (in.seekable) {
    engine::run_lanes_indexed(lanes.size(), windows, monitor, [&](size_t lane_index, size_t window) {
      AeadLane &lane = *lanes[lane_index];
      const uint64_t begin = window * window_plain;
      const auto len = static_cast<size_t>(std::min(window_plain, in.size - begin));
      const wc_status read = read_window(lane, in, len, begin, monitor);
      if (read != WC_OK) return read;
      return sealer.process(lane, window, window * plan.window_chunks, len, window + 1 == windows);
    });
  } else {
    run_streamed(lanes, in, window_plain, plan.window_chunks, sealer, monitor);
  }
  engine::confirm_input_end(in, monitor);
  sealer.add_totals(totals);
  engine::settle_offsets(in, out, *totals);
  return monitor.status();
}

wc_status run_open_fd(const wc_options &options, const wc_open_params &params, wc_seal_key_source key_source,
                      std::span<const uint8_t> secret, int out_fd, int in_fd, JobMonitor &monitor,
                      JobTotals *totals) {
  Endpoint in;
  Endpoint out;
  if (engine::open_input_endpoint(&in, in_fd) != WC_OK) return monitor.fail_io(WC_IO_INPUT, errno);
  if (engine::open_endpoint(&out, out_fd) != WC_OK) return monitor.fail_io(WC_IO_OUTPUT, errno);
  const bool whole = params.offset == 0 && params.length == UINT64_MAX;
  if (!whole && !in.seekable) return WC_ERR_INVALID_ARGUMENT;
  Header header;
  std::array<uint8_t, kHeaderLen> header_bytes{};
  const char *detail = nullptr;
  wc_status status = read_header(in, &header, &header_bytes, &detail);
  if (status == WC_ERR_IO) return monitor.fail_io(WC_IO_INPUT, errno);
  if (status != WC_OK) {
    monitor.fail_with_detail(status, detail);
    return status;
  }
  totals->bytes_in = kHeaderLen;
  status = accept_header(header, params, key_source, monitor);
  if (status != WC_OK) return status;
  FileKey key;
  status = derive_file_key(header, secret, &key);
  if (status != WC_OK) return status;
  LanePlan plan;
  status = plan_lanes(options, header, &plan, monitor);
  if (status != WC_OK) return status;
  const uint64_t chunk = header.chunk_size();
  const uint64_t sealed_chunk = header.sealed_chunk_size();
  const uint64_t window_sealed = plan.window_chunks * sealed_chunk;

  AeadLanes lanes;
  if (in.seekable) {
    Layout layout;
    status = layout_of(header, in.size - kHeaderLen, &layout, &detail);
    if (status != WC_OK) {
      monitor.fail_with_detail(status, detail);
      return status;
    }
    const uint64_t begin = std::min(params.offset, layout.plaintext_len);
    const uint64_t end = begin + std::min(params.length, layout.plaintext_len - begin);
    monitor.set_total(end - begin);
    // An empty range still opens the last chunk, so that a wrong key or a
    // damaged file fails as it would for a full read. A range that reaches
    // the end always holds the final chunk: layout_of refused an empty one
    // after chunk 0, so the final chunk holds the last plaintext byte.
    const uint64_t first = begin < end ? begin / chunk : layout.chunks - 1;
    const uint64_t last = begin < end ? (end - 1) / chunk : layout.chunks - 1;
    const uint64_t windows = (last - first) / plan.window_chunks + 1;
    status = build_lanes(plan, header, key, windows, std::min(window_sealed, in.size - kHeaderLen), &lanes);
    if (status != WC_OK) return status;
    Opener opener(header, header_bytes, out, begin, end, monitor);
    engine::run_lanes_indexed(lanes.size(), windows, monitor, [&](size_t lane_index, size_t window) {
      AeadLane &lane = *lanes[lane_index];
      const uint64_t first_chunk = first + window * plan.window_chunks;
      const uint64_t count = std::min(plan.window_chunks, last + 1 - first_chunk);
      const bool ends_file = first_chunk + count == layout.chunks;
      const uint64_t at = kHeaderLen + first_chunk * sealed_chunk;
      const auto len = static_cast<size_t>(std::min(count * sealed_chunk, in.size - at));
      const wc_status read = read_window(lane, in, len, at, monitor);
      if (read != WC_OK) return read;
      return opener.process(lane, window, first_chunk, len, ends_file);
    });
    opener.add_totals(totals);
    totals->bytes_in = in.size;  // the offset settles past the file, as after a full read
    engine::confirm_input_end(in, monitor);
  } else {
    monitor.set_total(0);
    status = build_lanes(plan, header, key, UINT64_MAX, window_sealed, &lanes);
    if (status != WC_OK) return status;
    Opener opener(header, header_bytes, out, 0, UINT64_MAX, monitor);
    run_streamed(lanes, in, window_sealed, plan.window_chunks, opener, monitor);
    opener.add_totals(totals);
  }
  engine::settle_offsets(in, out, *totals);
  return monitor.status();
}

}  // namespace warpcrypt::sealed
