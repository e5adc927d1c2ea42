// The GPU backend's AEAD: messages in host memory move through pinned lanes
// on several streams of each device, as the plain ciphers' chunks do;
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
