#include "engine/transfer_lane.h"

#include <cstdint>

#include "core/backend_tables.h"
#include "core/thread_pool.h"

namespace warpcrypt::engine {

const TransferBackend &cuda_transfer_backend() {
  static const TransferBackend backend{kCudaBackend.lease_transfer, kCudaBackend.page_locked};
  return backend;
}

wc_status TransferLane::lease(std::unique_ptr<TransferLane> *out, LeaseTransfer lease_buffers, int device,
                              size_t device_bytes, size_t window_bytes, size_t scratch, unsigned copy_workers) {
  std::unique_ptr<TransferBuffers> buffers;
  const wc_status status = lease_buffers(&buffers, device, device_bytes, window_bytes + scratch);
  if (status == WC_OK) out->reset(new TransferLane(std::move(buffers), window_bytes, scratch, copy_workers));
  return status;
}

// One thread copies pageable memory at a fraction of the rate the memory
// system allows: a lane copies on its share of the cores.
void TransferLane::stage(size_t at, const uint8_t *host, size_t len) {
  if (len == 0) return;
  buffers_->mark_used(0, at + len);
  ThreadPool::instance().copy(window() + at, host, len, copy_workers_);
}

void TransferLane::unstage(uint8_t *host, size_t at, size_t len) {
  if (len != 0) ThreadPool::instance().copy(host, window() + at, len, copy_workers_);
}

wc_status TransferLane::upload(size_t at, const uint8_t *from, size_t len) {
  mark(at + len, nullptr, 0);
  return buffers_->upload(device() + at, from, len);
}

wc_status TransferLane::download(uint8_t *to, size_t at, size_t len) {
  mark(at + len, to, len);
  return buffers_->download(to, device() + at, len);
}

void TransferLane::mark(size_t device_end, const uint8_t *host, size_t len) {
  const auto at = reinterpret_cast<uintptr_t>(host) - reinterpret_cast<uintptr_t>(window());
  buffers_->mark_used(device_end, host != nullptr && at < window_bytes_ ? at + len : 0);
}

}  // namespace warpcrypt::engine
