// Whole reads and writes on file descriptors, retried across short transfers
// and EINTR. Each returns false with errno set on failure.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace warpcrypt::engine {

// Reads until `len` bytes or end of file; *got says how many arrived.
bool read_fully(int fd, uint8_t *buf, size_t len, size_t *got);
bool pread_fully(int fd, uint8_t *buf, size_t len, uint64_t offset, size_t *got);
bool write_fully(int fd, const uint8_t *buf, size_t len);
bool pwrite_fully(int fd, const uint8_t *buf, size_t len, uint64_t offset);

}  // namespace warpcrypt::engine
