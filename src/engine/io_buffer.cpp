#include "engine/io_buffer.h"

#include <cstring>
#include <new>

#include "core/backend_tables.h"
#include "core/secret_bytes.h"

namespace warpcrypt::engine {
namespace {

constexpr size_t kPage = 4096;
constexpr size_t kCacheLine = 64;
// The copies that crawl: the destination 1 to 31 bytes past the source,
// counted within a page (io_buffer.h).
constexpr size_t kSlowReach = 31;

// Where in a page the bytes for `file_offset` begin: at the page's start
// (a cache line's start for the cipher, and the file's own place for the
// page-aligned offsets of a plaintext), unless that leaves them within
// kSlowReach bytes of the file's, either way: a read then lands just past
// the page cache's bytes, or a write just past the buffer's. One cache line
// on, neither does.
size_t lead_for(uint64_t file_offset) {
  const auto in_page = static_cast<size_t>(file_offset % kPage);
  const bool near = in_page != 0 && (in_page <= kSlowReach || in_page >= kPage - kSlowReach);
  return near ? kCacheLine : 0;
}

}  // namespace

void IoBuffer::PageFree::operator()(uint8_t *memory) const {
  if (page_locked) {
    kCudaBackend.free_pinned(memory);
  } else {
    ::operator delete(memory, std::align_val_t{kPage});
  }
}

// Page-locked memory comes page-aligned (cudaMallocHost).
IoBuffer::Memory IoBuffer::allocate(size_t capacity) const {
  if (wanted_ == HostMemory::page_locked) {
    void *locked = nullptr;
    if (kCudaBackend.alloc_pinned(&locked, capacity) == WC_OK) {
      return Memory(static_cast<uint8_t *>(locked), PageFree{true});
    }
  }
  return Memory(static_cast<uint8_t *>(::operator new(capacity, std::align_val_t{kPage}, std::nothrow)), PageFree{false});
}

IoBuffer::~IoBuffer() { release(); }

void IoBuffer::release() {
  secure_wipe(memory_.get(), capacity_);
  memory_.reset();
  capacity_ = 0;
  lead_ = 0;
}

uint8_t *IoBuffer::place(size_t len, uint64_t file_offset) {
  const size_t lead = lead_for(file_offset);
  if (memory_ && lead + len <= capacity_) {
    lead_ = lead;
    return data();
  }
  // Room for either lead, so that a window never grows the buffer for its
  // page offset alone.
  const size_t capacity = len + kCacheLine;
  Memory grown = allocate(capacity);
  if (!grown) return nullptr;
  if (memory_ && lead == lead_) std::memcpy(grown.get() + lead, data(), capacity_ - lead_);
  secure_wipe(memory_.get(), capacity_);
  memory_ = std::move(grown);
  capacity_ = capacity;
  lead_ = lead;
  return data();
}

}  // namespace warpcrypt::engine
