// A transfer lane's buffers (core/transfer_buffers.h) as they would be on a
// device, in host memory, for the engine's tests without a GPU: copies are
// made as they are queued, and the stream has always passed them. A window
// starts filled with kUntouched; what its user marked as used is what the
// pool wipes, so a byte past the mark that changed is plaintext the wipe
// would leave behind, which written_past_mark() then reports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/transfer_buffers.h"

namespace wctest {

inline constexpr uint8_t kUntouched = 0xC5;

class HostTransfer final : public warpcrypt::TransferBuffers {
 public:
  HostTransfer(size_t device_bytes, size_t window_bytes);
  ~HostTransfer() override;

  wc_cuda_stream stream() const override { return nullptr; }
  uint8_t *device() const override { return device_.data(); }
  uint8_t *window() const override { return window_.data(); }
  wc_status upload(uint8_t *device, const uint8_t *host, size_t len) override;
  wc_status download(uint8_t *host, const uint8_t *device, size_t len) override;
  wc_status wait() override { return WC_OK; }
  void mark_used(size_t device_bytes, size_t window_bytes) override;

  // Whether any HostTransfer destroyed since the last reset held a changed
  // byte past its mark.
  static bool written_past_mark();
  static void reset_written_past_mark();

 private:
  mutable std::vector<uint8_t> device_;
  mutable std::vector<uint8_t> window_;
  size_t window_used_ = 0;
};

}  // namespace wctest
