// The GPU backend's AEAD for host memory: the messages of a call are copied
// to the device, sealed or opened there in one launch, and copied back.
#pragma once

#include <memory>
#include <span>

#include "core/aead_backend.h"

namespace warpcrypt::cuda {

// Fails with WC_ERR_NO_DEVICE without a usable device.
wc_status make_aead(std::unique_ptr<AeadCipher> *out, const wc_aead &aead, std::span<const uint8_t> key);

}  // namespace warpcrypt::cuda
