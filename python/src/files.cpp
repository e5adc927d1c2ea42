#include "files.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "device.h"
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

// The files a job reads and writes, to name the one a failed read or write
// was on (an empty output: the job writes none).
struct JobFiles {
  std::string input;
  std::string output;
};

// Raises for a failed job: an OSError for the file a read or write failed
// on, else what the call was doing (the file it was on), then the library's
// sentence.
void check_job(wc_status status, const wc_job &job, const std::string &what, const JobFiles &files) {
  if (status == WC_OK) return;
  if (status == WC_ERR_IO && job.os_error != 0) {
    throw Failure(job.os_error, job.message, job.io_side == WC_IO_OUTPUT ? files.output : files.input);
  }
  throw Failure(status, what + ": " + job.message);
}

// Runs `call(&job)` without the GIL, with the caller's progress callback
// attached, and returns the job's statistics or raises for its failure.
template <typename Call>
nb::tuple run_job(nb::object callback, const std::string &what, const JobFiles &files, Call call) {
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
  check_job(status, job, what, files);
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
                 {source, target}, [&](wc_job *job) {
                   return run(&options, cipher, job, target.c_str(), source.c_str(), key.data(), key.size(),
                              iv ? iv->data() : nullptr, iv ? iv->size() : 0);
                 });
}

// The parameters seal_file and SealedWriter take, as Python passes them;
// `digest` must outlive the result.
wc_seal_params seal_params(const std::string &aead_name, int key_source, uint64_t chunk_bytes, int kdf,
                           uint32_t argon2_ops, uint64_t argon2_memory, uint32_t iterations,
                           const std::string &digest) {
  const wc_aead *aead = wc_aead_by_name(aead_name.c_str());
  if (aead == nullptr) throw Failure(WC_ERR_UNKNOWN_CIPHER, "unknown AEAD '" + aead_name + "'");
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
  return params;
}

// The limits open_file and SealedReader put on a header's KDF costs.
wc_open_params open_params(uint32_t max_iterations, uint32_t max_argon2_ops, uint64_t max_argon2_memory) {
  wc_open_params params;
  wc_open_params_init(&params);
  params.max_iterations = max_iterations;
  params.max_argon2_ops = max_argon2_ops;
  params.max_argon2_memory = max_argon2_memory;
  return params;
}

nb::tuple seal_file(const std::string &source, const std::string &target, int key_source, nb::handle secret_object,
                    const std::string &aead_name, uint64_t chunk_bytes, int kdf, uint32_t argon2_ops,
                    uint64_t argon2_memory, uint32_t iterations, const std::string &digest, int backend,
                    unsigned threads, nb::object callback) {
  const wc_seal_params params =
      seal_params(aead_name, key_source, chunk_bytes, kdf, argon2_ops, argon2_memory, iterations, digest);
  const View secret = View::host(secret_object, Access::read, "secret");
  const wc_options options = make_options(backend, threads);
  return run_job(std::move(callback), "sealing " + source, {source, target}, [&](wc_job *job) {
    return wc_seal_file(&options, &params, job, target.c_str(), source.c_str(), secret.data(), secret.size());
  });
}

nb::tuple open_file(const std::string &source, const std::string &target, int key_source, nb::handle secret_object,
                    uint64_t offset, uint64_t length, uint32_t max_iterations, uint32_t max_argon2_ops,
                    uint64_t max_argon2_memory, int backend, unsigned threads, nb::object callback) {
  const View secret = View::host(secret_object, Access::read, "secret");
  const wc_options options = make_options(backend, threads);
  wc_open_params params = open_params(max_iterations, max_argon2_ops, max_argon2_memory);
  params.offset = offset;
  params.length = length;
  return run_job(std::move(callback), "opening " + source, {source, target}, [&](wc_job *job) {
    return wc_open_file(&options, &params, job, target.c_str(), source.c_str(),
                        static_cast<wc_seal_key_source>(key_source), secret.data(), secret.size());
  });
}

