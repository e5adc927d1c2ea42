#include "engine/fd_io.h"

#include <unistd.h>

#include <cerrno>

namespace warpcrypt::engine {
namespace {

// Runs `transfer(done)` until `len` bytes have moved, it reports end of file
// (0) or it fails; EINTR is retried.
template <typename Transfer>
bool transfer_fully(size_t len, size_t *moved, Transfer transfer) {
  size_t done = 0;
  while (done < len) {
    const ssize_t n = transfer(done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *moved = done;
      return false;
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  *moved = done;
  return true;
}

}  // namespace

bool read_fully(int fd, uint8_t *buf, size_t len, size_t *got) {
  return transfer_fully(len, got, [&](size_t done) { return read(fd, buf + done, len - done); });
}

bool pread_fully(int fd, uint8_t *buf, size_t len, uint64_t offset, size_t *got) {
  return transfer_fully(len, got, [&](size_t done) {
    return pread(fd, buf + done, len - done, static_cast<off_t>(offset + done));
  });
}

bool write_fully(int fd, const uint8_t *buf, size_t len) {
  size_t written = 0;
  const bool ok = transfer_fully(len, &written, [&](size_t done) { return write(fd, buf + done, len - done); });
  // A write that makes no progress (0) would loop forever: call it a full device.
  if (ok && written < len) errno = ENOSPC;
  return ok && written == len;
}

bool pwrite_fully(int fd, const uint8_t *buf, size_t len, uint64_t offset) {
  size_t written = 0;
  const bool ok = transfer_fully(len, &written, [&](size_t done) {
    return pwrite(fd, buf + done, len - done, static_cast<off_t>(offset + done));
  });
  if (ok && written < len) errno = ENOSPC;
  return ok && written == len;
}

}  // namespace warpcrypt::engine
