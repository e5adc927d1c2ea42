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
// its body given the options once they pass the checks a job makes at its
// entry (engine::check_job_options): a bad option is refused before any
// KDF, header or plugin runs.
template <typename Body>
wc_status run_stream_job(wc_job *job, bool valid, const wc_options *given, Body body) {
  const wc_options options = options_or_default(given);
  auto checked_body = [&](engine::JobMonitor &monitor, engine::JobTotals &totals) {
    const wc_status status = engine::check_job_options(options, engine::stream_job_backend(options), &monitor,
                                                       engine::DeviceCount::beside_work);
    return status != WC_OK ? status : body(options, monitor, totals);
  };
  return engine::run_monitored(job, valid ? WC_OK : WC_ERR_INVALID_ARGUMENT, checked_body);
}

inline KeyMaterial key_material(const uint8_t *key, size_t key_len, const uint8_t *iv, size_t iv_len) {
  return KeyMaterial{{key, key_len}, {iv, iv_len}};
}

}  // namespace warpcrypt
