// An anonymous memory file (memfd): a regular file no path names, so a job
// can read and write it at any offset from every lane. What it held may be
// plaintext, so it is wiped before it is closed.
#pragma once

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/secret_bytes.h"

namespace warpcrypt::engine {

class MemoryFile {
 public:
  // fd() is -1, errno set, when the kernel refuses one.
  MemoryFile() : fd_(memfd_create("warpcrypt", MFD_CLOEXEC)) {}
  ~MemoryFile() {
    if (fd_ < 0) return;
    struct stat status{};
    if (fstat(fd_, &status) == 0 && status.st_size > 0) {
      const auto len = static_cast<size_t>(status.st_size);
      void *map = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
      if (map != MAP_FAILED) {
        secure_wipe(map, len);
        munmap(map, len);
      }
    }
    close(fd_);
  }
  MemoryFile(const MemoryFile &) = delete;
  MemoryFile &operator=(const MemoryFile &) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

}  // namespace warpcrypt::engine
