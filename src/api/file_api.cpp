// The C API's descriptor and file jobs: argument checks, then the engine.
#include "api/arguments.h"
#include "core/stream_state.h"
#include "engine/jobs.h"

namespace {

using warpcrypt::engine::JobMonitor;
using warpcrypt::engine::JobTotals;
using warpcrypt::engine::Placement;

// Checks what every descriptor and file job needs and plans it
// (plan_descriptor_job) before any file is opened, then runs
// `body(plan, monitor, totals)`.
template <typename Body>
wc_status run_job(wc_direction direction, const wc_options *options, const wc_cipher *cipher, wc_job *job,
                  const uint8_t *key, size_t key_len, const uint8_t *iv, size_t iv_len, bool endpoints_valid,
                  Body body) {
  wc_status checked = cipher == nullptr ? WC_ERR_UNKNOWN_CIPHER
                                        : warpcrypt::check_key_and_iv(*cipher, key, key_len, iv, iv_len);
  if (checked == WC_OK && !endpoints_valid) checked = WC_ERR_INVALID_ARGUMENT;
  const wc_options resolved = warpcrypt::options_or_default(options);
  return warpcrypt::engine::run_monitored(job, checked, [&](JobMonitor &monitor, JobTotals &totals) {
    std::optional<Placement> plan;
    const wc_status status = warpcrypt::engine::plan_descriptor_job(&plan, resolved, *cipher, direction, monitor);
    return status != WC_OK ? status : body(*plan, monitor, totals);
  });
}

wc_status crypt_fd(wc_direction direction, const wc_options *options, const wc_cipher *cipher, wc_job *job,
                   int out_fd, int in_fd, const uint8_t *key, size_t key_len, const uint8_t *iv, size_t iv_len) {
  return run_job(direction, options, cipher, job, key, key_len, iv, iv_len, out_fd >= 0 && in_fd >= 0,
                 [&](const Placement &plan, JobMonitor &monitor, JobTotals &totals) {
                   return warpcrypt::engine::run_fd_job(plan, *cipher, direction,
                                                        warpcrypt::key_material(key, key_len, iv, iv_len), out_fd,
                                                        in_fd, monitor, &totals);
                 });
}

wc_status crypt_file(wc_direction direction, const wc_options *options, const wc_cipher *cipher, wc_job *job,
                     const char *out_path, const char *in_path, const uint8_t *key, size_t key_len,
                     const uint8_t *iv, size_t iv_len) {
  return run_job(direction, options, cipher, job, key, key_len, iv, iv_len,
                 out_path != nullptr && in_path != nullptr,
                 [&](const Placement &plan, JobMonitor &monitor, JobTotals &totals) {
                   return warpcrypt::engine::run_file_job(out_path, in_path, monitor, [&](int out_fd, int in_fd) {
                     return warpcrypt::engine::run_fd_job(plan, *cipher, direction,
                                                          warpcrypt::key_material(key, key_len, iv, iv_len), out_fd,
                                                          in_fd, monitor, &totals);
                   });
                 });
}

}  // namespace

extern "C" {

wc_status wc_encrypt_fd(const wc_options *options, const wc_cipher *cipher, wc_job *job, int out_fd, int in_fd,
                        const uint8_t *key, size_t key_len, const uint8_t *iv, size_t iv_len) {
  return crypt_fd(WC_ENCRYPT, options, cipher, job, out_fd, in_fd, key, key_len, iv, iv_len);
}

wc_status wc_decrypt_fd(const wc_options *options, const wc_cipher *cipher, wc_job *job, int out_fd, int in_fd,
                        const uint8_t *key, size_t key_len, const uint8_t *iv, size_t iv_len) {
  return crypt_fd(WC_DECRYPT, options, cipher, job, out_fd, in_fd, key, key_len, iv, iv_len);
}

wc_status wc_encrypt_file(const wc_options *options, const wc_cipher *cipher, wc_job *job, const char *out_path,
                          const char *in_path, const uint8_t *key, size_t key_len, const uint8_t *iv,
                          size_t iv_len) {
  return crypt_file(WC_ENCRYPT, options, cipher, job, out_path, in_path, key, key_len, iv, iv_len);
}

wc_status wc_decrypt_file(const wc_options *options, const wc_cipher *cipher, wc_job *job, const char *out_path,
                          const char *in_path, const uint8_t *key, size_t key_len, const uint8_t *iv,
                          size_t iv_len) {
  return crypt_file(WC_DECRYPT, options, cipher, job, out_path, in_path, key, key_len, iv, iv_len);
}

}  // extern "C"
