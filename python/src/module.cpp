// warpcrypt._native: the C API for the `warpcrypt` package. The package's
// Python modules shape it like pyca/cryptography; this layer turns Python
// objects into pointers and lengths, releases the GIL around the work, and
// raises warpcrypt.exceptions for failed statuses.
#include <optional>
#include <string>

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "aead.h"
#include "age.h"
#include "device.h"
#include "errors.h"
#include "files.h"
#include "options.h"
#include "views.h"
#include "warpcrypt/warpcrypt.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace wcpy {

void bind_baselines(nb::module_ &m);
void bind_plan(nb::module_ &m);

namespace {

// An entry of the library's static cipher table.
struct CipherInfo {
  const wc_cipher *cipher;
};

CipherInfo lookup(const std::string &name) {
  const wc_cipher *cipher = wc_cipher_by_name(name.c_str());
  if (cipher == nullptr) {
    throw Failure(WC_ERR_UNKNOWN_CIPHER, "unknown cipher '" + name + "' (warpcrypt.ciphers() lists them)");
  }
  return {cipher};
}

// The cipher as named, or without padding its unpadded twin: padding is
// part of the cipher, not of the options.
const wc_cipher *with_padding(const CipherInfo &info, bool padding) {
  return padding ? info.cipher : wc_cipher_unpadded(info.cipher);
}

wc_direction direction_of(int direction) {
  if (direction != WC_ENCRYPT && direction != WC_DECRYPT) throw nb::value_error("direction is ENCRYPT or DECRYPT");
  return static_cast<wc_direction>(direction);
}

// The key and IV of one call. An IV of None is an empty one: ECB takes none.
struct Secrets {
  Secrets(nb::handle key_object, nb::handle iv_object) : key(View::host(key_object, Access::read, "key")) {
    if (!iv_object.is_none()) iv.emplace(View::host(iv_object, Access::read, "iv"));
  }
  const uint8_t *iv_data() const { return iv ? iv->data() : nullptr; }
  size_t iv_size() const { return iv ? iv->size() : 0; }

  View key;
  std::optional<View> iv;
};

// Raises for a failed status, saying what the caller got wrong where the
// library's text alone would leave them guessing.
void check(wc_status status, const wc_cipher *cipher, const Secrets &secrets) {
  if (status == WC_OK) return;
  const std::string name = wc_cipher_name(cipher);
  if (status == WC_ERR_KEY_LEN) {
    throw Failure(status, name + " takes a " + std::to_string(wc_cipher_key_len(cipher)) + "-byte key, not " +
                              std::to_string(secrets.key.size()) + " bytes");
  }
  if (status == WC_ERR_IV_LEN) {
    const size_t wanted = wc_cipher_iv_len(cipher);
    throw Failure(status, name + (wanted == 0 ? " takes no IV" : " takes a " + std::to_string(wanted) + "-byte IV") +
                              ", not " + std::to_string(secrets.iv_size()) + " bytes");
  }
  fail(status);
}

[[noreturn]] void output_too_small(const char *role, size_t held, size_t needed) {
  throw Failure(WC_ERR_OUTPUT_TOO_SMALL, std::string(role) + " holds " + std::to_string(held) +
                                             " bytes; the result needs " + std::to_string(needed));
}

// A new bytes object to write into, shrunk to what was written.
class BytesResult {
 public:
  explicit BytesResult(size_t capacity) {
    if (capacity > static_cast<size_t>(PY_SSIZE_T_MAX)) {
      throw Failure(WC_ERR_OUT_OF_MEMORY, "the result would be larger than a bytes object can be");
    }
    object_ = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(capacity));
    if (object_ == nullptr) throw nb::python_error();
  }
  ~BytesResult() { Py_XDECREF(object_); }
  BytesResult(const BytesResult &) = delete;
  BytesResult &operator=(const BytesResult &) = delete;

  uint8_t *data() { return reinterpret_cast<uint8_t *>(PyBytes_AsString(object_)); }

