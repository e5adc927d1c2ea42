#include "engine/transfer_lane.h"

#include "core/thread_pool.h"

namespace warpcrypt::engine {

wc_status TransferLane::lease(std::unique_ptr<TransferLane> *out, LeaseTransfer lease_buffers, int device,
                              size_t bytes, size_t scratch, unsigned copy_workers) {
  std::unique_ptr<TransferBuffers> buffers;
  const wc_status status = lease_buffers(&buffers, device, bytes, bytes + scratch);
  if (status == WC_OK) out->reset(new TransferLane(std::move(buffers), bytes, scratch, copy_workers));
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

// The window is marked for the pool's wipe only where the bytes pass
// through it: a caller's page-locked memory is the caller's to wipe.
wc_status TransferLane::upload_from(const uint8_t *host, size_t len) {
  buffers_->mark_used(len, host == window() ? len : 0);
  return buffers_->upload(device(), host, len);
}

wc_status TransferLane::download_to(uint8_t *host, size_t len) {
  buffers_->mark_used(len, host == window() ? len : 0);
  return buffers_->download(host, device(), len);
}

}  // namespace warpcrypt::engine
