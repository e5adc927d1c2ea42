// Argument helpers shared by the api layer's source files.
#pragma once

#include <cstdint>

#include "core/cipher_backend.h"
#include "engine/jobs.h"
#include "engine/placement.h"

namespace warpcrypt {

inline wc_options options_or_default(const wc_options *options) {
  wc_options resolved;
  wc_options_init(&resolved);
  return options != nullptr ? *options : resolved;
}

// Runs a stream job (sealed and age files) as engine::run_monitored does,
// its body given the job's plan (engine::plan_stream_job), made at its
// entry: a bad option is refused before any KDF, header or plugin runs, and
// the format and the engine take the plan as it is.
template <typename Body>
wc_status run_stream_job(wc_job *job, bool valid, const wc_options *given, Body body) {
  const wc_options options = options_or_default(given);
  auto planned_body = [&](engine::JobMonitor &monitor, engine::JobTotals &totals) {
    std::optional<engine::Placement> plan;
    const wc_status status = engine::plan_stream_job(&plan, options, monitor);
    return status != WC_OK ? status : body(*plan, monitor, totals);
  };
  return engine::run_monitored(job, valid ? WC_OK : WC_ERR_INVALID_ARGUMENT, planned_body);
}

// A sealed stream's call (wc_sealed_stream_*_new): its chunks' AEAD spec,
// resolved before the KDF runs, then `body(spec, monitor)`.
template <typename Body>
wc_status run_chunk_call_job(wc_job *job, bool valid, const wc_options *given, Body body) {
  const wc_options options = options_or_default(given);
  auto planned_body = [&](engine::JobMonitor &monitor, engine::JobTotals &) {
    engine::LaneSpec spec;
    const wc_status status = engine::resolve_aead_spec(&spec, options);
    return status != WC_OK ? status : body(spec, monitor);
  };
  return engine::run_monitored(job, valid ? WC_OK : WC_ERR_INVALID_ARGUMENT, planned_body);
}

inline KeyMaterial key_material(const uint8_t *key, size_t key_len, const uint8_t *iv, size_t iv_len) {
  return KeyMaterial{{key, key_len}, {iv, iv_len}};
}

}  // namespace warpcrypt
