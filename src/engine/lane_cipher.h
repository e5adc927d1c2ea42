// Host memory through the engine's lanes: the gpu and hybrid
// backends of every call on host buffers (one-shot, streaming contexts,
// random access and buffer jobs).
#pragma once

#include <memory>

#include "core/backend.h"
#include "engine/job_monitor.h"
#include "engine/lane_set.h"

namespace warpcrypt::engine {

// Each transform_at is cut into chunks that the lanes take from one queue.
// Chunks a lane cannot reach directly (pageable memory for a GPU lane) are
// copied through its staging buffer, on the lane's own thread, so several
// copies run at once.
class LaneCipher final : public RandomAccessCipher {
 public:
  // `monitor`, when given, receives progress and may stop the work; it must
  // outlive the cipher.
  LaneCipher(const wc_cipher &cipher, std::unique_ptr<LaneSet> lanes, size_t chunk_bytes,
             JobMonitor *monitor = nullptr);

  wc_status transform_at(uint64_t position, const uint8_t chain[16], const uint8_t *in, uint8_t *out,
                         size_t len) override;
  wc_backend last_backend() const override { return lanes_->last_backend(); }

 private:
  size_t chunk_for(size_t len) const;

  const wc_cipher &cipher_;
  std::unique_ptr<LaneSet> lanes_;
  size_t chunk_bytes_;
  JobMonitor *monitor_;
};

// Builds a LaneCipher with the lanes `shape` describes.
wc_status make_lane_cipher(std::unique_ptr<RandomAccessCipher> *out, const EngineShape &shape,
                           const wc_cipher &cipher, wc_direction direction, const KeyMaterial &key,
                           JobMonitor *monitor = nullptr);

}  // namespace warpcrypt::engine
