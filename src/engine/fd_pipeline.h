// File descriptor to file descriptor through the lanes: each lane reads a
// chunk straight into its staging buffer (pinned memory for a GPU lane),
// transforms it and writes it out, so reads, copies over PCIe, kernels and
// writes of different chunks overlap.
#pragma once

#include "core/cipher_backend.h"
#include "engine/endpoint.h"
#include "engine/job_monitor.h"
#include "engine/placement.h"

namespace warpcrypt::engine {

// Transforms in_fd from its offset to its end into out_fd at its offset.
// Regular files are read and written with pread/pwrite at each chunk's
// offset, by all lanes at once; other inputs are read in order under a lock,
// and other outputs are written in chunk order, as `plan`
// (plan_descriptor_job) places the work. Failures are recorded in
// `monitor` (WC_ERR_IO with errno) and returned.
wc_status run_fd_job(const Placement &plan, const wc_cipher &cipher, wc_direction direction,
                     const KeyMaterial &key, int out_fd, int in_fd, JobMonitor &monitor, JobTotals *totals);

}  // namespace warpcrypt::engine