nb::tuple sealed_info(const std::string &path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Failure(errno, std::strerror(errno), path);
  wc_sealed_info info{};
  wc_job job;
  wc_job_init(&job);
  const wc_status status = wc_sealed_inspect(fd, &info, &job);
  close(fd);
  check_job(status, job, path, {path, {}});
  return nb::make_tuple(wc_aead_name(info.aead), static_cast<int>(info.key_source), info.digest, info.iterations,
                        info.chunk_bytes, info.chunks, info.plaintext_len,
                        nb::bytes(reinterpret_cast<const char *>(info.salt), sizeof info.salt),
                        nb::bytes(reinterpret_cast<const char *>(info.nonce_prefix), sizeof info.nonce_prefix),
                        static_cast<int>(info.kdf), info.argon2_ops, info.argon2_memory);
}


// A sealed file's chunks one at a time (wc_sealed_stream), for
// warpcrypt.SealedWriter and SealedReader, which move the bytes; `name` (the
// file, or the stream's repr) begins every failure's message.
class SealedStream {
 public:
  static nb::tuple seal(const std::string &name, int key_source, nb::handle secret_object,
                        const std::string &aead_name, uint64_t chunk_bytes, int kdf, uint32_t argon2_ops,
                        uint64_t argon2_memory, uint32_t iterations, const std::string &digest, int backend) {
    const wc_seal_params params =
        seal_params(aead_name, key_source, chunk_bytes, kdf, argon2_ops, argon2_memory, iterations, digest);
    const View secret = View::host(secret_object, Access::read, "secret");
    const wc_options options = make_options(backend, 1);
    SealedStream made(name);
    nb::bytes header = uninitialized_bytes(WC_SEAL_HEADER_LEN);
    wc_job job;
    wc_job_init(&job);
    wc_status status;
    {
      nb::gil_scoped_release released;  // the KDF takes a while
      status = wc_sealed_stream_seal_new(&made.stream_, &options, &params, &job, bytes_data(header),
                                         WC_SEAL_HEADER_LEN, secret.data(), secret.size());
    }
    made.check(status, job, "sealing ");
    return nb::make_tuple(std::move(made), header);
  }

  static SealedStream open(const std::string &name, nb::bytes header, int key_source, nb::handle secret_object,
                           uint32_t max_iterations, uint32_t max_argon2_ops, uint64_t max_argon2_memory,
                           int backend) {
    const View secret = View::host(secret_object, Access::read, "secret");
    const wc_open_params params = open_params(max_iterations, max_argon2_ops, max_argon2_memory);
    const wc_options options = make_options(backend, 1);
    SealedStream made(name);
    wc_job job;
    wc_job_init(&job);
    wc_status status;
    {
      nb::gil_scoped_release released;
      status = wc_sealed_stream_open_new(&made.stream_, &options, &params, &job, bytes_data(header), header.size(),
                                         static_cast<wc_seal_key_source>(key_source), secret.data(), secret.size());
    }
    made.check(status, job, "opening ");
    return made;
  }

  explicit SealedStream(std::string name) : name_(std::move(name)) {}
  SealedStream(SealedStream &&other) noexcept : stream_(other.stream_), name_(std::move(other.name_)) {
    other.stream_ = nullptr;
  }
  SealedStream(const SealedStream &) = delete;
  ~SealedStream() { wc_sealed_stream_free(stream_); }

  uint64_t chunk_size() const { return wc_sealed_stream_chunk_bytes(stream_); }

  // (chunks, plaintext bytes) of a body of `body_len` bytes.
  nb::tuple layout(uint64_t body_len) const {
    uint64_t chunks = 0;
    uint64_t plaintext_len = 0;
    wc_job job;
    wc_job_init(&job);
    check(wc_sealed_stream_layout(stream_, &job, body_len, &chunks, &plaintext_len), job, "opening ");
    return nb::make_tuple(chunks, plaintext_len);
  }

  nb::bytes seal_chunk(uint64_t index, bool last, nb::handle data) const {
    const View in = View::host(data, Access::read, "data");
    nb::bytes out = uninitialized_bytes(in.size() + WC_SEAL_TAG_LEN);
    run(wc_sealed_stream_seal, "sealing ", out, index, last, in);
    return out;
  }

