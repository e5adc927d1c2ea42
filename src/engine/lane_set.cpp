#include "engine/lane_set.h"

#include <string>

#include "core/backend_tables.h"

namespace warpcrypt::engine {

wc_status LaneSet::create(std::unique_ptr<LaneSet> *out, const Placement &shape, const wc_cipher &cipher,
                          wc_direction direction, const KeyMaterial &key, size_t slack) {
  std::unique_ptr<LaneSet> set(new LaneSet(key));
  if (uses_gpu_lanes(shape.backend()) && !shape.gpu_lanes_late()) {
    if (shape.devices().empty()) return WC_ERR_NO_DEVICE;
    for (int device : shape.devices()) {
      const wc_status status =
          kCudaBackend.make_lanes(&set->lanes_, device, shape.streams(), cipher, direction, key, shape.unit_bytes() + slack);
      if (status == WC_OK) continue;
      // Hybrid runs on the CPU alone for a mode the GPU does not run; a
      // device that is missing or failing is an error.
      if (shape.backend() != WC_BACKEND_HYBRID || status != WC_ERR_BACKEND_UNAVAILABLE) return status;
      set->lanes_.clear();
      break;
    }
  }
  if (uses_cpu_lanes(shape.backend())) {
    for (unsigned i = 0; i < shape.cpu_lanes() + shape.spare_cpu_lanes(); ++i) {
      std::unique_ptr<Lane> lane = kCpuBackend.make_lane(cipher, direction, key, shape.unit_bytes() + slack);
      if (!lane) return WC_ERR_CRYPTO_LIBRARY;  // OpenSSL refused the key
      set->lanes_.push_back(std::move(lane));
    }
  }
  set->ready_ = set->lanes_.size();
  if (shape.gpu_lanes_late()) {
    if (shape.devices().empty() && !shape.device_check()) return WC_ERR_NO_DEVICE;
    const size_t capacity = shape.unit_bytes() * shape.gpu_claim_units() + slack;
    const std::string kind = std::string(cipher.name) + (direction == WC_ENCRYPT ? " encrypt" : " decrypt");
    set->late_ = std::make_unique<LateGpuLanes>(
        shape, set->ready_, shape.gpu_claim_units(), kind,
        [raw = set.get(), &cipher, direction, capacity](const std::vector<int> &devices, unsigned streams) {
          return raw->build_gpu_lanes(devices, streams, cipher, direction, capacity);
        });
  }
  *out = std::move(set);
  return WC_OK;
}

LateLanes *LaneSet::late(bool staged) { return late_ ? late_->late(staged) : nullptr; }

wc_status LaneSet::build_gpu_lanes(const std::vector<int> &devices, unsigned streams, const wc_cipher &cipher,
                                   wc_direction direction, size_t capacity) {
  const KeyMaterial key{{key_.data(), key_.size()}, {iv_.data(), iv_.size()}};
  std::vector<std::unique_ptr<Lane>> built;
  wc_status status = WC_OK;
  for (size_t i = 0; i < devices.size() && status == WC_OK; ++i) {
    status = kCudaBackend.make_lanes(&built, devices[i], streams, cipher, direction, key, capacity);
  }
  if (status == WC_OK) late_lanes_ = std::move(built);
  return status;
}

}  // namespace warpcrypt::engine
