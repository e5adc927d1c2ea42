#include "engine/file_to_device.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "core/cpu_budget.h"
#include "core/thread_pool.h"
#include "engine/fd_io.h"

namespace warpcrypt::engine {
namespace {

// A slot's size, measured with bench/gpu/file_load_bench.cu on the H200 x2
// machine (a 16 GiB file in /dev/shm, 16 readers a device; the lab notes'
// "Two GPUs in one host again"): to one device 4 MiB slots ran fastest (53
// GB/s, the copy engine's limit; 1 MiB 46, 16 MiB 43), to two 1 MiB (86
// GB/s; 4 MiB 71), where twice the slots share the cache.
constexpr size_t kSlotBytesOneDevice = size_t{4} << 20;
constexpr size_t kSlotBytesSeveralDevices = size_t{1} << 20;
// Readers a device: a read from the page cache is a copy by the kernel, a
// few GB/s a thread; 16 kept one device's copy engine busy in the same
// measurement.
constexpr unsigned kReadersPerDevice = 16;
constexpr size_t kSlotsPerReader = 2;

// A slot's worth of one range.
struct Piece {
  const DeviceRange *range;
  uint64_t at;  // from the range's start
  size_t len;
};

// The first failure, kept for the caller; the other readers stop at their
// next piece.
class Failure {
 public:
  void record(wc_status status) {
    const std::lock_guard lock(mutex_);
    if (status_ == WC_OK) status_ = status;
    failed_ = true;
  }
  bool failed() const { return failed_; }
  wc_status status() const { return status_; }

 private:
  std::mutex mutex_;
  wc_status status_ = WC_OK;
  std::atomic<bool> failed_{false};
};

wc_status read_piece(const Piece &piece, uint8_t *slot) {
  size_t got = 0;
  if (!pread_fully(piece.range->fd, slot, piece.len, piece.range->offset + piece.at, &got)) return WC_ERR_IO;
  return got == piece.len ? WC_OK : WC_ERR_FORMAT;
}

// One reader on `device`: takes the device's pieces in turn from `next`,
// each into the slot whose copy was queued longest ago, once that copy is
// done.
void run_reader(int device, std::span<const Piece> pieces, std::atomic<size_t> &next, size_t slot_bytes,
                const TransferBackend &backend, Failure &failure) {
  std::unique_ptr<TransferBuffers> slots[kSlotsPerReader];
  for (auto &slot : slots) {
    const wc_status leased = backend.lease(&slot, device, 0, slot_bytes);
    if (leased != WC_OK) {
      failure.record(leased);
      return;
    }
  }
  wc_status status = WC_OK;
  for (size_t turn = 0; status == WC_OK && !failure.failed(); ++turn) {
    const size_t i = next++;
    if (i >= pieces.size()) break;
    const Piece &piece = pieces[i];
    TransferBuffers &slot = *slots[turn % kSlotsPerReader];
    status = slot.wait();
    if (status == WC_OK) {
      slot.mark_used(0, piece.len);  // it may hold plaintext: wiped when given back
      status = read_piece(piece, slot.window());
    }
    if (status == WC_OK) status = slot.upload(piece.range->memory + piece.at, slot.window(), piece.len);
  }
  for (auto &slot : slots) {
    const wc_status waited = slot->wait();
    if (status == WC_OK) status = waited;
  }
  if (status != WC_OK) failure.record(status);
}

}  // namespace

wc_status read_to_devices(std::span<const DeviceRange> ranges, const TransferBackend &backend) {
  std::vector<int> devices;
  for (const DeviceRange &range : ranges) {
    if (range.len != 0 && std::find(devices.begin(), devices.end(), range.device) == devices.end()) {
      devices.push_back(range.device);
    }
  }
  if (devices.empty()) return WC_OK;
  const size_t slot_bytes = devices.size() == 1 ? kSlotBytesOneDevice : kSlotBytesSeveralDevices;
  std::vector<std::vector<Piece>> pieces(devices.size());
  for (const DeviceRange &range : ranges) {
    if (range.len == 0) continue;
    const auto d = static_cast<size_t>(std::find(devices.begin(), devices.end(), range.device) - devices.begin());
    for (uint64_t at = 0; at < range.len; at += slot_bytes) {
      pieces[d].push_back({&range, at, static_cast<size_t>(std::min<uint64_t>(slot_bytes, range.len - at))});
    }
  }
  const auto per_device = static_cast<unsigned>(
      std::clamp<size_t>(usable_cpus() / devices.size(), 1, kReadersPerDevice));
  const size_t readers = per_device * devices.size();
  std::vector<std::atomic<size_t>> next(devices.size());
  Failure failure;
  ThreadPool::instance().parallel_for(readers, static_cast<unsigned>(readers), [&](size_t reader) {
    const size_t d = reader % devices.size();
    run_reader(devices[d], pieces[d], next[d], slot_bytes, backend, failure);
  });
  return failure.status();
}

}  // namespace warpcrypt::engine
