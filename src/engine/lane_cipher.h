// Host memory through the engine's lanes: the gpu and hybrid
// backends of every call on host buffers (one-shot, streaming contexts,
// random access and buffer jobs).
#pragma once

#include <memory>

#include "core/cipher_backend.h"
#include "engine/job_monitor.h"
#include "engine/lane_set.h"

namespace warpcrypt::engine {

// The smallest unit a call is cut into, so that a chunk's hand-off costs
// less than it gains: AES-NI runs 64 KiB in 10-20 microseconds, and a GPU
// lane adds a launch and copies of microseconds each. Calls are cut finer
// than the configured chunk, down to this, so that every lane gets a share.
inline constexpr size_t kMinCpuChunk = 64 * 1024;
inline constexpr size_t kMinGpuChunk = 256 * 1024;

// Each transform_at is cut into units that the lanes take from one queue (a
// hybrid set's GPU lanes several at once). Units a lane cannot reach directly (pageable memory for a GPU lane) are
// copied through its staging buffer, on the lane's own thread, so several
// copies run at once.
class LaneCipher final : public RandomAccessCipher {
 public:
  // Calls are cut into units of at most `unit_bytes` (Placement). `monitor`,
  // when given, receives progress and may stop the work; it must outlive the
  // cipher.
  LaneCipher(const wc_cipher &cipher, std::unique_ptr<LaneSet> lanes, size_t unit_bytes,
             JobMonitor *monitor = nullptr);

  wc_status transform_at(uint64_t position, const uint8_t chain[16], const uint8_t *in, uint8_t *out,
                         size_t len) override;
  wc_backend last_backend() const override { return last_backend_; }

 private:
  size_t unit_for(size_t len) const;

  const wc_cipher &cipher_;
  std::unique_ptr<LaneSet> lanes_;
  size_t unit_bytes_;
  size_t min_unit_;  // kMinGpuChunk where a GPU lane may take part, else kMinCpuChunk
  JobMonitor *monitor_;
  wc_backend last_backend_ = WC_BACKEND_CPU;  // gpu when a GPU lane took part in the last call
};

// Builds a LaneCipher with the lanes `shape` describes.
wc_status make_lane_cipher(std::unique_ptr<RandomAccessCipher> *out, const Placement &shape,
                           const wc_cipher &cipher, wc_direction direction, const KeyMaterial &key,
                           JobMonitor *monitor = nullptr);

}  // namespace warpcrypt::engine
