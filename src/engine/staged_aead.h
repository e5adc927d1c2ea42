// The GPU AEAD on host memory that is not page-locked. The driver copies
// pageable memory through staging of its own, on the calling thread and
// one copy at a time; here the engine stages it instead: lanes copy the
// messages into page-locked windows (the process's pool's), run the device AEAD on
// those, and copy the results back, several windows at once, so that one
// lane's copies overlap the others' trips through the device. Short
// messages travel in groups of a window; a longer message in the device
// AEAD's pieces (AeadPieces), a window each. Page-locked memory, and device
// memory, go to the device AEAD as they are.
#pragma once

#include <memory>

#include "core/aead_backend.h"

namespace warpcrypt::engine {

// `device_aead` with its host-memory calls staged on up to `lanes` lanes at
// once (placement.cpp decides how many).
std::unique_ptr<AeadCipher> stage_host_memory(std::unique_ptr<AeadCipher> device_aead, unsigned lanes);

}  // namespace warpcrypt::engine
