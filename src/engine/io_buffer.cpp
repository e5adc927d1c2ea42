#include "engine/io_buffer.h"

#include <algorithm>
#include <cstring>
#include <new>

#include "core/backend_tables.h"
#include "core/cipher_backend.h"
#include "core/secret_bytes.h"

namespace warpcrypt::engine {
namespace {

constexpr size_t kPage = kHostPageBytes;
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

// Page-locked memory comes page-aligned (cudaMallocHost).
IoBuffer::Memory IoBuffer::allocate(size_t capacity) const {
  if (wanted_ == HostMemory::page_locked) {
    void *locked = nullptr;
    if (kCudaBackend.alloc_pinned(&locked, capacity) == WC_OK) return {static_cast<uint8_t *>(locked), capacity, true};
  }
  return {static_cast<uint8_t *>(::operator new(capacity, std::align_val_t{kPage}, std::nothrow)), capacity, false};
}

// What the memory held may be plaintext: the pool wipes page-locked memory
// as it takes it back; pageable memory is wiped here.
void IoBuffer::give_back(Memory &memory) {
  if (memory.bytes == nullptr) return;
  if (memory.page_locked) {
    kCudaBackend.free_pinned(memory.bytes, memory.held);
  } else {
    secure_wipe(memory.bytes, memory.held);
    ::operator delete(memory.bytes, std::align_val_t{kPage});
  }
  memory = Memory{};
}

IoBuffer::~IoBuffer() { release(); }

void IoBuffer::release() {
  give_back(memory_);
  lead_ = 0;
}

uint8_t *IoBuffer::place(size_t len, uint64_t file_offset) {
  const size_t lead = lead_for(file_offset);
  if (memory_.bytes != nullptr && lead + len <= memory_.capacity) {
    lead_ = lead;
    memory_.held = std::max(memory_.held, lead + len);
    return data();
  }
  // Room for either lead, so that a window never grows the buffer for its
  // page offset alone.
  Memory grown = allocate(len + kCacheLine);
  if (grown.bytes == nullptr) return nullptr;
  if (memory_.bytes != nullptr && lead == lead_) {
    std::memcpy(grown.bytes + lead, data(), memory_.capacity - lead_);
  }
  give_back(memory_);
  memory_ = grown;
  memory_.held = lead + len;
  lead_ = lead;
  return data();
}

}  // namespace warpcrypt::engine
