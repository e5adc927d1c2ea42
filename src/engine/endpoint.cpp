#include "engine/endpoint.h"

#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/secret_bytes.h"
#include "engine/fd_io.h"

namespace warpcrypt::engine {

namespace {

// Kernel file systems whose regular files make their contents up when read:
// st_size says nothing about how many bytes a read returns.
bool size_is_synthetic(int fd) {
  struct statfs fs{};
  if (fstatfs(fd, &fs) != 0) return true;  // unknown: reading in order is always right
  switch (static_cast<unsigned long>(fs.f_type)) {
    case PROC_SUPER_MAGIC:
    case SYSFS_MAGIC:
    case DEBUGFS_MAGIC:
    case TRACEFS_MAGIC:
    case SECURITYFS_MAGIC:
    case CGROUP_SUPER_MAGIC:
    case CGROUP2_SUPER_MAGIC:
    case BPF_FS_MAGIC:
      return true;
    default:
      return false;
  }
}

wc_status open_endpoint(Endpoint *end, int fd, bool trust_size) {
  struct stat status{};
  if (fstat(fd, &status) != 0) return WC_ERR_IO;
  end->fd = fd;
  end->seekable = S_ISREG(status.st_mode) && (trust_size || (status.st_size > 0 && !size_is_synthetic(fd)));
  if (end->seekable) {
    const off_t offset = lseek(fd, 0, SEEK_CUR);
    if (offset < 0) return WC_ERR_IO;
    end->base = static_cast<uint64_t>(offset);
    end->size = static_cast<uint64_t>(std::max<off_t>(0, status.st_size - offset));
  }
  return WC_OK;
}

// A stream's first read of a window: the window grows from here, doubling
// as bytes arrive.
constexpr size_t kFirstRead = size_t{64} << 10;

}  // namespace

wc_status open_endpoint(Endpoint *end, int fd) { return open_endpoint(end, fd, true); }
wc_status open_input_endpoint(Endpoint *end, int fd) { return open_endpoint(end, fd, false); }

bool read_at(const Endpoint &in, uint8_t *buf, size_t len, uint64_t position, size_t *got) {
  return in.seekable ? pread_fully(in.fd, buf, len, in.base + position, got) : read_fully(in.fd, buf, len, got);
}

bool write_at(const Endpoint &out, const uint8_t *data, size_t len, uint64_t position) {
  return out.seekable ? pwrite_fully(out.fd, data, len, out.base + position) : write_fully(out.fd, data, len);
}

wc_status read_exactly(const Endpoint &in, uint8_t *buf, size_t len, uint64_t position, JobMonitor &monitor) {
  size_t got = 0;
  if (!pread_fully(in.fd, buf, len, in.base + position, &got)) return monitor.fail_io(WC_IO_INPUT, errno);
  return got == len ? WC_OK : monitor.fail_io(WC_IO_INPUT, 0);
}

wc_status confirm_input_end(const Endpoint &in, JobMonitor &monitor) {
  if (!in.seekable || monitor.stopped()) return monitor.status();
  uint8_t probe = 0;
  size_t got = 0;
  if (!pread_fully(in.fd, &probe, 1, in.base + in.size, &got)) return monitor.fail_io(WC_IO_INPUT, errno);
  return got == 0 ? WC_OK : monitor.fail_io(WC_IO_INPUT, 0);
}

void settle_offsets(const Endpoint &in, const Endpoint &out, const JobTotals &totals) {
  if (in.seekable) lseek(in.fd, static_cast<off_t>(in.base + totals.bytes_in), SEEK_SET);
  if (out.seekable) lseek(out.fd, static_cast<off_t>(out.base + totals.bytes_out), SEEK_SET);
}

OrderedReader::OrderedReader(const Endpoint &in, size_t window_bytes, size_t lookahead, JobMonitor &monitor)
    : in_(in), window_bytes_(window_bytes), lookahead_(lookahead), monitor_(monitor), carry_(lookahead) {}

OrderedReader::~OrderedReader() { secure_wipe(carry_.data(), carry_.size()); }

wc_status OrderedReader::next(const Room &room, StreamWindow *window, bool *finished, const InOrder &in_order) {
  std::lock_guard lock(mutex_);
  *finished = ended_;
  if (ended_) return WC_OK;
  const size_t want = window_bytes_ + lookahead_;
  size_t step = std::min(want, kFirstRead);
  uint8_t *buffer = room(step);
  if (buffer == nullptr) return WC_ERR_OUT_OF_MEMORY;
  if (carried_ != 0) std::memcpy(buffer, carry_.data(), carried_);
  size_t have = carried_;
  for (;;) {
    size_t got = 0;
    if (!read_fully(in_.fd, buffer + have, step - have, &got)) return monitor_.fail_io(WC_IO_INPUT, errno);
    have += got;
    if (have < step || step == want) break;  // the end of the input, or the whole window
    step = std::min(want, 2 * step);
    buffer = room(step);
    if (buffer == nullptr) return WC_ERR_OUT_OF_MEMORY;
  }
  window->index = next_index_++;
  window->offset = offset_;
  window->last = have < want;
  window->len = window->last ? have : window_bytes_;
  carried_ = window->last ? 0 : lookahead_;
  if (carried_ != 0) std::memcpy(carry_.data(), buffer + window_bytes_, carried_);
  offset_ += window->len;
  ended_ = window->last;
  if (in_order) in_order(*window, buffer);
  return WC_OK;
}

wc_status OrderedWriter::write(size_t first, size_t chunks, uint64_t position, const uint8_t *data, size_t len) {
  const wc_status status = hand_over(first, chunks, position, data, len);
  wait_written(first);
  return status;
}

wc_status OrderedWriter::hand_over(size_t first, size_t chunks, uint64_t position, const uint8_t *data,
                                   size_t len) {
  if (out_.seekable) return write_at(out_, data, len, position) ? WC_OK : monitor_.fail_io(WC_IO_OUTPUT, errno);
  std::unique_lock lock(mutex_);
  if (monitor_.stopped()) return WC_OK;
  if (next_ != first) {
    waiting_.emplace(first, Piece{chunks, position, data, len});
    return WC_OK;
  }
  wc_status status = WC_OK;
  Piece piece{chunks, position, data, len};
  while (true) {
    // The turn is this call's alone until next_ moves: the others hand
    // their pieces over meanwhile rather than wait on the lock (a pipe's
    // reader may be slow).
    writing_ = next_;
    lock.unlock();
    const bool ok = write_at(out_, piece.data, piece.len, piece.position);
    const int error = errno;
    lock.lock();
    slots_[writing_ % kSlots].notify_all();
    writing_ = SIZE_MAX;
    next_ += piece.chunks;
    if (!ok) {
      status = monitor_.fail_io(WC_IO_OUTPUT, error);
      break;
    }
    const auto after = waiting_.find(next_);
    if (after == waiting_.end() || monitor_.stopped()) break;
    piece = after->second;
    waiting_.erase(after);
  }
  return status;
}

bool OrderedWriter::written(size_t first) {
  if (out_.seekable) return true;
  std::lock_guard lock(mutex_);
  return next_ > first;
}

void OrderedWriter::wait_written(size_t first) {
  if (out_.seekable) return;
  std::unique_lock lock(mutex_);
  // A stopped job writes no piece it has not begun: poll for the stop.
  while (next_ <= first && !(monitor_.stopped() && writing_ != first)) {
    slots_[first % kSlots].wait_for(lock, std::chrono::milliseconds(20));
  }
}

}  // namespace warpcrypt::engine
