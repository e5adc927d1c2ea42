// The GPU backend's AEAD: messages in host memory are copied straight to
// the device and back on several streams of each device (staging pageable
// memory in page-locked buffers is the engine's: engine/staged_aead.h);
// messages in device memory are queued on the caller's stream.
#pragma once

#include <memory>
#include <span>

#include "core/aead_backend.h"

namespace warpcrypt::cuda {

// An AEAD bound to `key` for host and device memory, its constants derived
// once; WC_ERR_NO_DEVICE without a usable device. Host-memory messages run
// on `devices` (valid ordinals), or on the caller's current device where it
// is empty; device-memory messages where they live (WorkDevice).
wc_status make_aead(std::unique_ptr<AeadCipher> *out, const wc_aead &aead, std::span<const uint8_t> key,
                    std::span<const int> devices);

}  // namespace warpcrypt::cuda
