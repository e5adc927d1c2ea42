#include "support/host_transfer.h"

#include <algorithm>
#include <atomic>
#include <cstring>

namespace wctest {
namespace {

std::atomic<bool> g_written_past_mark{false};

}  // namespace

HostTransfer::HostTransfer(size_t device_bytes, size_t window_bytes)
    : device_(device_bytes), window_(window_bytes, kUntouched) {}

HostTransfer::~HostTransfer() {
  const size_t marked = std::min(window_used_, window_.size());
  if (std::any_of(window_.begin() + static_cast<std::ptrdiff_t>(marked), window_.end(),
                  [](uint8_t b) { return b != kUntouched; })) {
    g_written_past_mark = true;
  }
}

wc_status HostTransfer::upload(uint8_t *device, const uint8_t *host, size_t len) {
  std::memcpy(device, host, len);
  return WC_OK;
}

wc_status HostTransfer::download(uint8_t *host, const uint8_t *device, size_t len) {
  std::memcpy(host, device, len);
  return WC_OK;
}

void HostTransfer::mark_used(size_t, size_t window_bytes) { window_used_ = std::max(window_used_, window_bytes); }

bool HostTransfer::written_past_mark() { return g_written_past_mark; }
void HostTransfer::reset_written_past_mark() { g_written_past_mark = false; }

}  // namespace wctest