  nb::bytes finish(size_t written) {
    if (written != static_cast<size_t>(PyBytes_Size(object_))) {
#ifdef Py_LIMITED_API
      // The stable ABI has no way to shrink a bytes object: a padded
      // result is copied once into one of its own size.
      return nb::bytes(data(), written);
#else
      if (_PyBytes_Resize(&object_, static_cast<Py_ssize_t>(written)) != 0) {
        throw nb::python_error();  // _PyBytes_Resize freed the object and set object_ to NULL
      }
#endif
    }
    return nb::steal<nb::bytes>(std::exchange(object_, nullptr));
  }

 private:
  PyObject *object_ = nullptr;
};

using HostCall = wc_status (*)(const wc_options *, const wc_cipher *, uint8_t *, size_t, size_t *, const uint8_t *,
                               size_t, const uint8_t *, size_t, const uint8_t *, size_t);
using DeviceCall = wc_status (*)(const wc_cipher *, uint8_t *, const uint8_t *, size_t,
                                 const uint8_t *, size_t, const uint8_t *, size_t, uint64_t, wc_cuda_stream);

nb::bytes crypt_bytes(int direction, const CipherInfo &info, nb::handle key, nb::handle iv, nb::handle data, bool padding,
                int backend, unsigned threads) {
  const HostCall call = direction_of(direction) == WC_ENCRYPT ? wc_encrypt : wc_decrypt;
  const Secrets secrets(key, iv);
  const View in = View::host(data, Access::read, "data");
  const wc_options options = make_options(backend, threads);
  const wc_cipher *cipher = with_padding(info, padding);
  const size_t capacity = direction == WC_ENCRYPT ? wc_encrypt_bound(cipher, in.size()) : in.size();
  BytesResult result(capacity);
  size_t written = 0;
  wc_status status;
  {
    nb::gil_scoped_release unlocked;
    status = call(&options, cipher, result.data(), capacity, &written, secrets.key.data(), secrets.key.size(),
                  secrets.iv_data(), secrets.iv_size(), in.data(), in.size());
  }
  check(status, cipher, secrets);
  return result.finish(written);
}

size_t crypt_host_into(wc_direction direction, const wc_cipher *cipher, const Secrets &secrets, const View &in,
                       const View &out, const wc_options &options) {
  const size_t needed = direction == WC_ENCRYPT ? wc_encrypt_bound(cipher, in.size()) : in.size();
  if (out.size() < needed) output_too_small("out", out.size(), needed);
  const HostCall call = direction == WC_ENCRYPT ? wc_encrypt : wc_decrypt;
  size_t written = 0;
  wc_status status;
  {
    nb::gil_scoped_release unlocked;
    status = call(&options, cipher, out.data(), out.size(), &written, secrets.key.data(), secrets.key.size(),
                  secrets.iv_data(), secrets.iv_size(), in.data(), in.size());
  }
  check(status, cipher, secrets);
  return written;
}

size_t crypt_device(wc_direction direction, const wc_cipher *cipher, const Secrets &secrets, const View &in,
                    const View &out, const StreamChoice &streams, uint64_t stream_offset) {
  const std::string name = wc_cipher_name(cipher);
  if (wc_cipher_is_padded(cipher) != 0) {
    throw Failure(WC_ERR_INVALID_ARGUMENT, "GPU arrays keep their length, so they are never padded: pass "
                                           "padding=False for " + name);
  }
  const size_t len = in.size();
  if (out.size() < len) output_too_small("out", out.size(), len);
  if (in.device() >= 0 && out.device() >= 0 && in.device() != out.device()) {
    throw Failure(WC_ERR_INVALID_ARGUMENT, "data is on GPU " + std::to_string(in.device()) + " and out on GPU " +
                                               std::to_string(out.device()) + ": both must be on one device");
  }
  if (in.data() != out.data() && len != 0 && in.data() < out.data() + len && out.data() < in.data() + len) {
    throw Failure(WC_ERR_INVALID_ARGUMENT, "data and out overlap without being the same memory: work in place "
                                           "(out=data) or on separate arrays");
  }
  if (stream_offset > UINT64_MAX - len) {
    throw Failure(WC_ERR_INVALID_ARGUMENT, "stream_offset + len(data) passes the 2**64-byte end of the stream");
  }
  const uintptr_t stream = streams.handle.value_or(0);
  const int device = out.device() >= 0 ? out.device() : in.device();
  if (auto ready = in.ready_on()) order_after(device, stream, *ready);
  if (&out != &in) {
    if (auto ready = out.ready_on()) order_after(device, stream, *ready);
  }
  const DeviceCall call = direction == WC_ENCRYPT ? wc_encrypt_device_async : wc_decrypt_device_async;
  wc_status status;
  {
    nb::gil_scoped_release unlocked;
    status = call(cipher, out.data(), in.data(), len, secrets.key.data(), secrets.key.size(),
                  secrets.iv_data(), secrets.iv_size(), stream_offset, reinterpret_cast<wc_cuda_stream>(stream));
  }
  check(status, cipher, secrets);
  return len;
}

