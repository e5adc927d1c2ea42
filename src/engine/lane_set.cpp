#include "engine/lane_set.h"

#include <memory>
#include <string>

#include "core/backend_tables.h"
#include "engine/transfer_lane.h"

namespace warpcrypt::engine {
namespace {

// A GPU lane: a transfer lane of `capacity` bytes on the cipher's device.
// Each chunk goes up from the lane's window, where the engine staged it, or
// straight from the caller's page-locked memory, is transformed in place on
// the device and comes back the same way.
class GpuLane final : public Lane {
 public:
  GpuLane(std::shared_ptr<const DeviceCipher> cipher, std::unique_ptr<TransferLane> transfer)
      : cipher_(std::move(cipher)), transfer_(std::move(transfer)) {}

  uint8_t *staging() override { return transfer_->window(); }
  bool reaches(const void *host) const override {
    return host == transfer_->window() || cuda_transfer_backend().page_locked(host);
  }

  wc_status transform(uint64_t position, const uint8_t chain[16], const uint8_t *in, uint8_t *out,
                      size_t len) override {
    if (len == 0) return WC_OK;
    wc_status status = transfer_->upload(0, in, len);
    if (status == WC_OK) status = cipher_->queue(position, chain, transfer_->device(), len, transfer_->stream());
    if (status == WC_OK) status = transfer_->download(out, 0, len);
    const wc_status waited = transfer_->wait();
    return status != WC_OK ? status : waited;
  }

  wc_backend backend() const override { return WC_BACKEND_GPU; }

 private:
  std::shared_ptr<const DeviceCipher> cipher_;
  std::unique_ptr<TransferLane> transfer_;
};

// Appends `streams` GPU lanes on `device`, sharing one keyed cipher.
wc_status append_gpu_lanes(std::vector<std::unique_ptr<Lane>> *lanes, int device, unsigned streams,
                           const wc_cipher &cipher, wc_direction direction, const KeyMaterial &key,
                           size_t capacity) {
  std::unique_ptr<DeviceCipher> keyed;
  wc_status status = kCudaBackend.make_device_cipher(&keyed, device, cipher, direction, key);
  const std::shared_ptr<const DeviceCipher> shared = std::move(keyed);
  for (unsigned i = 0; i < streams && status == WC_OK; ++i) {
    std::unique_ptr<TransferLane> transfer;
    // No scratch, and no host copies of its own: the engine stages the
    // chunks into the window.
    status = TransferLane::lease(&transfer, cuda_transfer_backend().lease, device, capacity, capacity, 0, 1);
    if (status == WC_OK) lanes->push_back(std::make_unique<GpuLane>(shared, std::move(transfer)));
  }
  return status;
}

}  // namespace

wc_status LaneSet::create(std::unique_ptr<LaneSet> *out, const Placement &shape, const wc_cipher &cipher,
                          wc_direction direction, const KeyMaterial &key, size_t slack) {
  std::unique_ptr<LaneSet> set(new LaneSet(key));
  if (uses_gpu_lanes(shape.backend()) && !shape.gpu_lanes_late()) {
    if (shape.devices().empty()) return WC_ERR_NO_DEVICE;
    for (int device : shape.devices()) {
      const wc_status status =
          append_gpu_lanes(&set->lanes_, device, shape.streams(), cipher, direction, key, shape.unit_bytes() + slack);
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
    status = append_gpu_lanes(&built, devices[i], streams, cipher, direction, key, capacity);
  }
  if (status == WC_OK) late_lanes_ = std::move(built);
  return status;
}

}  // namespace warpcrypt::engine
