// The process's one pool of page-locked host memory. Pinning costs about
// 0.5 ms a MiB (the H200 machine), more than a window's trip through the
// device, and cudaFreeHost waits for the whole device; so every user of
// page-locked memory takes its blocks here and gives them back: the
// engine's windows (engine/io_buffer.h, through the backend table), the
// lanes' staging and result buffers (lane_buffers.h), and the C API's
// wc_host_alloc_pinned.
#pragma once

#include <cstddef>

#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::cuda {

// A block of at least `bytes`, page-aligned; WC_ERR_OUT_OF_MEMORY where
// the driver has none.
wc_status take_pinned(void **block, size_t bytes);

// Gives `block` back. Its first `held` bytes (all of it where `held` is
// larger) may hold plaintext or keys: the pool wipes them before anyone
// else gets the block, so a holder says how far it wrote and never wipes
// itself.
void give_pinned(void *block, size_t held);

}  // namespace warpcrypt::cuda
