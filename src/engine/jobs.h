// The engine's jobs behind the C API's wc_*_buffer, wc_*_fd and wc_*_file
// calls. Arguments are checked by the caller; failures are recorded in the
// monitor and returned.
#pragma once

#include <functional>

#include "core/cipher_backend.h"
#include "engine/fd_pipeline.h"
#include "engine/job_monitor.h"
#include "engine/placement.h"

namespace warpcrypt::engine {

// Host buffer to host buffer, as `plan` (plan_buffer_job) places it: the
// wc_encrypt semantics (padding, output bound), with the lanes reporting
// progress. `out` has room for the whole result.
wc_status run_buffer_job(const Placement &plan, const wc_cipher &cipher, wc_direction direction,
                         const KeyMaterial &key, uint8_t *out, size_t out_cap, size_t *out_len, const uint8_t *in,
                         size_t in_len, JobMonitor &monitor);

// The C API's job calls: runs `body(monitor, totals)` unless the caller's
// argument checks (`checked`) failed, and fills the caller's wc_job (which
// may be null), failures included.
template <typename Body>
wc_status run_monitored(wc_job *job, wc_status checked, Body body) {
  JobMonitor monitor(job, 0);
  JobTotals totals;
  const wc_status status = checked == WC_OK ? body(monitor, totals) : checked;
  if (status != WC_OK) monitor.fail(status);
  return monitor.finish(totals.bytes_in, totals.bytes_out);
}

// A job from one open descriptor to another (run_fd_job, a sealed-file job).
using DescriptorJob = std::function<wc_status(int out_fd, int in_fd)>;

// Path to path, atomically: `job` writes a temporary file beside the target,
// which is renamed over it on success and removed on failure. An output that
// is a device or pipe is written in place; one that is the input is refused.
wc_status run_file_job(const char *out_path, const char *in_path, JobMonitor &monitor, const DescriptorJob &job);

}  // namespace warpcrypt::engine
