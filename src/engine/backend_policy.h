// Which backend runs a piece of work, and building that backend's cipher.
// Every primitive has one table entry per backend {cpu, cuda}; the policy
// picks one, and callers can ask which ran.
#pragma once

#include <cstddef>
#include <cstdint>

#include <memory>

#include "core/aead_backend.h"
#include "core/cipher_backend.h"
#include "core/stream_state.h"

namespace warpcrypt::engine {

// Below this many bytes per call the CPU wins even for page-locked host
// memory; SIZE_MAX where it always wins. See wc_auto_gpu_min_bytes.
size_t auto_gpu_min_bytes(const wc_cipher &cipher, wc_direction direction);

// The backend of a job (wc_*_buffer, wc_*_fd, wc_*_file) under auto: hybrid
// where input and output are page-locked host memory, a device runs the mode
// and the input reaches its break-even size; else cpu. Input that must be
// staged (files, pipes, pageable buffers) stays on the CPU: copying it into
// pinned memory costs the CPU as much as the cipher does, and the GPU lanes
// measured slower there (docs/lab-notes/performance-history.md).
wc_backend auto_job_backend(const wc_cipher &cipher, wc_direction direction, uint64_t input_bytes,
                            bool page_locked);

// Builds the cipher for options.backend:
//  - cpu: always available;
//  - gpu: WC_ERR_NO_DEVICE without a device and
//    WC_ERR_BACKEND_UNAVAILABLE for modes the GPU does not run; never a
//    silent fallback;
//  - auto: the CPU, plus the GPU for calls on page-locked memory of at least
//    auto_gpu_min_bytes where a device can run the mode.
wc_status make_backend_cipher(BackendCipher *out, const wc_options &options, const wc_cipher &cipher,
                              wc_direction direction, const KeyMaterial &key);

// A stream (wc_ctx, the edges of the engine's jobs) on the cipher
// make_backend_cipher builds for `options`.
wc_status make_stream_state(std::unique_ptr<StreamState> *out, const wc_options &options, const wc_cipher &cipher,
                            wc_direction direction, const KeyMaterial &key);

// Builds the AEAD bound to `key` that runs host-memory messages as
// `options` ask: backends cpu, auto and hybrid keep them on the CPU, batches
// spread over options.threads threads (0: every core; no AEAD break-even
// size has been measured yet); gpu runs them on the device list (every
// device where there is none), WC_ERR_NO_DEVICE without one, never a silent
// fallback. The device list is checked whatever the backend (check_devices).
wc_status make_aead(std::unique_ptr<AeadCipher> *out, const wc_options &options, const wc_aead &aead,
                    std::span<const uint8_t> key);

}  // namespace warpcrypt::engine