size_t crypt_into(int direction, const CipherInfo &info, nb::handle key, nb::handle iv, nb::handle data,
                  nb::handle out, bool padding, int backend, unsigned threads, std::optional<uintptr_t> stream,
                  uint64_t stream_offset, nb::handle resolver) {
  const wc_direction way = direction_of(direction);
  const Secrets secrets(key, iv);
  StreamChoice streams{stream, resolver};
  const View out_view = View::any(out, Access::write, "out", streams);
  // In place, the one view serves both roles: one export, one stream handshake.
  std::optional<View> separate;
  if (!data.is(out)) separate.emplace(View::any(data, Access::read, "data", streams));
  const View &in_view = separate ? *separate : out_view;
  if (in_view.on_device() != out_view.on_device()) {
    throw Failure(WC_ERR_INVALID_ARGUMENT, "data and out must both be in host memory or both in GPU memory");
  }
  const wc_options options = make_options(backend, threads);
  const wc_cipher *cipher = with_padding(info, padding);
  if (!out_view.on_device()) {
    if (stream_offset != 0) throw Failure(WC_ERR_INVALID_ARGUMENT, "stream_offset applies to GPU arrays only");
    return crypt_host_into(way, cipher, secrets, in_view, out_view, options);
  }
  return crypt_device(way, cipher, secrets, in_view, out_view, streams, stream_offset);
}

// A streaming context (wc_ctx) on host memory: pyca/cryptography's
// CipherContext. The key schedule is wiped when the context is finalized,
// fails, or is collected.
class CipherContext {
 public:
  CipherContext(const CipherInfo &info, int direction, nb::handle key, nb::handle iv, bool padding, int backend,
                unsigned threads)
      : cipher_(with_padding(info, padding)) {
    const Secrets secrets(key, iv);
    const wc_options options = make_options(backend, threads);
    check(wc_ctx_new(&ctx_, &options, cipher_, direction_of(direction), secrets.key.data(), secrets.key.size(),
                     secrets.iv_data(), secrets.iv_size()),
          cipher_, secrets);
    backend_ = wc_ctx_backend(ctx_);
  }
  ~CipherContext() { wc_ctx_free(ctx_); }
  CipherContext(const CipherContext &) = delete;
  CipherContext &operator=(const CipherContext &) = delete;

  nb::bytes update(nb::handle data) {
    const Use use(*this);
    const View in = View::host(data, Access::read, "data");
    const size_t capacity = wc_ctx_update_bound(ctx_, in.size());
    BytesResult result(capacity);
    size_t written = 0;
    wc_status status;
    {
      nb::gil_scoped_release unlocked;
      status = wc_ctx_update(ctx_, result.data(), capacity, &written, in.data(), in.size());
    }
    finish_if_failed(status);
    return result.finish(written);
  }

  size_t update_into(nb::handle data, nb::handle buf) {
    const Use use(*this);
    const View in = View::host(data, Access::read, "data");
    const View out = View::host(buf, Access::write, "buf");
    const size_t needed = wc_ctx_update_bound(ctx_, in.size());
    // pyca/cryptography's words for the same mistake, which code may match.
    if (out.size() < needed) {
      throw Failure(WC_ERR_OUTPUT_TOO_SMALL,
                    "buffer must be at least " + std::to_string(needed) + " bytes for this payload");
    }
    size_t written = 0;
    wc_status status;
    {
      nb::gil_scoped_release unlocked;
      status = wc_ctx_update(ctx_, out.data(), out.size(), &written, in.data(), in.size());
    }
    finish_if_failed(status);
    return written;
  }

