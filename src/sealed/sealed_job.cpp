#include "sealed/sealed_job.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "core/secret_bytes.h"
#include "core/backends.h"
#include "core/thread_pool.h"
#include "engine/endpoint.h"
#include "engine/fd_io.h"
#include "engine/lane_set.h"

namespace warpcrypt::sealed {
namespace {

using engine::Endpoint;
using engine::JobMonitor;
using engine::JobTotals;

// All workers' window buffers together stay below this, so 1 GiB chunks do
// not ask for a window per core.
constexpr uint64_t kBufferBudget = uint64_t{2} << 30;

// One worker: an AEAD bound to the file key, and its window's buffers,
// which grow to what the input holds as it arrives, never to what the
// (unauthenticated) header's chunk size alone asks for.
struct Worker {
  std::unique_ptr<AeadCipher> cipher;
  wc_backend backend = WC_BACKEND_CPU;
  std::vector<uint8_t> in;
  std::vector<uint8_t> out;
  std::vector<wc_aead_message> messages;
  std::vector<std::array<uint8_t, 12>> nonces;
  std::vector<wc_status> results;

  ~Worker() {
    // Plaintext passed through one of the two.
    secure_wipe(in.data(), in.size());
    secure_wipe(out.data(), out.size());
  }
};

// What the engine options ask for: the CPU workers (auto and staged input
// stay there, as for every descriptor job), GPU workers on the current
// device (`streams` of them), or both. Each window is whole chunks, about
// the engine's chunk size: small for CPU workers alone, whose window stays
// in the core's cache (on the H100 host, 1 MiB windows sealed at 29 GB/s,
// 8 MiB ones at 12), large enough to fill a launch where GPU workers take
// part.
struct Workforce {
  std::vector<std::unique_ptr<Worker>> workers;
  wc_backend backend = WC_BACKEND_CPU;  // cpu, gpu or hybrid
  unsigned gpu_workers = 0;             // planned
  unsigned cpu_workers = 0;             // planned
  uint64_t window_chunks = 1;
};

// Settles the backend, how many workers of each kind and the window.
wc_status plan(const wc_options &options, const Header &header, Workforce *force) {
  force->backend = options.backend == WC_BACKEND_AUTO ? WC_BACKEND_CPU : options.backend;
  engine::EngineShape shape;
  const wc_status status = engine::resolve_shape(&shape, options, force->backend);
  if (status != WC_OK) return status;
  const bool hybrid = force->backend == WC_BACKEND_HYBRID;
  force->gpu_workers = force->backend == WC_BACKEND_GPU || hybrid ? shape.streams : 0;
  force->cpu_workers = force->backend == WC_BACKEND_CPU || hybrid ? shape.cpu_lanes : 0;
  force->window_chunks = std::max<uint64_t>(1, shape.chunk_bytes / header.chunk_size());
  return WC_OK;
}

// Hires the planned workers, each an AEAD bound to the file key: no more
// than `windows` (a small file gives the rest nothing to do), and no more
// than kBufferBudget affords with windows of up to `window_bytes`, but
// hybrid keeps a CPU worker.
wc_status hire(Workforce &force, const Header &header, const FileKey &key, uint64_t windows, uint64_t window_bytes) {
  const uint64_t affordable = std::max<uint64_t>(1, kBufferBudget / (2 * std::max<uint64_t>(1, window_bytes)));
  const std::span<const uint8_t> key_bytes(key.bytes.data(), key.len);
  for (unsigned i = 0; i < force.gpu_workers && force.workers.size() < std::min(windows, affordable); ++i) {
    auto worker = std::make_unique<Worker>();
    const wc_status status = kCudaBackend.make_aead(&worker->cipher, *header.aead, key_bytes);
    // Hybrid carries on with the CPU alone where there is no GPU.
    if (status == WC_ERR_NO_DEVICE && force.backend == WC_BACKEND_HYBRID) break;
    if (status != WC_OK) return status;
    worker->backend = WC_BACKEND_GPU;
    force.workers.push_back(std::move(worker));
  }
  for (unsigned i = 0; i < force.cpu_workers && force.workers.size() < windows &&
                       (i == 0 || force.workers.size() < affordable);
       ++i) {
    auto worker = std::make_unique<Worker>();
    worker->cipher = kCpuBackend.make_aead(*header.aead, key_bytes, 1);
    if (!worker->cipher) return WC_ERR_CRYPTO_LIBRARY;
    force.workers.push_back(std::move(worker));
  }
  return WC_OK;
}

// Makes `buffer` at least `len` bytes; WC_ERR_OUT_OF_MEMORY if it cannot.
wc_status reserve(std::vector<uint8_t> &buffer, size_t len) {
  try {
    if (buffer.size() < len) buffer.resize(len);
  } catch (const std::bad_alloc &) {
    return WC_ERR_OUT_OF_MEMORY;
  }
  return WC_OK;
}

void run_workers(Workforce &force, JobMonitor &monitor, const std::function<wc_status(Worker &, bool *)> &step) {
  const auto count = static_cast<unsigned>(force.workers.size());
  ThreadPool::instance().parallel_for(count, count, [&](size_t index) {
    Worker &worker = *force.workers[index];
    bool finished = false;
    while (!finished && !monitor.stopped()) {
      wc_status status = WC_OK;
      try {
        status = step(worker, &finished);
      } catch (const std::bad_alloc &) {
        status = WC_ERR_OUT_OF_MEMORY;
      }
      if (status != WC_OK) monitor.fail(status);
    }
  });
}

// run_workers over the window indices [0, windows), each claimed once.
void run_windows(Workforce &force, JobMonitor &monitor, uint64_t windows,
                 const std::function<wc_status(Worker &, uint64_t window)> &work) {
  std::atomic<uint64_t> next{0};
  run_workers(force, monitor, [&](Worker &worker, bool *finished) {
    const uint64_t window = next.fetch_add(1);
    *finished = window >= windows;
    return *finished ? WC_OK : work(worker, window);
  });
}

// Exactly `len` bytes at `offset` of a regular file into the worker's buffer.
wc_status read_window(Worker &worker, int fd, size_t len, uint64_t offset, JobMonitor &monitor) {
  const wc_status room = reserve(worker.in, len);
  if (room != WC_OK) return room;
  size_t got = 0;
  if (!engine::pread_fully(fd, worker.in.data(), len, offset, &got)) return monitor.fail_io(errno);
  return got == len ? WC_OK : monitor.fail_io(0);  // the file shrank while it was read
}

// A pipe's bytes in windows of `window_bytes`, in order, under a lock. One
// byte beyond each window is read and carried into the next, so the window
// that ends the input knows it: the last chunk's nonce says so.
class WindowReader {
 public:
  WindowReader(int fd, uint64_t window_bytes) : fd_(fd), window_bytes_(window_bytes) {}

