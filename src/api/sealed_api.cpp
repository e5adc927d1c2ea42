// The C API's sealed-file calls: argument checks, then sealed/.
#include <algorithm>
#include <cerrno>
#include <memory>
#include <new>
#include <span>

#include "api/arguments.h"
#include "core/host_crypto.h"
#include "engine/placement.h"
#include "engine/jobs.h"
#include "sealed/sealed_job.h"

// A sealed file's header and its key, bound to an AEAD on the chosen backend.
struct wc_sealed_stream {
  warpcrypt::sealed::Header header;
  std::array<uint8_t, WC_SEAL_HEADER_LEN> header_bytes{};
  std::unique_ptr<warpcrypt::AeadCipher> cipher;
};

namespace {

using warpcrypt::kHostCrypto;
using warpcrypt::engine::JobMonitor;
using warpcrypt::engine::JobTotals;
namespace engine = warpcrypt::engine;
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
  wc_status status = sealed::make_header(kHostCrypto, params != nullptr ? *params : defaults, header, &detail);
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

// Derives the stream's file key from `secret` and binds it to the AEAD, one
// thread per call (a caller that wants parallelism calls from its threads).
wc_status bind_stream(wc_sealed_stream **out, std::unique_ptr<wc_sealed_stream> stream, engine::LaneSpec spec,
                      std::span<const uint8_t> secret, JobMonitor &monitor) {
  sealed::FileKey key;
  const char *detail = nullptr;
  wc_status status = sealed::derive_file_key(kHostCrypto, stream->header, secret, &key, &detail);
  if (status != WC_OK) {
    monitor.fail_with_detail(status, detail);
    return status;
  }
  spec.threads = 1;
  status = engine::make_aead(&stream->cipher, spec, *stream->header.aead, {key.bytes.data(), key.len});
  if (status != WC_OK) return status;
  *out = stream.release();
  return WC_OK;
}

// The AEAD calls' overlap rule, for one chunk: out may be in, or apart from it.
bool chunk_buffers_valid(const uint8_t *out, size_t out_len, const uint8_t *in, size_t in_len) {
  if ((out == nullptr && out_len != 0) || (in == nullptr && in_len != 0)) return false;
  if (out == in || in_len == 0 || out_len == 0) return true;
  return out + out_len <= in || in + in_len <= out;
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
    if (warpcrypt::engine::open_endpoint(&in, fd) != WC_OK) return monitor.fail_io(WC_IO_INPUT, errno);
    if (!in.seekable) return WC_ERR_INVALID_ARGUMENT;  // reading a pipe's header would consume it
    sealed::Header header;
    std::array<uint8_t, sealed::kHeaderLen> bytes{};
    const char *detail = nullptr;
    wc_status result = sealed::read_header(in, &header, &bytes, &detail);
    if (result == WC_ERR_IO) return monitor.fail_io(WC_IO_INPUT, errno);
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
  return warpcrypt::run_stream_job(job, valid, options, [&](const engine::Placement &plan, JobMonitor &monitor, JobTotals &totals) {
    sealed::Header header;
    const wc_status status = seal_header(params, secret_len, monitor, &header);
    if (status != WC_OK) return status;
    return sealed::run_seal_fd(kHostCrypto, plan, header, {secret, secret_len},
                               out_fd, in_fd, monitor, &totals);
  });
}

wc_status wc_open_fd(const wc_options *options, const wc_open_params *params, wc_job *job, int out_fd, int in_fd,
                     wc_seal_key_source key_source, const uint8_t *secret, size_t secret_len) {
  wc_open_params checked{};
  const bool valid = open_params(params, &checked) && out_fd >= 0 && in_fd >= 0 && secret_valid(secret, secret_len);
  return warpcrypt::run_stream_job(job, valid, options, [&](const engine::Placement &plan, JobMonitor &monitor, JobTotals &totals) {
    return sealed::run_open_fd(kHostCrypto, plan, checked, key_source,
                               {secret, secret_len}, out_fd, in_fd, monitor, &totals);
  });
}

wc_status wc_seal_file(const wc_options *options, const wc_seal_params *params, wc_job *job, const char *out_path,
                       const char *in_path, const uint8_t *secret, size_t secret_len) {
  const bool valid = out_path != nullptr && in_path != nullptr && secret_valid(secret, secret_len);
  return warpcrypt::run_stream_job(job, valid, options, [&](const engine::Placement &plan, JobMonitor &monitor, JobTotals &totals) {
    sealed::Header header;
    const wc_status status = seal_header(params, secret_len, monitor, &header);
    if (status != WC_OK) return status;
    return warpcrypt::engine::run_file_job(out_path, in_path, monitor, [&](int out_fd, int in_fd) {
      return sealed::run_seal_fd(kHostCrypto, plan, header, {secret, secret_len},
                                 out_fd, in_fd, monitor, &totals);
    });
  });
}

wc_status wc_open_file(const wc_options *options, const wc_open_params *params, wc_job *job, const char *out_path,
                       const char *in_path, wc_seal_key_source key_source, const uint8_t *secret, size_t secret_len) {
  wc_open_params checked{};
  const bool valid =
      open_params(params, &checked) && out_path != nullptr && in_path != nullptr && secret_valid(secret, secret_len);
  return warpcrypt::run_stream_job(job, valid, options, [&](const engine::Placement &plan, JobMonitor &monitor, JobTotals &totals) {
    return warpcrypt::engine::run_file_job(out_path, in_path, monitor, [&](int out_fd, int in_fd) {
      return sealed::run_open_fd(kHostCrypto, plan, checked, key_source,
                                 {secret, secret_len}, out_fd, in_fd, monitor, &totals);
    });
  });
}

wc_status wc_sealed_stream_seal_new(wc_sealed_stream **stream, const wc_options *options,
                                   const wc_seal_params *params, wc_job *job, uint8_t *header, size_t header_cap,
                                   const uint8_t *secret, size_t secret_len) {
  if (stream != nullptr) *stream = nullptr;
  const bool valid = stream != nullptr && header != nullptr && header_cap >= sealed::kHeaderLen &&
                     secret_valid(secret, secret_len);
  return warpcrypt::run_chunk_call_job(job, valid, options, [&](const engine::LaneSpec &spec, JobMonitor &monitor) {
    auto made = std::unique_ptr<wc_sealed_stream>(new (std::nothrow) wc_sealed_stream);
    if (!made) return WC_ERR_OUT_OF_MEMORY;
    const wc_status status = seal_header(params, secret_len, monitor, &made->header);
    if (status != WC_OK) return status;
    made->header_bytes = sealed::encode(made->header);
    std::copy(made->header_bytes.begin(), made->header_bytes.end(), header);
    return bind_stream(stream, std::move(made), spec, {secret, secret_len}, monitor);
  });
}

wc_status wc_sealed_stream_open_new(wc_sealed_stream **stream, const wc_options *options,
                                   const wc_open_params *params, wc_job *job, const uint8_t *header,
                                   size_t header_len, wc_seal_key_source key_source, const uint8_t *secret,
                                   size_t secret_len) {
  if (stream != nullptr) *stream = nullptr;
  wc_open_params checked{};
  const bool valid = open_params(params, &checked) && stream != nullptr &&
                     (header != nullptr || header_len == 0) && secret_valid(secret, secret_len);
  return warpcrypt::run_chunk_call_job(job, valid, options, [&](const engine::LaneSpec &spec, JobMonitor &monitor) {
    if (header_len < sealed::kHeaderLen) {
      monitor.fail_with_detail(WC_ERR_FORMAT, "not a sealed file: shorter than the 48-byte header");
      return WC_ERR_FORMAT;
    }
    auto made = std::unique_ptr<wc_sealed_stream>(new (std::nothrow) wc_sealed_stream);
    if (!made) return WC_ERR_OUT_OF_MEMORY;
    std::copy_n(header, sealed::kHeaderLen, made->header_bytes.begin());
    const char *detail = nullptr;
    wc_status status = sealed::decode(made->header_bytes, &made->header, &detail);
    if (status != WC_OK) {
      monitor.fail_with_detail(status, detail);
      return status;
    }
    status = sealed::accept_header(made->header, checked, key_source, monitor);
    if (status != WC_OK) return status;
    return bind_stream(stream, std::move(made), spec, {secret, secret_len}, monitor);
  });
}

uint64_t wc_sealed_stream_chunk_bytes(const wc_sealed_stream *stream) {
  return stream != nullptr ? stream->header.chunk_size() : 0;
}

wc_status wc_sealed_stream_layout(const wc_sealed_stream *stream, wc_job *job, uint64_t body_len, uint64_t *chunks,
                                  uint64_t *plaintext_len) {
  const bool valid = stream != nullptr && chunks != nullptr && plaintext_len != nullptr;
  return run_job(job, valid, [&](JobMonitor &monitor, JobTotals &) {
    sealed::Layout layout;
    const char *detail = nullptr;
    const wc_status status = sealed::layout_of(stream->header, body_len, &layout, &detail);
    if (status != WC_OK) {
      monitor.fail_with_detail(status, detail);
      return status;
    }
    *chunks = layout.chunks;
    *plaintext_len = layout.plaintext_len;
    return WC_OK;
  });
}

wc_status wc_sealed_stream_seal(const wc_sealed_stream *stream, wc_job *job, uint8_t *out, size_t out_cap,
                                size_t *out_len, uint64_t index, int last, const uint8_t *in, size_t in_len) {
  if (out_len != nullptr) *out_len = 0;
  const bool valid = stream != nullptr && out_len != nullptr && in_len <= SIZE_MAX - sealed::kTagLen &&
                     chunk_buffers_valid(out, in_len + sealed::kTagLen, in, in_len);
  return run_job(job, valid, [&](JobMonitor &monitor, JobTotals &totals) {
    if (out_cap < in_len + sealed::kTagLen) return WC_ERR_OUTPUT_TOO_SMALL;
    const wc_status status =
        engine::seal_chunk(*stream->cipher, sealed::stream_shape(stream->header, stream->header_bytes), index,
                           last != 0, out, in, in_len, monitor);
    if (status != WC_OK) return status;
    *out_len = in_len + sealed::kTagLen;
    totals.bytes_in = in_len;
    totals.bytes_out = *out_len;
    return WC_OK;
  });
}

wc_status wc_sealed_stream_open(const wc_sealed_stream *stream, wc_job *job, uint8_t *out, size_t out_cap,
                                size_t *out_len, uint64_t index, int last, const uint8_t *in, size_t in_len) {
  if (out_len != nullptr) *out_len = 0;
  const size_t plain_len = in_len > sealed::kTagLen ? in_len - sealed::kTagLen : 0;
  const bool valid = stream != nullptr && out_len != nullptr && chunk_buffers_valid(out, plain_len, in, in_len);
  return run_job(job, valid, [&](JobMonitor &monitor, JobTotals &totals) {
    if (out_cap < plain_len) return WC_ERR_OUTPUT_TOO_SMALL;
    const wc_status status =
        engine::open_chunk(*stream->cipher, sealed::stream_shape(stream->header, stream->header_bytes), index,
                           last != 0, out, in, in_len, monitor);
    if (status != WC_OK) return status;
    *out_len = plain_len;
    totals.bytes_in = in_len;
    totals.bytes_out = plain_len;
    return WC_OK;
  });
}

void wc_sealed_stream_free(wc_sealed_stream *stream) { delete stream; }

}  // extern "C"
