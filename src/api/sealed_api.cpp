// The C API's sealed-file calls: argument checks, then sealed/.
#include <algorithm>
#include <cerrno>
#include <span>

#include "api/arguments.h"
#include "engine/jobs.h"
#include "sealed/sealed_job.h"

namespace {

using warpcrypt::engine::JobMonitor;
using warpcrypt::engine::JobTotals;
namespace sealed = warpcrypt::sealed;

bool secret_valid(const uint8_t *secret, size_t secret_len) { return secret != nullptr || secret_len == 0; }

// Runs `body` with a monitor when `valid`, and fills the caller's wc_job.
template <typename Body>
wc_status run_job(wc_job *job, bool valid, Body body) {
  return warpcrypt::engine::run_monitored(job, valid ? WC_OK : WC_ERR_INVALID_ARGUMENT, body);
}

// The new file's header, or the reason the parameters (or the secret)
// cannot make one.
wc_status seal_header(const wc_seal_params *params, size_t secret_len, JobMonitor &monitor, sealed::Header *header) {
  wc_seal_params defaults;
  wc_seal_params_init(&defaults);
  const char *detail = nullptr;
  wc_status status = sealed::make_header(params != nullptr ? *params : defaults, header, &detail);
  if (status == WC_OK && header->key_source == WC_SEAL_PASSPHRASE && secret_len == 0) {
    status = WC_ERR_INVALID_ARGUMENT;
    detail = "refusing an empty passphrase: anyone could open the file";
  }
  if (status != WC_OK) monitor.fail_with_detail(status, detail);
  return status;
}

// The caller's open parameters, or the defaults; false for values no call
// may ask for.
bool open_params(const wc_open_params *given, wc_open_params *params) {
  wc_open_params_init(params);
  if (given != nullptr) *params = *given;
  return params->max_iterations >= 1 && params->max_iterations <= WC_SEAL_MAX_ITERATIONS &&
         params->max_argon2_ops >= 1 && params->max_argon2_memory >= WC_SEAL_MIN_ARGON2_MEMORY;
}

}  // namespace

