#include "engine/lane_cipher.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "core/backend_tables.h"
#include "engine/lane_scheduler.h"

namespace warpcrypt::engine {

LaneCipher::LaneCipher(const wc_cipher &cipher, std::unique_ptr<LaneSet> lanes, size_t unit_bytes,
                       JobMonitor *monitor)
    : cipher_(cipher), lanes_(std::move(lanes)), unit_bytes_(unit_bytes), min_unit_(kMinCpuChunk),
      monitor_(monitor) {
  if (lanes_->has_late()) min_unit_ = kMinGpuChunk;
  for (size_t i = 0; i < lanes_->size(); ++i) {
    if ((*lanes_)[i].backend() != WC_BACKEND_CPU) min_unit_ = kMinGpuChunk;
  }
}

size_t LaneCipher::unit_for(size_t len) const {
  const size_t share = (len / std::max<size_t>(1, lanes_->size()) + 4095) / 4096 * 4096;
  return std::clamp(share, std::min(min_unit_, unit_bytes_), unit_bytes_);
}

wc_status LaneCipher::transform_at(uint64_t position, const uint8_t chain[16], const uint8_t *in, uint8_t *out,
                                   size_t len) {
  if (len == 0) return WC_OK;
  const size_t unit = unit_for(len);
  const size_t count = (len + unit - 1) / unit;
  const std::vector<uint8_t> chains = piece_chains(cipher_, chain, in, len, unit);
  JobMonitor call_monitor(nullptr, len);
  JobMonitor &monitor = monitor_ != nullptr ? *monitor_ : call_monitor;
  std::atomic<wc_backend> ran{WC_BACKEND_CPU};
  LateLanes *late = nullptr;
  if (lanes_->has_late()) late = lanes_->late(!(kCudaBackend.page_locked(in) && kCudaBackend.page_locked(out)));
  run_lanes_indexed(
      lanes_->size(), count, monitor,
      [&](size_t lane_index, size_t first, size_t units) {
        Lane &lane = (*lanes_)[lane_index];
        const size_t offset = first * unit;
        const size_t n = std::min(units * unit, len - offset);
        const uint8_t *from = in + offset;
        uint8_t *to = out + offset;
        wc_status status;
        if (lane.reaches(from) && lane.reaches(to)) {
          status = lane.transform(position + offset, &chains[16 * first], from, to, n);
        } else {
          uint8_t *staging = lane.staging();
          if (staging == nullptr) return WC_ERR_OUT_OF_MEMORY;
          std::memcpy(staging, from, n);
          status = lane.transform(position + offset, &chains[16 * first], staging, staging, n);
          if (status == WC_OK) std::memcpy(to, staging, n);
        }
        if (status != WC_OK) return status;
        monitor.advance(lane.backend(), n);
        if (lane.backend() != WC_BACKEND_CPU) ran.store(lane.backend(), std::memory_order_relaxed);
        return WC_OK;
      },
      late);
  last_backend_ = ran.load();
  return monitor.status();
}

wc_status make_lane_cipher(std::unique_ptr<RandomAccessCipher> *out, const Placement &shape,
                           const wc_cipher &cipher, wc_direction direction, const KeyMaterial &key,
                           JobMonitor *monitor) {
  std::unique_ptr<LaneSet> lanes;
  const wc_status status = LaneSet::create(&lanes, shape, cipher, direction, key, 0);
  if (status != WC_OK) return status;
  *out = std::make_unique<LaneCipher>(cipher, std::move(lanes), shape.unit_bytes(), monitor);
  return WC_OK;
}

}  // namespace warpcrypt::engine