  // Fills `buffer`, grown as bytes arrive up to window_bytes + 1, so a short
  // input costs little memory whatever chunk size its header claims.
  // *finished once the input ended in an earlier window.
  wc_status next(std::vector<uint8_t> &buffer, uint64_t *index, size_t *len, bool *last, bool *finished,
                 JobMonitor &monitor) {
    std::lock_guard lock(mutex_);
    *finished = ended_;
    if (ended_) return WC_OK;
    const size_t want = window_bytes_ + 1;
    size_t have = 0;
    if (carrying_) {
      if (reserve(buffer, 1) != WC_OK) return WC_ERR_OUT_OF_MEMORY;
      buffer[have++] = carry_;
    }
    for (size_t step = std::min<size_t>(want, kFirstRead); have < want; step = std::min(want, 2 * step)) {
      if (reserve(buffer, step) != WC_OK) return WC_ERR_OUT_OF_MEMORY;
      size_t got = 0;
      if (!engine::read_fully(fd_, buffer.data() + have, step - have, &got)) return monitor.fail_io(errno);
      have += got;
      if (have < step) break;  // the end of the input
    }
    *index = next_index_++;
    *last = have <= window_bytes_;
    *len = std::min<size_t>(have, window_bytes_);
    carrying_ = !*last;
    if (carrying_) carry_ = buffer[window_bytes_];
    ended_ = *last;
    return WC_OK;
  }

 private:
  static constexpr size_t kFirstRead = size_t{64} << 10;

