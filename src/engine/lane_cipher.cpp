#include "engine/lane_cipher.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace warpcrypt::engine {
namespace {

// Small calls are cut finer than the configured chunk so that every lane
// gets a share, but never below this: a chunk's hand-off and, on a GPU
// lane, its launch and copies cost microseconds.
constexpr size_t kMinChunk = 256 * 1024;

}  // namespace

LaneCipher::LaneCipher(const wc_cipher &cipher, std::unique_ptr<LaneSet> lanes, size_t chunk_bytes,
                       JobMonitor *monitor)
    : cipher_(cipher), lanes_(std::move(lanes)), chunk_bytes_(chunk_bytes), monitor_(monitor) {}

size_t LaneCipher::chunk_for(size_t len) const {
  const size_t share = (len / std::max<size_t>(1, lanes_->size()) + 4095) / 4096 * 4096;
  return std::clamp(share, std::min(kMinChunk, chunk_bytes_), chunk_bytes_);
}

wc_status LaneCipher::transform_at(uint64_t position, const uint8_t chain[16], const uint8_t *in, uint8_t *out,
                                   size_t len) {
  if (len == 0) return WC_OK;
  const size_t chunk = chunk_for(len);
  const size_t count = (len + chunk - 1) / chunk;
  const std::vector<uint8_t> chains = piece_chains(cipher_, chain, in, len, chunk);
  JobMonitor call_monitor(nullptr, len);
  JobMonitor &monitor = monitor_ != nullptr ? *monitor_ : call_monitor;
  lanes_->run_indexed(count, monitor, [&](Lane &lane, size_t i) {
    const size_t offset = i * chunk;
    const size_t n = std::min(chunk, len - offset);
    const uint8_t *from = in + offset;
    uint8_t *to = out + offset;
    wc_status status;
    if (lane.reaches(from) && lane.reaches(to)) {
      status = lane.transform(position + offset, &chains[16 * i], from, to, n);
    } else {
      uint8_t *staging = lane.staging();
      if (staging == nullptr) return WC_ERR_OUT_OF_MEMORY;
      std::memcpy(staging, from, n);
      status = lane.transform(position + offset, &chains[16 * i], staging, staging, n);
      if (status == WC_OK) std::memcpy(to, staging, n);
    }
    if (status == WC_OK) monitor.advance(lane.backend(), n);
    return status;
  });
  return monitor.status();
}

wc_status make_lane_cipher(std::unique_ptr<RandomAccessCipher> *out, const EngineShape &shape,
                           const wc_cipher &cipher, wc_direction direction, const KeyMaterial &key,
                           JobMonitor *monitor) {
  std::unique_ptr<LaneSet> lanes;
  const wc_status status = LaneSet::create(&lanes, shape, cipher, direction, key, shape.chunk_bytes);
  if (status != WC_OK) return status;
  *out = std::make_unique<LaneCipher>(cipher, std::move(lanes), shape.chunk_bytes, monitor);
  return WC_OK;
}

}  // namespace warpcrypt::engine
