// wc_plan_describe: the argument checks, then the engine's placement of the
// work (engine::describe_placement, from the rules the jobs run), told in
// the public plan's terms.
#include <algorithm>
#include <cstring>

#include "api/arguments.h"
#include "engine/jobs.h"

namespace {

const char *reason_text(wc_plan_reason reason) {
  switch (reason) {
    case WC_PLAN_AS_ASKED: return "the backend the options name";
    case WC_PLAN_STAGED_INPUT: return "input staged through host memory stays on the CPU";
    case WC_PLAN_SEQUENTIAL_MODE: return "the mode does not split: one CPU thread runs it";
    case WC_PLAN_CPU_ALWAYS_FASTER: return "the CPU won at every size measured for this cipher and direction";
    case WC_PLAN_NO_DEVICE: return "no CUDA device is usable";
    case WC_PLAN_BELOW_BREAK_EVEN: return "below the measured GPU break-even size";
    case WC_PLAN_AT_BREAK_EVEN: return "page-locked input of at least the measured GPU break-even size";
    case WC_PLAN_NO_AEAD_BREAK_EVEN: return "no AEAD break-even size has been measured: the CPU runs it";
    case WC_PLAN_DEVICE_MEMORY: return "device memory runs where it lives";
  }
  return "unknown";
}

// The argument checks of the calls the work stands for.
wc_status check_work(const wc_work *work) {
  if (work == nullptr) return WC_ERR_INVALID_ARGUMENT;
  if (work->cipher == nullptr && work->aead == nullptr) return WC_ERR_UNKNOWN_CIPHER;
  const bool known_data = work->data == WC_DATA_PAGEABLE || work->data == WC_DATA_PINNED ||
                          work->data == WC_DATA_DEVICE || work->data == WC_DATA_STREAM;
  const bool known_direction = work->direction == WC_ENCRYPT || work->direction == WC_DECRYPT;
  const bool one_subject = work->cipher == nullptr || work->aead == nullptr;
  return known_data && known_direction && one_subject ? WC_OK : WC_ERR_INVALID_ARGUMENT;
}

// The plan of `placement`: the lanes a backend does not use are none.
void tell(wc_plan *plan, const warpcrypt::engine::Placement &placement, wc_plan_reason reason) {
  using warpcrypt::engine::uses_cpu_lanes;
  using warpcrypt::engine::uses_gpu_lanes;
  plan->backend = placement.backend();
  plan->reason = reason;
  plan->reason_text = reason_text(reason);
  if (uses_cpu_lanes(placement.backend())) {
    plan->cpu_lanes = placement.cpu_lanes();
    plan->spare_cpu_lanes = placement.spare_cpu_lanes();
  }
  if (uses_gpu_lanes(placement.backend())) {
    plan->gpu_lanes_per_device = placement.streams();
    plan->device_count = placement.devices().size();
    std::copy_n(placement.devices().begin(), std::min<size_t>(placement.devices().size(), WC_PLAN_MAX_DEVICES),
                plan->devices);
    plan->gpu_lanes_late = placement.gpu_lanes_late() ? 1 : 0;
  }
  plan->chunk_bytes = placement.chunk_bytes();
  plan->unit_bytes = placement.unit_bytes();
}

}  // namespace

extern "C" {

wc_status wc_plan_describe(const wc_options *options, const wc_work *work, wc_job *job, wc_plan *plan) {
  if (plan == nullptr) return WC_ERR_INVALID_ARGUMENT;
  std::memset(plan, 0, sizeof *plan);
  const wc_options resolved = warpcrypt::options_or_default(options);
  auto describe = [&](warpcrypt::engine::JobMonitor &monitor, warpcrypt::engine::JobTotals &) {
    std::optional<warpcrypt::engine::Placement> placement;
    wc_plan_reason reason = WC_PLAN_AS_ASKED;
    const wc_status status = warpcrypt::engine::describe_placement(&placement, &reason, resolved, *work, &monitor);
    if (status == WC_OK) tell(plan, *placement, reason);
    return status;
  };
  return warpcrypt::engine::run_monitored(job, check_work(work), describe);
}

}  // extern "C"
