// The two ends of a descriptor job. A regular file is addressed by offset,
// so every lane can read or write its own chunk at once; anything else (a
// pipe, terminal, socket or device) only in order.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "engine/job_monitor.h"

namespace warpcrypt::engine {

struct Endpoint {
  int fd = -1;
  bool seekable = false;
  uint64_t base = 0;  // the descriptor's offset when the job began
  uint64_t size = 0;  // seekable input: the bytes from base to the end
};

// Fills `end` from fstat and the current offset; WC_ERR_IO with errno set
// on failure. A regular file is seekable, with the size fstat gives.
wc_status open_endpoint(Endpoint *end, int fd);
// open_endpoint for the input a job reads: seekable only when fstat's size
// can be trusted. Files of /proc, /sys and their kin report 0 or a page
// where they hold more or less, so they (and any file reporting 0 bytes)
// are read in order to their end, like a pipe.
wc_status open_input_endpoint(Endpoint *end, int fd);

// After a seekable input was read at offsets up to its size: fails the job
// (WC_ERR_IO, detail) if the file has grown since, so a growing file never
// gives a silently short result. A file that shrank already failed its reads
// (fail_io(0)).
wc_status confirm_input_end(const Endpoint &in, JobMonitor &monitor);

// Output in chunk order for descriptors that have no offsets; at each
// chunk's offset (from the endpoint's base) for regular files, from any
// lane at any time.
class OrderedWriter {
 public:
  OrderedWriter(const Endpoint &out, JobMonitor &monitor) : out_(out), monitor_(monitor) {}

  // Chunk `chunk`'s bytes, which belong at `position`. Every chunk index
  // from 0 on must be written exactly once, or the job must stop.
  wc_status write(size_t chunk, uint64_t position, const uint8_t *data, size_t len);

 private:
  const Endpoint &out_;
  JobMonitor &monitor_;
  std::mutex mutex_;
  std::condition_variable turn_;
  size_t next_ = 0;
};

}  // namespace warpcrypt::engine