  nb::bytes finalize() {
    const Use use(*this);
    BytesResult result(WC_MAX_BLOCK_LEN);
    size_t written = 0;
    const wc_status status = wc_ctx_final(ctx_, result.data(), WC_MAX_BLOCK_LEN, &written);
    finish();
    if (status != WC_OK) fail(status);
    return result.finish(written);
  }

  const char *backend() const { return wc_backend_name(backend_); }

 private:
  // Holds the context for one call. The work runs without the GIL, so a
  // second thread could otherwise reach the same C context mid-call.
  class Use {
   public:
    explicit Use(CipherContext &context) : context_(context) {
      if (context.ctx_ == nullptr) {
        throw Failure(WC_ERR_CONTEXT_STATE, "this context is finished (finalized, or failed earlier): make a "
                                            "new one with encryptor() or decryptor()");
      }
      if (context.busy_) throw std::runtime_error("this cipher context is in use by another thread");
      context.busy_ = true;
    }
    ~Use() { context_.busy_ = false; }
    Use(const Use &) = delete;
    Use &operator=(const Use &) = delete;

   private:
    CipherContext &context_;
  };

  void finish() {
    wc_ctx_free(ctx_);
    ctx_ = nullptr;
  }

  // A failed context is dead in the C library; freeing it at once wipes its
  // key now and makes later calls say so.
  void finish_if_failed(wc_status status) {
    if (status == WC_OK) return;
    finish();
    fail(status);
  }

  wc_ctx *ctx_ = nullptr;
  const wc_cipher *cipher_;
  wc_backend backend_ = WC_BACKEND_AUTO;
  bool busy_ = false;
};

nb::dict backend_values() {
  nb::dict values;
  for (size_t i = 0; i < wc_backend_count(); ++i) {
    const wc_backend backend = wc_backend_at(i);
    values[wc_backend_name(backend)] = static_cast<int>(backend);
  }
  return values;
}

// HKDF (RFC 5869) with an OpenSSL digest name: warpcrypt.dask derives its
// keys through it.
nb::bytes hkdf(const std::string &digest, nb::handle secret, nb::handle salt, nb::handle info, size_t length) {
  const View secret_view = View::host(secret, Access::read, "secret");
  const View salt_view = View::host(salt, Access::read, "salt");
  const View info_view = View::host(info, Access::read, "info");
  BytesResult result(length);
  const wc_status status = wc_hkdf(digest.c_str(), result.data(), length, secret_view.data(), secret_view.size(),
                                   salt_view.data(), salt_view.size(), info_view.data(), info_view.size());
  if (status == WC_ERR_DIGEST) throw Failure(status, "unknown message digest '" + digest + "'");
  // The binding passes every pointer, so only the length can be wrong.
  if (status == WC_ERR_INVALID_ARGUMENT) {
    throw Failure(status, "HKDF gives 1 to 255 times the digest's length, not " + std::to_string(length) + " bytes");
  }
  if (status != WC_OK) fail(status);
  return result.finish(length);
}

// HMAC with an OpenSSL digest name: warpcrypt.dask's manifest MAC and key
// check. `length` is the digest's (32 for SHA-256).
nb::bytes hmac(const std::string &digest, nb::handle key, nb::handle message, size_t length) {
  const View key_view = View::host(key, Access::read, "key");
  const View message_view = View::host(message, Access::read, "message");
  BytesResult result(length);
  const wc_status status = wc_hmac(digest.c_str(), result.data(), length, key_view.data(), key_view.size(),
                                   message_view.data(), message_view.size());
  if (status == WC_ERR_DIGEST) throw Failure(status, "unknown message digest '" + digest + "'");
  if (status == WC_ERR_INVALID_ARGUMENT) {
    throw Failure(status, "HMAC-" + digest + " is not " + std::to_string(length) + " bytes long");
  }
  if (status != WC_OK) fail(status);
  return result.finish(length);
}