  int fd_;
  size_t window_bytes_;
  std::mutex mutex_;
  uint64_t next_index_ = 0;
  bool ended_ = false;
  bool carrying_ = false;
  uint8_t carry_ = 0;
};

// Leaves the descriptors' offsets where read() and write() would have.
void settle_offsets(const Endpoint &in, const Endpoint &out, const JobTotals &totals) {
  if (in.seekable) lseek(in.fd, static_cast<off_t>(in.base + totals.bytes_in), SEEK_SET);
  if (out.seekable) lseek(out.fd, static_cast<off_t>(out.base + totals.bytes_out), SEEK_SET);
}

// ---- seal ------------------------------------------------------------------

// What sealing and opening share: the file's header, the output written in
// window order (or at each window's offset), and the byte counts.
class WindowJob {
 public:
  // Seals or opens the window in worker.in (`len` bytes), the chunks from
  // `first_chunk` on, the last of them the file's last when `ends_file`,
  // and writes the result as the window'th piece of the output.
  virtual wc_status process(Worker &worker, uint64_t window, uint64_t first_chunk, size_t len, bool ends_file) = 0;

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
  wc_status emit(const Worker &worker, uint64_t window, uint64_t position, const uint8_t *data, size_t len,
                 uint64_t consumed, uint64_t plaintext) {
    const wc_status written = writer_.write(window, position, data, len);
    if (written != WC_OK) return written;
    bytes_in_.fetch_add(consumed);
    bytes_out_.fetch_add(len);
    monitor_.advance(worker.backend, plaintext);
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

class Sealer : public WindowJob {
 public:
  Sealer(const Header &header, const std::array<uint8_t, kHeaderLen> &header_bytes, const Endpoint &out,
         JobMonitor &monitor)
      : WindowJob(header, header_bytes, out, monitor) {}

  // The plaintext window becomes the window'th piece of the body.
  wc_status process(Worker &worker, uint64_t window, uint64_t first_chunk, size_t len, bool ends_file) override {
    const uint64_t chunk = header_.chunk_size();
    // An empty input still gets its one, empty, last chunk.
    const uint64_t count = std::max<uint64_t>((len + chunk - 1) / chunk, ends_file && first_chunk == 0 ? 1 : 0);
    if (first_chunk + count > kMaxChunks) return WC_ERR_RANGE;
    const wc_status room = reserve(worker.out, len + count * kTagLen);
    if (room != WC_OK) return room;
    worker.messages.resize(count);
    worker.nonces.resize(count);
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t begin = i * chunk;
      const size_t piece = static_cast<size_t>(std::min<uint64_t>(chunk, len - begin));
      uint8_t *sealed = worker.out.data() + i * header_.sealed_chunk_size();
      worker.nonces[i] = chunk_nonce(header_, first_chunk + i, ends_file && i + 1 == count);
      worker.messages[i] = {sealed,  worker.in.data() + begin, piece,       worker.nonces[i].data(),
                            12,      header_bytes_.data(),     kHeaderLen,  sealed + piece};
    }
    const wc_status status = worker.cipher->seal(worker.messages, kTagLen);
    if (status != WC_OK) return status;
    const uint64_t position = kHeaderLen + first_chunk * header_.sealed_chunk_size();
    return emit(worker, window, position, worker.out.data(), len + count * kTagLen, len, len);
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
  wc_status process(Worker &worker, uint64_t window, uint64_t first_chunk, size_t len, bool ends_file) override {
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
    const wc_status room = reserve(worker.out, len - count * kTagLen);
    if (room != WC_OK) return room;
    worker.messages.resize(count);
    worker.nonces.resize(count);
    worker.results.assign(count, WC_OK);
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t at = i * sealed_chunk;
      const size_t piece = static_cast<size_t>(std::min<uint64_t>(sealed_chunk, len - at) - kTagLen);
      worker.nonces[i] = chunk_nonce(header_, first_chunk + i, ends_file && i + 1 == count);
      // The tag member is only read when opening.
      worker.messages[i] = {worker.out.data() + i * header_.chunk_size(),
                            worker.in.data() + at,
                            piece,
                            worker.nonces[i].data(),
                            12,
                            header_bytes_.data(),
                            kHeaderLen,
                            worker.in.data() + at + piece};
    }
    const wc_status status = worker.cipher->open(worker.messages, kTagLen, worker.results.data());
    if (status == WC_ERR_AUTH) {
      for (uint64_t i = 0; i < count; ++i) {
        if (worker.results[i] == WC_ERR_AUTH) monitor_.fail_chunk(first_chunk + i);
      }
      return WC_ERR_AUTH;
    }
    if (status != WC_OK) return status;
    const uint64_t plain_len = len - count * kTagLen;
    const uint64_t window_begin = first_chunk * header_.chunk_size();
    const uint64_t from = std::clamp(begin_, window_begin, window_begin + plain_len);
    const uint64_t to = std::clamp(end_, window_begin, window_begin + plain_len);
    return emit(worker, window, from - begin_, worker.out.data() + (from - window_begin),
                static_cast<size_t>(to - from), len, to - from);
  }

 private:
  uint64_t begin_;
  uint64_t end_;
};

// A pipe's windows in order, each handed to `job` with its first chunk and
// whether it ends the input.
void run_streamed(Workforce &force, JobMonitor &monitor, int fd, uint64_t window_bytes, WindowJob &job) {
  WindowReader reader(fd, window_bytes);
  run_workers(force, monitor, [&](Worker &worker, bool *finished) {
    uint64_t window = 0;
    size_t len = 0;
    bool last = false;
    const wc_status read = reader.next(worker.in, &window, &len, &last, finished, monitor);
    if (read != WC_OK || *finished) return read;
    return job.process(worker, window, window * force.window_chunks, len, last);
  });
}

}  // namespace

wc_status read_header(const Endpoint &in, Header *header, std::array<uint8_t, kHeaderLen> *bytes,
                      const char **detail) {
  size_t got = 0;
  const bool read = in.seekable ? engine::pread_fully(in.fd, bytes->data(), kHeaderLen, in.base, &got)
                                : engine::read_fully(in.fd, bytes->data(), kHeaderLen, &got);
  if (!read) return WC_ERR_IO;
  if (got != kHeaderLen) {
    *detail = "not a sealed file: shorter than the 48-byte header";
    return WC_ERR_FORMAT;
  }
  return decode(*bytes, header, detail);
}

wc_status run_seal_fd(const wc_options &options, const Header &header, std::span<const uint8_t> secret, int out_fd,
                      int in_fd, JobMonitor &monitor, JobTotals *totals) {
  Endpoint in;
  Endpoint out;
  if (engine::open_input_endpoint(&in, in_fd) != WC_OK || engine::open_endpoint(&out, out_fd) != WC_OK) {
    return monitor.fail_io(errno);
  }
  monitor.set_total(in.size);
  FileKey key;
  wc_status status = derive_file_key(header, secret, &key);
  if (status != WC_OK) return status;
  Workforce force;
  status = plan(options, header, &force);
  if (status != WC_OK) return status;
  const uint64_t chunk = header.chunk_size();
  const uint64_t window_plain = force.window_chunks * chunk;
  const uint64_t window_sealed = force.window_chunks * header.sealed_chunk_size();

  const std::array<uint8_t, kHeaderLen> header_bytes = encode(header);
  const bool header_written = out.seekable ? engine::pwrite_fully(out_fd, header_bytes.data(), kHeaderLen, out.base)
                                           : engine::write_fully(out_fd, header_bytes.data(), kHeaderLen);
  if (!header_written) return monitor.fail_io(errno);
  totals->bytes_out = kHeaderLen;

  Sealer sealer(header, header_bytes, out, monitor);
  if (in.seekable) {
    const uint64_t chunks = std::max<uint64_t>(1, (in.size + chunk - 1) / chunk);
    if (chunks > kMaxChunks) return WC_ERR_RANGE;
    const uint64_t windows = (chunks + force.window_chunks - 1) / force.window_chunks;
    status = hire(force, header, key, windows, std::min(window_sealed, in.size + kTagLen));
    if (status != WC_OK) return status;
    run_windows(force, monitor, windows, [&](Worker &worker, uint64_t window) {
      const uint64_t begin = window * window_plain;
      const auto len = static_cast<size_t>(std::min(window_plain, in.size - begin));
      const wc_status read = read_window(worker, in_fd, len, in.base + begin, monitor);
      if (read != WC_OK) return read;
      return sealer.process(worker, window, window * force.window_chunks, len, window + 1 == windows);
    });
  } else {
    status = hire(force, header, key, UINT64_MAX, window_sealed);
    if (status != WC_OK) return status;
    run_streamed(force, monitor, in_fd, window_plain, sealer);
  }
  engine::confirm_input_end(in, monitor);
  sealer.add_totals(totals);
  settle_offsets(in, out, *totals);
  return monitor.status();
}

wc_status run_open_fd(const wc_options &options, const wc_open_params &params, wc_seal_key_source key_source,
                      std::span<const uint8_t> secret, int out_fd, int in_fd, JobMonitor &monitor,
                      JobTotals *totals) {
  Endpoint in;
  Endpoint out;
  if (engine::open_input_endpoint(&in, in_fd) != WC_OK || engine::open_endpoint(&out, out_fd) != WC_OK) {
    return monitor.fail_io(errno);
  }
  const bool whole = params.offset == 0 && params.length == UINT64_MAX;
  if (!whole && !in.seekable) return WC_ERR_INVALID_ARGUMENT;
  Header header;
  std::array<uint8_t, kHeaderLen> header_bytes{};
  const char *detail = nullptr;
  wc_status status = read_header(in, &header, &header_bytes, &detail);
  if (status == WC_ERR_IO) return monitor.fail_io(errno);
  if (status != WC_OK) {
    monitor.fail_with_detail(status, detail);
    return status;
  }
  totals->bytes_in = kHeaderLen;
  if (header.key_source != key_source) {
    monitor.fail_with_detail(WC_ERR_INVALID_ARGUMENT, header.key_source == WC_SEAL_PASSPHRASE
                                                          ? "this file was sealed with a passphrase"
                                                          : "this file was sealed with a key");
    return WC_ERR_INVALID_ARGUMENT;
  }
  if (header.iterations > params.max_iterations) {
    monitor.fail_with_detail(WC_ERR_FORMAT,
                             "the header asks for more PBKDF2 iterations than this reader's limit "
                             "(raise the limit only for a file you expect)");
    return WC_ERR_FORMAT;
  }
  FileKey key;
  status = derive_file_key(header, secret, &key);
  if (status != WC_OK) return status;
  Workforce force;
  status = plan(options, header, &force);
  if (status != WC_OK) return status;
  const uint64_t chunk = header.chunk_size();
  const uint64_t sealed_chunk = header.sealed_chunk_size();
  const uint64_t window_sealed = force.window_chunks * sealed_chunk;

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
    const uint64_t windows = (last - first) / force.window_chunks + 1;
    status = hire(force, header, key, windows, std::min(window_sealed, in.size - kHeaderLen));
    if (status != WC_OK) return status;
    Opener opener(header, header_bytes, out, begin, end, monitor);
    run_windows(force, monitor, windows, [&](Worker &worker, uint64_t window) {
      const uint64_t first_chunk = first + window * force.window_chunks;
      const uint64_t count = std::min(force.window_chunks, last + 1 - first_chunk);
      const bool ends_file = first_chunk + count == layout.chunks;
      const uint64_t at = first_chunk * sealed_chunk;
      const auto len = static_cast<size_t>(std::min(count * sealed_chunk, in.size - kHeaderLen - at));
      const wc_status read = read_window(worker, in_fd, len, in.base + kHeaderLen + at, monitor);
      if (read != WC_OK) return read;
      return opener.process(worker, window, first_chunk, len, ends_file);
    });
    opener.add_totals(totals);
    totals->bytes_in = in.size;  // the offset settles past the file, as after a full read
    engine::confirm_input_end(in, monitor);
  } else {
    monitor.set_total(0);
    status = hire(force, header, key, UINT64_MAX, window_sealed);
    if (status != WC_OK) return status;
    Opener opener(header, header_bytes, out, 0, UINT64_MAX, monitor);
    run_streamed(force, monitor, in_fd, window_sealed, opener);
    opener.add_totals(totals);
  }
  settle_offsets(in, out, *totals);
  return monitor.status();
}

}  // namespace warpcrypt::sealed
