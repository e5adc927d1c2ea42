// The GPU AEAD on host memory, on the engine's transfer lanes
// (engine/transfer_lane.h), several at once, so that one lane's copies
// overlap the others' trips through the device; the device AEAD only queues
// kernels. Short messages travel in groups: pageable ones are copied into a
// lane's page-locked window (the driver would copy pageable memory through
// staging of its own, on the calling thread, one copy at a time), and
// page-locked ones go up and back as they are, their ranges straight. A
// longer message travels in the device AEAD's pieces (AeadPieces), a lane
// each, on the lane's device, from the caller's page-locked memory or the
// lane's window (the device AEAD holds a piece's device buffer); the last
// piece, whose kernel finishes the tag from the others' values, runs after
// them. Device memory
// goes to the device AEAD as it is.
#pragma once

#include <memory>
#include <vector>

#include "core/aead_backend.h"
#include "engine/transfer_lane.h"

namespace warpcrypt::engine {

// `device_aead` with its host-memory calls run on up to `lanes` transfer
// lanes at once (placement.cpp decides how many), lane i on devices[i %
// size], their buffers and the memory check `backend`'s
// (cuda_transfer_backend()).
std::unique_ptr<AeadCipher> stage_host_memory(std::unique_ptr<AeadCipher> device_aead, std::vector<int> devices,
                                              unsigned lanes, const TransferBackend &backend);

}  // namespace warpcrypt::engine