  nb::bytes open_chunk(uint64_t index, bool last, nb::handle data) const {
    const View in = View::host(data, Access::read, "data");
    nb::bytes out = uninitialized_bytes(in.size() > WC_SEAL_TAG_LEN ? in.size() - WC_SEAL_TAG_LEN : 0);
    run(wc_sealed_stream_open, "opening ", out, index, last, in);
    return out;
  }

 private:
  template <typename Call>
  void run(Call call, const char *doing, const nb::bytes &out, uint64_t index, bool last, const View &in) const {
    wc_job job;
    wc_job_init(&job);
    size_t written = 0;
    wc_status status;
    {
      nb::gil_scoped_release released;
      status = call(stream_, &job, bytes_data(out), out.size(), &written, index, last ? 1 : 0, in.data(), in.size());
    }
    check(status, job, doing);
  }

  void check(wc_status status, const wc_job &job, const char *doing) const {
    check_job(status, job, doing + name_, {name_, name_});
  }

  wc_sealed_stream *stream_ = nullptr;
  std::string name_;
};

// wc_output_move_beneath: `file` moved to `path` beneath the folder `root`.
void move_beneath(const std::string &root, const std::string &path, const std::string &file) {
  int os_error = 0;
  const char *detail = nullptr;
  const wc_status status = wc_output_move_beneath(root.c_str(), path.c_str(), file.c_str(), &os_error, &detail);
  const std::string target = root + "/" + path;
  if (status == WC_ERR_IO) throw Failure(os_error, detail != nullptr ? detail : std::strerror(os_error), target);
  if (status != WC_OK) throw Failure(status, target + ": " + (detail != nullptr ? detail : wc_status_string(status)));
}

// A file written as wc_output_open describes: a temporary file beside the
// target, renamed over it by commit(), removed by discard() or when
// collected uncommitted. `inputs` are descriptors of the files the caller
// reads for this output, which it may not replace.
class AtomicOutput {
 public:
  AtomicOutput(const std::string &path, const std::vector<int> &inputs, bool secret) : path_(path) {
    int os_error = 0;
    const char *detail = nullptr;
    std::vector<wc_file_id> read(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (wc_file_id_of_fd(inputs[i], &read[i], &os_error) != WC_OK) {
        throw Failure(os_error, std::strerror(os_error), "descriptor " + std::to_string(inputs[i]));
      }
    }
    const wc_status status = wc_output_open(&output_, path.c_str(), read.data(), read.size(), secret ? WC_OUTPUT_SECRET : 0u,
                                            &os_error, &detail);
    if (status == WC_ERR_IO) throw Failure(os_error, detail != nullptr ? detail : std::strerror(os_error), path);
    if (status != WC_OK) throw Failure(status, path + ": " + (detail != nullptr ? detail : wc_status_string(status)));
  }
  AtomicOutput(const AtomicOutput &) = delete;
  ~AtomicOutput() { wc_output_free(output_); }

  int fd() const {
    require_open();
    return wc_output_fd(output_);
  }

  void commit() {
    require_open();
    int os_error = 0;
    const wc_status status = wc_output_commit(output_, &os_error);
    discard();
    if (status == WC_ERR_IO) throw Failure(os_error, std::strerror(os_error), path_);
    if (status != WC_OK) fail(status);
  }

  void discard() {
    wc_output_free(output_);
    output_ = nullptr;
  }

 private:
  void require_open() const {
    if (output_ == nullptr) throw Failure(WC_ERR_CONTEXT_STATE, path_ + ": the output was already closed");
  }

  wc_output *output_ = nullptr;
  std::string path_;
};

// Linux 5.14's madvise advice, where the C library predates it.
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

