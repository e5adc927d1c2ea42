// The GPU backend's AEAD: messages in host memory move through pinned lanes
// on several streams, as the plain ciphers' chunks do; messages in device
// memory are queued on the caller's stream.
#pragma once

#include <memory>
#include <span>

#include "core/aead_backend.h"

namespace warpcrypt::cuda {

// An AEAD bound to `key` for host and device memory, its constants derived
// once; WC_ERR_NO_DEVICE without a usable device.
wc_status make_aead(std::unique_ptr<AeadCipher> *out, const wc_aead &aead, std::span<const uint8_t> key);

}  // namespace warpcrypt::cuda
