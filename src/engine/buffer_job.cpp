#include <algorithm>
#include <memory>

#include "engine/placement.h"
#include "core/stream_state.h"
#include "core/backend_tables.h"
#include "engine/jobs.h"
#include "engine/lane_cipher.h"

namespace warpcrypt::engine {

wc_status run_buffer_job(const Placement &plan, const wc_cipher &cipher, wc_direction direction,
                         const KeyMaterial &key, uint8_t *out, size_t out_cap, size_t *out_len, const uint8_t *in,
                         size_t in_len, JobMonitor &monitor) {
  // The parallel modes run on lanes, CPU ones included, so that progress and
  // cancellation work whatever the backend. The sequential modes run on one
  // CPU thread in chunk-sized steps, checking for cancellation between them:
  // their plan is the CPU's (plan_cipher_job).
  const bool parallel = is_parallel(cipher, direction);
  BackendCipher backend_cipher;
  wc_status status = parallel
                         ? make_lane_cipher(&backend_cipher.random_access, plan, cipher, direction, key, &monitor)
                         : kCpuBackend.make_cipher(&backend_cipher, cipher, direction, key);
  std::unique_ptr<StreamState> state;
  if (status == WC_OK) {
    status = StreamState::create(&state, std::move(backend_cipher), cipher, direction, key.iv);
  }
  const size_t step = parallel ? std::max<size_t>(in_len, 1) : plan.chunk_bytes();
  size_t written = 0;
  for (size_t offset = 0; status == WC_OK && offset < in_len && !monitor.stopped(); offset += step) {
    const size_t n = std::min(step, in_len - offset);
    size_t produced = 0;
    status = state->update(out + written, out_cap - written, &produced, in + offset, n);
    written += produced;
    if (status == WC_OK && !parallel) monitor.advance(WC_BACKEND_CPU, n);
  }
  if (status == WC_OK && !monitor.stopped()) {
    size_t produced = 0;
    status = state->finish(out + written, out_cap - written, &produced);
    written += produced;
  }
  if (status != WC_OK) monitor.fail(status);
  *out_len = written;
  return monitor.status();
}

}  // namespace warpcrypt::engine
