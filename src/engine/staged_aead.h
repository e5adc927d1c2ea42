// The GPU AEAD on host memory that is not page-locked. The driver copies
// pageable memory through staging of its own, on the calling thread and
// one copy at a time; here the engine stages it instead, on transfer lanes
// (engine/transfer_lane.h), several at once, so that one lane's copies
// overlap the others' trips through the device. Short messages travel in
// groups of a window: a lane copies them into its page-locked window,
// queues the window up to its device buffer, the device AEAD's kernels on
// its stream and the results back, then copies them out. A longer message
// travels in the device AEAD's pieces (AeadPieces), a window each.
// Page-locked memory, and device memory, go to the device AEAD as they are.
#pragma once

#include <memory>
#include <vector>

#include "core/aead_backend.h"
#include "engine/transfer_lane.h"

namespace warpcrypt::engine {

// `device_aead` with its host-memory calls staged on up to `lanes` lanes at
// once (placement.cpp decides how many), lane i on devices[i % size], their
// buffers from `lease` (the CUDA backend's lease_transfer).
std::unique_ptr<AeadCipher> stage_host_memory(std::unique_ptr<AeadCipher> device_aead, std::vector<int> devices,
                                              unsigned lanes, LeaseTransfer lease);

}  // namespace warpcrypt::engine
