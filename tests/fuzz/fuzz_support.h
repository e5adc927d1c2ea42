// What the fuzz targets share: failing loudly, and pipes whose contents are
// written before the call that reads them.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>

namespace warpcrypt::fuzz {

// An invariant the target checks; abort() makes libFuzzer keep the input.
inline void require(bool holds, const char *what) {
  if (holds) return;
  std::fprintf(stderr, "fuzz target: %s\n", what);
  std::abort();
}

inline void write_all(int fd, std::span<const uint8_t> bytes) {
  while (!bytes.empty()) {
    const ssize_t written = write(fd, bytes.data(), bytes.size());
    require(written > 0, "write failed");
    bytes = bytes.subspan(static_cast<size_t>(written));
  }
}

class Pipe {
 public:
  Pipe() { require(pipe2(ends_, O_CLOEXEC) == 0, "pipe2 failed"); }
  ~Pipe() {
    close_read();
    close_write();
  }
  Pipe(const Pipe &) = delete;
  Pipe &operator=(const Pipe &) = delete;

  int read_end() const { return ends_[0]; }
  int write_end() const { return ends_[1]; }
  void close_read() { close_end(0); }
  void close_write() { close_end(1); }

  // Whether `bytes` fit with no reader, growing the pipe if need be: a
  // single-threaded target that writes more than that before reading blocks
  // for good.
  bool holds(size_t bytes) {
    if (static_cast<size_t>(fcntl(ends_[1], F_GETPIPE_SZ)) >= bytes) return true;
    const int grown = fcntl(ends_[1], F_SETPIPE_SZ, static_cast<int>(std::min<size_t>(bytes, INT32_MAX)));
    return grown >= 0 && static_cast<size_t>(grown) >= bytes;
  }

 private:
  void close_end(int end) {
    if (ends_[end] >= 0) close(ends_[end]);
    ends_[end] = -1;
  }
  int ends_[2] = {-1, -1};
};

}  // namespace warpcrypt::fuzz
