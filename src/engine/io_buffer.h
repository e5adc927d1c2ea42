// A buffer for reads and writes at file offsets, placed so that the
// kernel's copy between it and the page cache never takes its slow case.
//
// Linux copies between the page cache and user memory with `rep movsb`. On
// the 2-core dev machine (AMD EPYC, Zen 4, kernel 6.18), 1 MiB pieces of a
// tmpfs file (bench/page_copy_bench.cpp) were read about 3.5 times slower,
// and written about 2.9 times slower, where the copy's destination lay 1 to
// 15 bytes past its source, counted within a 4 KiB page; 1.6 and 1.3 times
// slower at 16 to 31 bytes. malloc's large blocks start 16 bytes into a
// page, so reading a page-aligned file offset into one is the slow case:
// that is what made sealing an age file slower than opening it
// (docs/lab-notes/performance-history.md). This buffer is page-aligned and starts its bytes
// on a cache line at most 64 bytes in, chosen from the file offset so that
// the two are never 1 to 31 bytes apart either way.
#pragma once

#include <cstddef>
#include <cstdint>

namespace warpcrypt::engine {

// What memory a buffer takes. Page-locked memory comes from the process's
// one pool (CudaBackend::alloc_pinned); where it cannot be had (no device,
// or the driver refuses) it is pageable memory: the lane's AEAD then stages
// it (engine/staged_aead.h), which is slower but the same bytes.
enum class HostMemory { pageable, page_locked };

class IoBuffer {
 public:
  explicit IoBuffer(HostMemory memory = HostMemory::pageable) : wanted_(memory) {}
  // What it held may be plaintext: wiped.
  ~IoBuffer();
  IoBuffer(const IoBuffer &) = delete;
  IoBuffer &operator=(const IoBuffer &) = delete;

  // Room for `len` bytes to be read from or written to `file_offset`:
  // returns where they begin (data() until the next call), or nullptr when
  // memory runs out. The bytes held are kept where `file_offset` is as far
  // into its page as the one before, as for a window read in order and
  // grown as its bytes arrive; otherwise they are the caller's to refill.
  uint8_t *place(size_t len, uint64_t file_offset);
  uint8_t *data() const { return memory_.bytes + lead_; }

  // Wipes what it held and gives the memory back; place() allocates anew.
  void release();

 private:
  // Page-aligned memory and how it was had, so that it goes back the same
  // way; `held`, how far into it bytes were placed, is what is wiped then.
  struct Memory {
    uint8_t *bytes = nullptr;
    size_t capacity = 0;
    bool page_locked = false;
    size_t held = 0;
  };
  Memory allocate(size_t capacity) const;
  static void give_back(Memory &memory);

  HostMemory wanted_;
  Memory memory_;
  size_t lead_ = 0;  // where the bytes begin
};

}  // namespace warpcrypt::engine
