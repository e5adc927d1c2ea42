// The two ends of a descriptor job. A regular file is addressed by offset,
// so every lane can read or write its own chunk at once; anything else (a
// pipe, terminal, socket or device) only in order.
#pragma once

#include <array>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

#include "engine/job_monitor.h"

namespace warpcrypt::engine {

struct Endpoint {
  int fd = -1;
  bool seekable = false;
  uint64_t base = 0;  // the descriptor's offset when the job began
  uint64_t size = 0;  // seekable input: the bytes from base to the end
};

// What a descriptor job consumed and produced.
struct JobTotals {
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
};

// Fills `end` from fstat and the current offset; WC_ERR_IO with errno set
// on failure. A regular file is seekable, with the size fstat gives.
wc_status open_endpoint(Endpoint *end, int fd);
// open_endpoint for the input a job reads: seekable only when fstat's size
// can be trusted. Files of /proc, /sys and their kin report 0 or a page
// where they hold more or less, so they (and any file reporting 0 bytes)
// are read in order to their end, like a pipe.
wc_status open_input_endpoint(Endpoint *end, int fd);

// `len` bytes at `position` from the endpoint's base: pread and pwrite on a
// regular file, which leave its offset alone; read and write in order on
// anything else, where `position` is where the previous call stopped. False
// with errno set on failure; a read stops short only at the end of the input.
bool read_at(const Endpoint &in, uint8_t *buf, size_t len, uint64_t position, size_t *got);
bool write_at(const Endpoint &out, const uint8_t *data, size_t len, uint64_t position);

// Exactly `len` bytes at `position` of a seekable input, whose size says they
// are there: a file that shrank while it was read fails the job (fail_io with errno 0).
wc_status read_exactly(const Endpoint &in, uint8_t *buf, size_t len, uint64_t position, JobMonitor &monitor);

// After a seekable input was read at offsets up to its size: fails the job
// (WC_ERR_IO, detail) if the file has grown since, so a growing file never
// gives a silently short result. A file that shrank already failed its reads
// (fail_io with errno 0).
wc_status confirm_input_end(const Endpoint &in, JobMonitor &monitor);

// Leaves the descriptors' offsets where read() and write() would have: past
// what the job consumed and wrote. Pipes have none to leave.
void settle_offsets(const Endpoint &in, const Endpoint &out, const JobTotals &totals);

// One window of an input read in order.
struct StreamWindow {
  size_t index = 0;     // the windows before it
  uint64_t offset = 0;  // the input bytes before it
  size_t len = 0;
  bool last = false;  // the input ends in it
};

// Input in windows, for descriptors that have no offsets: each claim reads
// the next window, in order under a lock, into the claiming lane's buffer.
// `lookahead` bytes beyond the window are read with it and carried into the
// next, so the window that ends the input knows it: a read that gets all it
// asked for is a window of `window_bytes`, a shorter one the last window,
// holding everything that was left (up to window_bytes + lookahead - 1).
class OrderedReader {
 public:
  // The claiming lane's buffer, grown to at least `len` bytes with its
  // contents kept; nullptr when memory runs out.
  using Room = std::function<uint8_t *(size_t len)>;
  // Called under the reader's lock with each window and its bytes, before
  // the next window is read: what depends on the input's order (a chain of
  // ciphertext) is taken there.
  using InOrder = std::function<void(const StreamWindow &window, const uint8_t *data)>;

  OrderedReader(const Endpoint &in, size_t window_bytes, size_t lookahead, JobMonitor &monitor);
  // The carried bytes may be plaintext.
  ~OrderedReader();
  OrderedReader(const OrderedReader &) = delete;
  OrderedReader &operator=(const OrderedReader &) = delete;

  // Reads the next window into the buffer `room` gives, which grows as bytes
  // arrive, so a short input costs little memory whatever window it was cut
  // for. Sets *finished instead once an earlier window ended the input.
  wc_status next(const Room &room, StreamWindow *window, bool *finished, const InOrder &in_order = nullptr);

  // The input bytes handed out in windows; read once the lanes have stopped.
  uint64_t bytes_read() const { return offset_; }

 private:
  const Endpoint &in_;
  size_t window_bytes_;
  size_t lookahead_;
  JobMonitor &monitor_;
  std::mutex mutex_;
  size_t next_index_ = 0;
  uint64_t offset_ = 0;
  bool ended_ = false;
  std::vector<uint8_t> carry_;  // lookahead_ bytes long
  size_t carried_ = 0;          // 0 before the first window, else lookahead_
};

// Output in chunk order for descriptors that have no offsets; at each
// chunk's offset (from the endpoint's base) for regular files, from any
// lane at any time. A piece is the bytes of `chunks` chunks from index
// `first` on, which belong at `position`; every chunk index from 0 on must
// be handed over exactly once, or the job must stop.
class OrderedWriter {
 public:
  OrderedWriter(const Endpoint &out, JobMonitor &monitor) : out_(out), monitor_(monitor) {}

  // hand_over(), then waits until the piece is written (or the job stopped).
  wc_status write(size_t first, size_t chunks, uint64_t position, const uint8_t *data, size_t len);

  // Writes a piece whose turn has come, then the pieces handed over for the
  // turns after it; a piece whose turn has not come is left here, and the
  // caller goes on while whoever writes the turn before it writes it too.
  // Its bytes must stay as they are until written(first) (or the job
  // stopped: then it may never be written). Returns the status of the writes
  // made in this call, the caller's and the others'. A stopped job writes
  // nothing more.
  wc_status hand_over(size_t first, size_t chunks, uint64_t position, const uint8_t *data, size_t len);

  // Whether the piece from chunk `first` is written, and no longer read from.
  bool written(size_t first);
  // Waits until it is written, or the job stopped and nobody writes it.
  void wait_written(size_t first);

 private:
  struct Piece {
    size_t chunks;
    uint64_t position;
    const uint8_t *data;
    size_t len;
  };
  // A lane waiting for its piece to be written sleeps on the piece's slot,
  // and each write wakes that slot: the lane whose piece it was, not every
  // lane that waits (a 1 GiB age file to /dev/null on the H100 host's 16
  // lanes, when every lane waited for its turn: 4,600-9,400 voluntary
  // context switches with one condition for all, 950-1,340 with the slots).
  // Pieces a multiple of kSlots apart share a slot, and recheck.
  static constexpr size_t kSlots = 64;

  const Endpoint &out_;
  JobMonitor &monitor_;
  std::mutex mutex_;
  std::array<std::condition_variable, kSlots> slots_;
  std::map<size_t, Piece> waiting_;   // handed over before their turn, by first chunk
  size_t next_ = 0;                   // the first chunk not yet written
  size_t writing_ = SIZE_MAX;         // the first chunk of the piece being written
};

}  // namespace warpcrypt::engine
