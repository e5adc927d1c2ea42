#include "files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "errors.h"
#include "options.h"
#include "views.h"
#include "warpcrypt/warpcrypt.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace wcpy {
namespace {

// A job's progress callback into Python. The library calls it from its
// worker threads without the GIL; an exception it raises cancels the job and
// is raised again once the call returns.
class Progress {
 public:
  explicit Progress(nb::object callback) : callback_(std::move(callback)) {}

  void attach(wc_job *job) {
    if (callback_.is_none()) return;
    job->progress = &Progress::call;
    job->progress_user = this;
  }

  // After the job: the callback's exception, if it raised one.
  void rethrow() {
    if (error_) {
      nb::gil_scoped_acquire gil;
      error_->restore();
      throw nb::python_error();
    }
  }

 private:
  static int call(void *self, uint64_t done, uint64_t total) {
    auto *progress = static_cast<Progress *>(self);
    nb::gil_scoped_acquire gil;
    try {
      return nb::cast<bool>(nb::bool_(progress->callback_(done, total))) ? 1 : 0;
    } catch (nb::python_error &error) {
      progress->error_.emplace(std::move(error));
      return 1;
    }
  }

  nb::object callback_;
  std::optional<nb::python_error> error_;
};

// The statistics a finished job leaves: bytes in and out, seconds, and the
// bytes each backend took.
nb::tuple stats(const wc_job &job) {
  return nb::make_tuple(job.bytes_in, job.bytes_out, job.seconds, job.cpu_bytes, job.gpu_bytes);
}

// Raises for a failed job: what the call was doing (the file it was on), then
// the library's sentence.
void check_job(wc_status status, const wc_job &job, const std::string &what) {
  if (status != WC_OK) throw Failure(status, what + ": " + job.message);
}

// Runs `call(&job)` without the GIL, with the caller's progress callback
// attached, and returns the job's statistics or raises for its failure.
template <typename Call>
nb::tuple run_job(nb::object callback, const std::string &what, Call call) {
  wc_job job;
  wc_job_init(&job);
  Progress progress(std::move(callback));
  progress.attach(&job);
  wc_status status;
  {
    nb::gil_scoped_release released;
    status = call(&job);
  }
  progress.rethrow();
  check_job(status, job, what);
  return stats(job);
}

nb::tuple crypt_file(int direction, const std::string &cipher_name, nb::handle key_object, nb::handle iv_object,
                     const std::string &source, const std::string &target, bool padding, int backend,
                     unsigned threads, nb::object callback) {
  const wc_cipher *cipher = wc_cipher_by_name(cipher_name.c_str());
  if (cipher == nullptr) throw Failure(WC_ERR_UNKNOWN_CIPHER, "unknown cipher '" + cipher_name + "'");
  const View key = View::host(key_object, Access::read, "key");
  std::optional<View> iv;
  if (!iv_object.is_none()) iv.emplace(View::host(iv_object, Access::read, "iv"));
  if (!padding) cipher = wc_cipher_unpadded(cipher);
  const wc_options options = make_options(backend, threads);
  const auto run = direction == WC_ENCRYPT ? wc_encrypt_file : wc_decrypt_file;
  return run_job(std::move(callback), std::string(direction == WC_ENCRYPT ? "encrypting " : "decrypting ") + source,
                 [&](wc_job *job) {
                   return run(&options, cipher, job, target.c_str(), source.c_str(), key.data(), key.size(),
                              iv ? iv->data() : nullptr, iv ? iv->size() : 0);
                 });
}

nb::tuple seal_file(const std::string &source, const std::string &target, int key_source, nb::handle secret_object,
                    const std::string &aead_name, uint64_t chunk_bytes, int kdf, uint32_t argon2_ops,
                    uint64_t argon2_memory, uint32_t iterations, const std::string &digest, int backend,
                    unsigned threads, nb::object callback) {
  const wc_aead *aead = wc_aead_by_name(aead_name.c_str());
  if (aead == nullptr) throw Failure(WC_ERR_UNKNOWN_CIPHER, "unknown AEAD '" + aead_name + "'");
  const View secret = View::host(secret_object, Access::read, "secret");
  wc_seal_params params;
  wc_seal_params_init(&params);
  params.aead = aead;
  params.key_source = static_cast<wc_seal_key_source>(key_source);
  params.chunk_bytes = chunk_bytes;
  params.kdf = static_cast<wc_seal_kdf>(kdf);
  params.argon2_ops = argon2_ops;
  params.argon2_memory = argon2_memory;
  params.iterations = iterations;
  params.digest = digest.c_str();
  const wc_options options = make_options(backend, threads);
  return run_job(std::move(callback), "sealing " + source, [&](wc_job *job) {
    return wc_seal_file(&options, &params, job, target.c_str(), source.c_str(), secret.data(), secret.size());
  });
}

nb::tuple open_file(const std::string &source, const std::string &target, int key_source, nb::handle secret_object,
                    uint64_t offset, uint64_t length, uint32_t max_iterations, uint32_t max_argon2_ops,
                    uint64_t max_argon2_memory, int backend, unsigned threads, nb::object callback) {
  const View secret = View::host(secret_object, Access::read, "secret");
  const wc_options options = make_options(backend, threads);
  wc_open_params params;
  wc_open_params_init(&params);
  params.offset = offset;
  params.length = length;
  params.max_iterations = max_iterations;
  params.max_argon2_ops = max_argon2_ops;
  params.max_argon2_memory = max_argon2_memory;
  return run_job(std::move(callback), "opening " + source, [&](wc_job *job) {
    return wc_open_file(&options, &params, job, target.c_str(), source.c_str(),
                        static_cast<wc_seal_key_source>(key_source), secret.data(), secret.size());
  });
}

nb::tuple sealed_info(const std::string &path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Failure(WC_ERR_IO, path + ": " + std::strerror(errno));
  wc_sealed_info info{};
  wc_job job;
  wc_job_init(&job);
  const wc_status status = wc_sealed_inspect(fd, &info, &job);
  close(fd);
  check_job(status, job, path);
  return nb::make_tuple(wc_aead_name(info.aead), static_cast<int>(info.key_source), info.digest, info.iterations,
                        info.chunk_bytes, info.chunks, info.plaintext_len,
                        nb::bytes(reinterpret_cast<const char *>(info.salt), sizeof info.salt),
                        nb::bytes(reinterpret_cast<const char *>(info.nonce_prefix), sizeof info.nonce_prefix),
                        static_cast<int>(info.kdf), info.argon2_ops, info.argon2_memory);
}

}  // namespace