// The library's random source (OpenSSL's CSPRNG): every key, nonce, salt
// and id the package draws (warpcrypt._random).
nb::bytes random_bytes(size_t length) {
  BytesResult result(length);
  const wc_status status = wc_random_bytes(result.data(), length);
  if (status != WC_OK) fail(status);
  return result.finish(length);
}

// Ed25519 (RFC 8032) for the signed headers of CryptoTensors files
// (warpcrypt.safetensors): a public key from a 32-byte seed, a signature,
// and whether a signature verifies.
const uint8_t *key_bytes(const View &view, const char *what) {
  if (view.size() != 32) {
    throw Failure(WC_ERR_INVALID_ARGUMENT, std::string("an Ed25519 ") + what + " is 32 bytes, not " +
                                               std::to_string(view.size()));
  }
  return view.data();
}

nb::bytes ed25519_public_key(nb::handle seed) {
  const View seed_view = View::host(seed, Access::read, "seed");
  BytesResult result(32);
  const wc_status status = wc_ed25519_public_key(result.data(), key_bytes(seed_view, "seed"));
  if (status != WC_OK) fail(status);
  return result.finish(32);
}

nb::bytes ed25519_sign(nb::handle seed, nb::handle message) {
  const View seed_view = View::host(seed, Access::read, "seed");
  const View message_view = View::host(message, Access::read, "message");
  const uint8_t *seed_bytes = key_bytes(seed_view, "seed");
  BytesResult result(64);
  wc_status status;
  {
    nb::gil_scoped_release unlocked;
    status = wc_ed25519_sign(result.data(), message_view.data(), message_view.size(), seed_bytes);
  }
  if (status != WC_OK) fail(status);
  return result.finish(64);
}

bool ed25519_verify(nb::handle public_key, nb::handle signature, nb::handle message) {
  const View key_view = View::host(public_key, Access::read, "public_key");
  const View signature_view = View::host(signature, Access::read, "signature");
  const View message_view = View::host(message, Access::read, "message");
  const uint8_t *key = key_bytes(key_view, "public key");
  if (signature_view.size() != 64) return false;
  wc_status status;
  {
    nb::gil_scoped_release unlocked;
    status = wc_ed25519_verify(signature_view.data(), message_view.data(), message_view.size(), key);
  }
  if (status == WC_ERR_AUTH) return false;
  if (status != WC_OK) fail(status);
  return true;
}

nb::tuple device_info(int index) {
  wc_device_info info;
  const wc_status status = wc_device_info_get(&info, index);
  if (status != WC_OK) throw Failure(status, "no CUDA device " + std::to_string(index));
  return nb::make_tuple(index, info.name, nb::make_tuple(info.compute_major, info.compute_minor),
                        info.multiprocessors, info.global_memory_bytes, info.pci_bus_id);
}

}  // namespace
}  // namespace wcpy