extern "C" {

void wc_seal_params_init(wc_seal_params *params) {
  if (params == nullptr) return;
  *params = wc_seal_params{};
  params->aead = wc_aead_by_name("aes-256-gcm");
  params->key_source = WC_SEAL_PASSPHRASE;
  params->kdf = WC_SEAL_ARGON2ID;
  params->argon2_ops = WC_SEAL_DEFAULT_ARGON2_OPS;
  params->argon2_memory = WC_SEAL_DEFAULT_ARGON2_MEMORY;
  params->iterations = WC_SEAL_DEFAULT_ITERATIONS;
  params->digest = "sha256";
  params->chunk_bytes = WC_SEAL_DEFAULT_CHUNK_BYTES;
}

void wc_open_params_init(wc_open_params *params) {
  if (params == nullptr) return;
  *params = wc_open_params{};
  params->length = UINT64_MAX;
  params->max_iterations = WC_OPEN_DEFAULT_MAX_ITERATIONS;
  params->max_argon2_ops = WC_OPEN_DEFAULT_MAX_ARGON2_OPS;
  params->max_argon2_memory = WC_OPEN_DEFAULT_MAX_ARGON2_MEMORY;
}

wc_status wc_sealed_inspect(int fd, wc_sealed_info *info, wc_job *job) {
  return run_job(job, fd >= 0 && info != nullptr, [&](JobMonitor &monitor, JobTotals &) {
    warpcrypt::engine::Endpoint in;
    if (warpcrypt::engine::open_endpoint(&in, fd) != WC_OK) return monitor.fail_io(errno);
    if (!in.seekable) return WC_ERR_INVALID_ARGUMENT;  // reading a pipe's header would consume it
    sealed::Header header;
    std::array<uint8_t, sealed::kHeaderLen> bytes{};
    const char *detail = nullptr;
    wc_status result = sealed::read_header(in, &header, &bytes, &detail);
    if (result == WC_ERR_IO) return monitor.fail_io(errno);
    sealed::Layout layout;
    if (result == WC_OK) result = sealed::layout_of(header, in.size - sealed::kHeaderLen, &layout, &detail);
    if (result != WC_OK) {
      monitor.fail_with_detail(result, detail);
      return result;
    }
    *info = wc_sealed_info{};
    info->aead = header.aead;
    info->key_source = header.key_source;
    if (header.key_source == WC_SEAL_PASSPHRASE) info->kdf = header.kdf;
    info->digest = sealed::digest_name(header.digest);
    info->iterations = header.iterations;
    info->argon2_ops = header.argon2_ops;
    info->argon2_memory = uint64_t{header.argon2_memory_kib} * sealed::kArgon2BlockLen;
    info->chunk_bytes = header.chunk_size();
    info->chunks = layout.chunks;
    info->plaintext_len = layout.plaintext_len;
    std::copy(header.salt.begin(), header.salt.end(), info->salt);
    std::copy(header.nonce_prefix.begin(), header.nonce_prefix.end(), info->nonce_prefix);
    return WC_OK;
  });
}

wc_status wc_seal_fd(const wc_options *options, const wc_seal_params *params, wc_job *job, int out_fd, int in_fd,
                     const uint8_t *secret, size_t secret_len) {
  const bool valid = out_fd >= 0 && in_fd >= 0 && secret_valid(secret, secret_len);
  return run_job(job, valid, [&](JobMonitor &monitor, JobTotals &totals) {
    sealed::Header header;
    const wc_status status = seal_header(params, secret_len, monitor, &header);
    if (status != WC_OK) return status;
    return sealed::run_seal_fd(warpcrypt::options_or_default(options), header, {secret, secret_len}, out_fd, in_fd,
                               monitor, &totals);
  });
}

wc_status wc_open_fd(const wc_options *options, const wc_open_params *params, wc_job *job, int out_fd, int in_fd,
                     wc_seal_key_source key_source, const uint8_t *secret, size_t secret_len) {
  wc_open_params checked{};
  const bool valid = open_params(params, &checked) && out_fd >= 0 && in_fd >= 0 && secret_valid(secret, secret_len);
  return run_job(job, valid, [&](JobMonitor &monitor, JobTotals &totals) {
    return sealed::run_open_fd(warpcrypt::options_or_default(options), checked, key_source, {secret, secret_len},
                               out_fd, in_fd, monitor, &totals);
  });
}

wc_status wc_seal_file(const wc_options *options, const wc_seal_params *params, wc_job *job, const char *out_path,
                       const char *in_path, const uint8_t *secret, size_t secret_len) {
  const bool valid = out_path != nullptr && in_path != nullptr && secret_valid(secret, secret_len);
  return run_job(job, valid, [&](JobMonitor &monitor, JobTotals &totals) {
    sealed::Header header;
    const wc_status status = seal_header(params, secret_len, monitor, &header);
    if (status != WC_OK) return status;
    return warpcrypt::engine::run_file_job(out_path, in_path, monitor, [&](int out_fd, int in_fd) {
      return sealed::run_seal_fd(warpcrypt::options_or_default(options), header, {secret, secret_len}, out_fd, in_fd,
                                 monitor, &totals);
    });
  });
}

wc_status wc_open_file(const wc_options *options, const wc_open_params *params, wc_job *job, const char *out_path,
                       const char *in_path, wc_seal_key_source key_source, const uint8_t *secret, size_t secret_len) {
  wc_open_params checked{};
  const bool valid =
      open_params(params, &checked) && out_path != nullptr && in_path != nullptr && secret_valid(secret, secret_len);
  return run_job(job, valid, [&](JobMonitor &monitor, JobTotals &totals) {
    return warpcrypt::engine::run_file_job(out_path, in_path, monitor, [&](int out_fd, int in_fd) {
      return sealed::run_open_fd(warpcrypt::options_or_default(options), checked, key_source, {secret, secret_len},
                                 out_fd, in_fd, monitor, &totals);
    });
  });
}

}  // extern "C"
