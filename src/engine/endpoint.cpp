#include "engine/endpoint.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "engine/fd_io.h"

namespace warpcrypt::engine {

wc_status open_endpoint(Endpoint *end, int fd) {
  struct stat status{};
  if (fstat(fd, &status) != 0) return WC_ERR_IO;
  end->fd = fd;
  end->seekable = S_ISREG(status.st_mode);
  if (end->seekable) {
    const off_t offset = lseek(fd, 0, SEEK_CUR);
    if (offset < 0) return WC_ERR_IO;
    end->base = static_cast<uint64_t>(offset);
    end->size = static_cast<uint64_t>(std::max<off_t>(0, status.st_size - offset));
  }
  return WC_OK;
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