void bind_files(nb::module_ &m) {
  m.attr("SEAL_PASSPHRASE") = static_cast<int>(WC_SEAL_PASSPHRASE);
  m.attr("SEAL_KEY") = static_cast<int>(WC_SEAL_KEY);
  m.attr("SEAL_DEFAULT_CHUNK_BYTES") = WC_SEAL_DEFAULT_CHUNK_BYTES;
  m.attr("SEAL_MIN_CHUNK_BYTES") = WC_SEAL_MIN_CHUNK_BYTES;
  m.attr("SEAL_MAX_CHUNK_BYTES") = WC_SEAL_MAX_CHUNK_BYTES;
  m.attr("SEAL_ARGON2ID") = static_cast<int>(WC_SEAL_ARGON2ID);
  m.attr("SEAL_PBKDF2") = static_cast<int>(WC_SEAL_PBKDF2);
  m.attr("SEAL_DEFAULT_ARGON2_OPS") = WC_SEAL_DEFAULT_ARGON2_OPS;
  m.attr("SEAL_DEFAULT_ARGON2_MEMORY") = WC_SEAL_DEFAULT_ARGON2_MEMORY;
  m.attr("SEAL_DEFAULT_ITERATIONS") = WC_SEAL_DEFAULT_ITERATIONS;
  m.attr("OPEN_DEFAULT_MAX_ITERATIONS") = WC_OPEN_DEFAULT_MAX_ITERATIONS;
  m.attr("OPEN_DEFAULT_MAX_ARGON2_OPS") = WC_OPEN_DEFAULT_MAX_ARGON2_OPS;
  m.attr("OPEN_DEFAULT_MAX_ARGON2_MEMORY") = WC_OPEN_DEFAULT_MAX_ARGON2_MEMORY;
  m.def("crypt_file", &crypt_file, "direction"_a, "cipher"_a, "key"_a, "iv"_a.none(), "source"_a, "target"_a,
        "padding"_a, "backend"_a, "threads"_a, "progress"_a.none());
  m.def("seal_file", &seal_file, "source"_a, "target"_a, "key_source"_a, "secret"_a, "aead"_a, "chunk_bytes"_a,
        "kdf"_a, "argon2_ops"_a, "argon2_memory"_a, "iterations"_a, "digest"_a, "backend"_a, "threads"_a,
        "progress"_a.none());
  m.def("open_file", &open_file, "source"_a, "target"_a, "key_source"_a, "secret"_a, "offset"_a, "length"_a,
        "max_iterations"_a, "max_argon2_ops"_a, "max_argon2_memory"_a, "backend"_a, "threads"_a, "progress"_a.none());
  m.def("sealed_info", &sealed_info, "path"_a);
}

}  // namespace wcpy
