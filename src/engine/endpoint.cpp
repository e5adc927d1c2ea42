#include "engine/endpoint.h"

#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

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

}  // namespace

wc_status open_endpoint(Endpoint *end, int fd) { return open_endpoint(end, fd, true); }
wc_status open_input_endpoint(Endpoint *end, int fd) { return open_endpoint(end, fd, false); }

wc_status confirm_input_end(const Endpoint &in, JobMonitor &monitor) {
  if (!in.seekable || monitor.stopped()) return monitor.status();
  uint8_t probe = 0;
  size_t got = 0;
  if (!pread_fully(in.fd, &probe, 1, in.base + in.size, &got)) return monitor.fail_io(errno);
  return got == 0 ? WC_OK : monitor.fail_io(0);
}

wc_status OrderedWriter::write(size_t chunk, uint64_t position, const uint8_t *data, size_t len) {
  if (out_.seekable) {
    return pwrite_fully(out_.fd, data, len, out_.base + position) ? WC_OK : monitor_.fail_io(errno);
  }
  std::unique_lock lock(mutex_);
  // A stopped job never writes this chunk's turn away: poll for the stop.
  while (next_ != chunk) {
    if (monitor_.stopped()) return WC_OK;
    turn_.wait_for(lock, std::chrono::milliseconds(20));
  }
  const bool written = write_fully(out_.fd, data, len);
  ++next_;
  turn_.notify_all();
  return written ? WC_OK : monitor_.fail_io(errno);
}

}  // namespace warpcrypt::engine