// Makes the pages under `region` (part of a shared, writable file mapping)
// present and writable in one call, then copies `data` (if not None) to the
// region's start, all without the GIL: how threads fill one mapped file at
// once. A page the filesystem cannot back (a full disk, a page past the
// end) is an OSError here rather than a SIGBUS on the copy. False, with
// nothing copied, where the kernel cannot populate pages (before Linux
// 5.14).
bool fill_mapped(nb::handle region, nb::handle data) {
  const View target = View::host(region, Access::write, "region");
  std::optional<View> source;
  if (!data.is_none()) {
    source.emplace(View::host(data, Access::read, "data"));
    if (source->size() > target.size()) {
      throw Failure(WC_ERR_INVALID_ARGUMENT, "data holds " + std::to_string(source->size()) +
                                                 " bytes, more than the region's " + std::to_string(target.size()));
    }
  }
  if (target.size() == 0) return true;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto first = reinterpret_cast<uintptr_t>(target.data()) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(target.data()) + target.size() + page - 1) / page * page;
  int error = 0;
  {
    nb::gil_scoped_release unlocked;
    do {
      error = madvise(reinterpret_cast<void *>(first), end - first, MADV_POPULATE_WRITE) == 0 ? 0 : errno;
    } while (error == EINTR);
    if (error == 0 && source) std::memcpy(target.data(), source->data(), source->size());
  }
  if (error == EINVAL) return false;
  // EFAULT: a store would have raised SIGBUS, the filesystem having no
  // block for the page: full, or over a quota.
  if (error == EFAULT) throw Failure(ENOSPC, "no space left for the file's pages", "");
  if (error != 0) throw Failure(error, std::strerror(error), "");
  return true;
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
  m.def("move_beneath", &move_beneath, "root"_a, "path"_a, "file"_a,
        "Moves the complete file to path beneath the folder root (wc_output_move_beneath): no folder on the way "
        "a link, a replaced file's mode kept.");
  m.def("fill_mapped", &fill_mapped, "region"_a, "data"_a.none(),
        "Makes the pages under region (a shared file mapping) present, then copies data there, without the GIL; "
        "False where the kernel cannot (before Linux 5.14).");
  m.def("read_files_to_device", &read_files_to_device, "ranges"_a,
        "Reads each (fd, offset, length, device pointer) range of open files into device memory, without the "
        "GIL; returns once every byte is there (wc_read_files_to_device).");
  m.attr("SEAL_HEADER_LEN") = WC_SEAL_HEADER_LEN;
  m.attr("SEAL_TAG_LEN") = WC_SEAL_TAG_LEN;
  nb::class_<AtomicOutput>(m, "AtomicOutput",
                           "A file written beside its target and renamed over it on commit (wc_output_open).")
      .def(nb::init<const std::string &, const std::vector<int> &, bool>(), "path"_a,
           "inputs"_a = std::vector<int>{}, "secret"_a = false,
           "inputs: descriptors of the files read for this output, which it may not be; secret: a key, "
           "mode 0600 once complete too.")
      .def_prop_ro("fd", &AtomicOutput::fd, "The descriptor to write the data to.")
      .def("commit", &AtomicOutput::commit, "Gives the file its final mode and name, and closes it.")
      .def("discard", &AtomicOutput::discard, "Removes the file unless committed, and closes it.");
  nb::class_<SealedStream>(m, "SealedStream",
                           "A sealed file's key and header: its chunks sealed or opened one at a time.")
      .def_static("seal", &SealedStream::seal, "name"_a, "key_source"_a, "secret"_a, "aead"_a, "chunk_bytes"_a,
                  "kdf"_a, "argon2_ops"_a, "argon2_memory"_a, "iterations"_a, "digest"_a, "backend"_a,
                  "A stream that seals a new file: (stream, the header to write first).")
      .def_static("open", &SealedStream::open, "name"_a, "header"_a, "key_source"_a, "secret"_a,
                  "max_iterations"_a, "max_argon2_ops"_a, "max_argon2_memory"_a, "backend"_a,
                  "A stream that opens the file with this header.")
      .def_prop_ro("chunk_size", &SealedStream::chunk_size, "Plaintext bytes per chunk.")
      .def("layout", &SealedStream::layout, "body_len"_a,
           "(chunks, plaintext bytes) of a file whose body, after the header, is body_len bytes.")
      .def("seal_chunk", &SealedStream::seal_chunk, "index"_a, "last"_a, "data"_a,
           "Chunk `index` sealed: its ciphertext and tag.")
      .def("open_chunk", &SealedStream::open_chunk, "index"_a, "last"_a, "data"_a,
           "Sealed chunk `index` opened: its plaintext, once its tag matched.");
}

}  // namespace wcpy