NB_MODULE(_native, m) {
  using namespace wcpy;
  m.doc() = "The warpcrypt C library, for the warpcrypt package; use the package, not this module.";
  bind_errors(m);
  bind_aead(m);
  bind_files(m);
  bind_age(m);
  bind_plan(m);

  m.attr("ENCRYPT") = static_cast<int>(WC_ENCRYPT);
  m.attr("DECRYPT") = static_cast<int>(WC_DECRYPT);
  m.def("version", &wc_version);
  m.def("backend_values", &backend_values, "Backend name -> wc_backend value.");
  m.def("hkdf", &hkdf, "digest"_a, "secret"_a, "salt"_a, "info"_a, "length"_a,
        "HKDF (RFC 5869) of `secret` under `salt` and `info`, `length` bytes, with an OpenSSL digest such as "
        "\"sha256\". An empty salt stands for a digest's length of zero bytes.");
  m.def("hmac", &hmac, "digest"_a, "key"_a, "message"_a, "length"_a,
        "HMAC of `message` under `key` with an OpenSSL digest such as \"sha256\"; `length` is the digest's.");
  m.def("random_bytes", &random_bytes, "length"_a, "`length` bytes from the library's random source.");
  m.def("ed25519_public_key", &ed25519_public_key, "seed"_a, "The Ed25519 public key of a 32-byte seed.");
  m.def("ed25519_sign", &ed25519_sign, "seed"_a, "message"_a, "An Ed25519 signature (64 bytes).");
  m.def("ed25519_verify", &ed25519_verify, "public_key"_a, "signature"_a, "message"_a,
        "Whether `signature` is a valid Ed25519 signature of `message`.");
  m.def("default_threads", &wc_default_threads, "What threads=0 means: the usable CPUs (affinity, cgroup quota).");
  m.def("built_with_cuda", [] { return wc_built_with_cuda() != 0; });
  m.def("device_count", [] {
    int count = 0;
    const wc_status status = wc_device_count(&count);
    if (status != WC_OK) fail(status);
    return count;
  });
  m.def("device_info", &device_info, "index"_a,
        "(index, name, (major, minor), multiprocessors, memory bytes, PCI bus id) of a CUDA device.");

  nb::class_<CipherInfo>(m, "CipherInfo", "A cipher of the library's table and its sizes in bytes.")
      .def_prop_ro("name", [](const CipherInfo &c) { return wc_cipher_name(c.cipher); })
      .def_prop_ro("key_size", [](const CipherInfo &c) { return wc_cipher_key_len(c.cipher); })
      .def_prop_ro("iv_size", [](const CipherInfo &c) { return wc_cipher_iv_len(c.cipher); },
                   "0 for ECB, which takes no IV.")
      .def_prop_ro("block_size", [](const CipherInfo &c) { return wc_cipher_block_len(c.cipher); },
                   "16 for ECB and CBC, 1 for the stream-like modes and stream ciphers.")
      .def_prop_ro("padded", [](const CipherInfo &c) { return wc_cipher_is_padded(c.cipher) != 0; },
                   "Whether the mode pads with PKCS#7 unless padding is off (ECB and CBC).")
      .def("__repr__", [](const CipherInfo &c) { return std::string("<CipherInfo ") + wc_cipher_name(c.cipher) + ">"; });
  m.def("cipher_info", &lookup, "name"_a, "The cipher by its `openssl enc` name, case-insensitively.");
  m.def("cipher_infos", [] {
    std::vector<CipherInfo> all;
    for (size_t i = 0; i < wc_cipher_count(); ++i) all.push_back({wc_cipher_at(i)});
    return all;
  });

  m.def("crypt", &crypt_bytes, "direction"_a, "info"_a, "key"_a, "iv"_a.none(), "data"_a, "padding"_a, "backend"_a,
        "threads"_a, "One-shot work on host memory, returning bytes.");
  m.def("crypt_into", &crypt_into, "direction"_a, "info"_a, "key"_a, "iv"_a.none(), "data"_a, "out"_a, "padding"_a,
        "backend"_a, "threads"_a, "stream"_a.none(), "stream_offset"_a, "resolver"_a,
        "One-shot work into `out`, in host or GPU memory, returning the bytes written.");

  nb::class_<CipherContext>(m, "CipherContext",
                            "Encrypts or decrypts a message piece by piece (Cipher.encryptor(), Cipher.decryptor()).")
      .def(nb::init<const CipherInfo &, int, nb::handle, nb::handle, bool, int, unsigned>(), "info"_a,
           "direction"_a, "key"_a, "iv"_a.none(), "padding"_a, "backend"_a, "threads"_a)
      .def("update", &CipherContext::update, "data"_a,
           "Processes `data` and returns the output so far. Block modes may hold back up to one block.")
      .def("update_into", &CipherContext::update_into, "data"_a, "buf"_a,
           "As update(), writing into the writable buffer `buf`; returns the bytes written. `buf` must hold "
           "len(data) plus what earlier calls held back: up to 16 bytes in ECB, CBC and CFB decryption.")
      .def("finalize", &CipherContext::finalize,
           "Returns the last block (padding on encryption, held bytes on decryption) and wipes the key.")
      .def_prop_ro("backend", &CipherContext::backend, "The backend running this context: 'cpu' or 'gpu'.");

  bind_baselines(m);
}
