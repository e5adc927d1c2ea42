// warpcrypt.aead's native half. Each object holds one wc_aead_key, made
// with the caller's backend: host memory goes to its host calls
// (wc_aead_key_seal, wc_aead_key_open), GPU arrays to its device calls
// (wc_aead_key_*_device_async), queued on the caller's stream as crypt_into
// queues the ciphers. Where each runs is the key's rule, the library's
// (warpcrypt/aead.h): auto and hybrid keep host memory on the CPU and
// run GPU arrays where they live; the cpu backend refuses GPU arrays. A tag is either attached after the
// ciphertext, as pyca/cryptography lays it out, or detached in an array of
// its own. encrypt() and decrypt() on bytes, bytearray and memoryview take a
// short path past the general views; the library checks their arguments,
// and only a call it refuses is looked at again to say why.
#include "aead.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
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

enum class Way { seal, open };

// The nonce of each chunk of crypt_chunks, as the strided batch takes it.
constexpr size_t kChunkNonceLen = 12;

// An entry of the library's static AEAD table.
std::string nonce_rule(const wc_aead *aead) {
  const std::string recommended = std::to_string(wc_aead_nonce_len(aead));
  // GCM hashes a nonce of any other length into its first counter block;
  // ChaCha20-Poly1305 has no such step.
  if (wc_aead_nonce_len_valid(aead, 1) != 0) {
    return "a nonce of 1 to " + std::to_string(WC_AEAD_MAX_NONCE_LEN) + " bytes (" + recommended + " recommended)";
  }
  return "a " + recommended + "-byte nonce";
}

bool given(nb::handle object) { return object.is_valid() && !object.is_none(); }

// "data" for a single message, "messages[3]" for one of a batch.
std::string role(const char *single, const char *batch, std::optional<size_t> index) {
  return index ? std::string(batch) + "[" + std::to_string(*index) + "]" : std::string(single);
}

// The _into calls take None for buf only to say so in these words.
void require_buf(nb::handle buf) {
  if (!given(buf)) throw nb::type_error("buf must be a writable buffer or array, not None");
}

wc_cuda_stream as_stream(uintptr_t handle) { return reinterpret_cast<wc_cuda_stream>(handle); }

// pyca/cryptography's encrypt() refuses more (its int32 lengths), and code
// may rely on its OverflowError.
constexpr size_t kPycaMaxLen = 0x7fffffff;

void refuse_over_pyca_limit(size_t data_len, size_t aad_len) {
  if (data_len > kPycaMaxLen || aad_len > kPycaMaxLen) {
    PyErr_SetString(PyExc_OverflowError, "Data or associated data too long. Max 2**31 - 1 bytes");
    throw nb::python_error();
  }
}

// A message from this many bytes on runs with the GIL released, so that
// other threads run meanwhile. Releasing and retaking it costs some 30 to
// 40 ns on the 2-core machine: 5 % of a 1 KiB call, under 2 % from 8 KiB
// on (docs/lab-notes/performance-history.md). pyca/cryptography keeps it for small messages.
constexpr size_t kReleaseGilFrom = 8 * 1024;

// A bytes, bytearray or C-contiguous memoryview, read in place: the common
// arguments of encrypt() and decrypt(), which skip the general views
// (arrays, DLPack, GPU memory). A bytearray stays exported, so that it cannot
// be resized, while this is alive.
class PlainBytes {
 public:
  PlainBytes() = default;
  ~PlainBytes() {
    if (exported_) PyBuffer_Release(&buffer_);
  }
  PlainBytes(const PlainBytes &) = delete;
  PlainBytes &operator=(const PlainBytes &) = delete;

  // False for anything else, which the general path takes.
  bool read(nb::handle object) {
    PyObject *o = object.ptr();
    if (PyBytes_CheckExact(o)) {
      char *data = nullptr;
      Py_ssize_t size = 0;
      PyBytes_AsStringAndSize(o, &data, &size);  // cannot fail on bytes; the stable ABI's call
      data_ = reinterpret_cast<const uint8_t *>(data);
      size_ = static_cast<size_t>(size);
      return true;
    }
    if (!PyByteArray_CheckExact(o) && !PyMemoryView_Check(o)) return false;
    if (PyObject_GetBuffer(o, &buffer_, PyBUF_SIMPLE) != 0) {
      PyErr_Clear();  // not contiguous, or released: the general path says so
      return false;
    }
    exported_ = true;
    data_ = static_cast<const uint8_t *>(buffer_.buf);
    size_ = static_cast<size_t>(buffer_.len);
    return true;
  }

  const uint8_t *data() const { return data_; }
  size_t size() const { return size_; }

 private:
  Py_buffer buffer_{};
  bool exported_ = false;
  const uint8_t *data_ = nullptr;
  size_t size_ = 0;
};

// What one call works on: the caller's objects, exported for the call's
// length.
class Call {
 public:
  Call(std::optional<uintptr_t> stream, nb::handle resolver) : streams_{stream, resolver} {}
  Call(const Call &) = delete;
  Call &operator=(const Call &) = delete;

  // A nonce or associated data: host memory, which the library has read by
  // the time it returns. `optional` lets None stand for empty.
  std::pair<const uint8_t *, size_t> host(nb::handle object, const std::string &role, bool optional) {
    if (optional && object.is_none()) return {nullptr, 0};
    const View &view = host_.emplace_back(View::host(object, Access::read, role.c_str()));
    return {view.data(), view.size()};
  }

  // A message, output, tag or verdict array: host or GPU memory.
  const View &array(nb::handle object, Access access, std::string role) {
    View view = View::any(object, access, role.c_str(), streams_);
    return arrays_.emplace_back(Array{std::move(view), std::move(role)}).view;
  }

  struct Placement {
    bool on_device = false;
    int device = -1;  // -1 where every GPU array is empty
  };

  // Where the work runs: the library takes every buffer of a call in host
  // memory or every one on one GPU.
  Placement settle() const {
    Placement where;
    const Array *on_a_device = nullptr;
    for (const Array &entry : arrays_) {
      const Array &first = arrays_.front();
      if (entry.view.on_device() != first.view.on_device()) {
        const Array &gpu = entry.view.on_device() ? entry : first;
        const Array &host = entry.view.on_device() ? first : entry;
        throw Failure(WC_ERR_INVALID_ARGUMENT, gpu.role + " is in GPU memory and " + host.role +
                                                   " in host memory: a call's buffers must all be in host "
                                                   "memory or all on one GPU");
      }
      if (entry.view.device() < 0) continue;
      if (on_a_device != nullptr && entry.view.device() != on_a_device->view.device()) {
        throw Failure(WC_ERR_INVALID_ARGUMENT, on_a_device->role + " is on GPU " +
                                                   std::to_string(on_a_device->view.device()) + " and " +
                                                   entry.role + " on GPU " + std::to_string(entry.view.device()) +
                                                   ": a call's buffers must all be on one device");
      }
      on_a_device = &entry;
    }
    where.on_device = !arrays_.empty() && arrays_.front().view.on_device();
    where.device = on_a_device != nullptr ? on_a_device->view.device() : -1;
    return where;
  }

  // The call's stream, settled by its first GPU array.
  uintptr_t stream() const { return streams_.handle.value_or(0); }

  // Orders the work after what the arrays' frameworks queued on other
  // streams; once per such stream, however many arrays share it.
  void wait_for_producers(int device, uintptr_t stream) const {
    std::vector<uintptr_t> awaited;
    for (const Array &entry : arrays_) {
      const std::optional<uintptr_t> ready = entry.view.ready_on();
      if (!ready || std::find(awaited.begin(), awaited.end(), *ready) != awaited.end()) continue;
      order_after(device, stream, *ready);
      awaited.push_back(*ready);
    }
  }

 private:
  struct Array {
    View view;
    std::string role;
  };

  StreamChoice streams_;
  // Deques: views stay where they are as more are added.
  std::deque<View> host_;
  std::deque<Array> arrays_;
};

// One message as the caller passed it. Without buf the result is a new
// bytes object; without tag the tag is attached after the ciphertext.
struct MessageArgs {
  nb::handle nonce, data, aad, buf, tag;
  bool pyca_limits = false;  // encrypt(): pyca/cryptography's OverflowError
};

// One message, ready for the library.
struct Message {
  wc_aead_message c{};
  // Opening an attached tag from fewer bytes than the tag has: nothing can
  // authenticate that, so it fails without a call.
  bool too_short = false;
  bool tag_detached = false;  // in an array of its own, not after the ciphertext
  nb::object result;  // the bytes result, where the call makes one
};

// Calls `open(first, count)` for each run of messages between those too
// short to open, so that every verdict lands at its message's index. Stops
// at the first status other than WC_OK or WC_ERR_AUTH, and returns it, else
// WC_ERR_AUTH if any run had a failed tag.
template <class Open>
wc_status for_each_run(const std::vector<Message> &batch, Open &&open) {
  wc_status combined = WC_OK;
  size_t first = 0;
  for (size_t end = 0; end <= batch.size(); ++end) {
    if (end < batch.size() && !batch[end].too_short) continue;
    if (end > first) {
      const wc_status status = open(first, end - first);
      if (status == WC_ERR_AUTH) {
        combined = WC_ERR_AUTH;
      } else if (status != WC_OK) {
        return status;
      }
    }
    first = end + 1;
  }
  return combined;
}

std::vector<wc_aead_message> descriptors(const Message *messages, size_t count) {
  std::vector<wc_aead_message> all;
  all.reserve(count);
  for (size_t i = 0; i < count; ++i) all.push_back(messages[i].c);
  return all;
}

// The bytes results of a batch; None where the caller gave bufs.
nb::object batch_results(const std::vector<Message> &batch, bool into_bufs) {
  if (into_bufs) return nb::none();
  nb::list results;
  for (const Message &message : batch) results.append(message.result);
  return results;
}

// A key bound to one AEAD and tag length, with the options its calls run
// under. Its methods only read it, so threads may share it. The key is wiped
// when the object is collected.
class Aead {
 public:
  Aead(const std::string &aead_name, nb::handle key, size_t tag_len, int backend, unsigned threads)
      : aead_(wc_aead_by_name(aead_name.c_str())), tag_len_(tag_len) {
    if (aead_ == nullptr) throw Failure(WC_ERR_UNKNOWN_CIPHER, "no AEAD is named " + aead_name);
    if (tag_len < WC_AEAD_MIN_TAG_LEN || tag_len > WC_AEAD_MAX_TAG_LEN) {
      throw Failure(WC_ERR_INVALID_ARGUMENT, "tags are " + std::to_string(WC_AEAD_MIN_TAG_LEN) + " to " +
                                                 std::to_string(WC_AEAD_MAX_TAG_LEN) + " bytes, not " +
                                                 std::to_string(tag_len));
    }
    const View key_view = View::host(key, Access::read, "key");
    if (key_view.size() != wc_aead_key_len(aead_)) {
      throw Failure(WC_ERR_KEY_LEN, name() + " takes a " + std::to_string(wc_aead_key_len(aead_)) +
                                        "-byte key, not " + std::to_string(key_view.size()) + " bytes");
    }
    const wc_options options = make_options(backend, threads);
    wc_aead_key *made = nullptr;
    // A key the backend cannot make now (gpu without a device) is not an
    // error until a call needs it, as before keys: the call reports it.
    key_status_ = wc_aead_key_new(&made, &options, aead_, key_view.data(), key_view.size());
    key_.reset(made);
  }
  Aead(const Aead &) = delete;
  Aead &operator=(const Aead &) = delete;

  size_t tag_len() const { return tag_len_; }

  nb::bytes seal(nb::handle nonce, nb::handle data, nb::handle aad, nb::handle resolver) const {
    const MessageArgs args{nonce, data, aad, {}, {}, true};
    PlainBytes n, d, a;
    if (n.read(nonce) && d.read(data) && (aad.is_none() || a.read(aad))) {
      refuse_over_pyca_limit(d.size(), a.size());
      nb::bytes result = uninitialized_bytes(d.size() + tag_len_);
      uint8_t *out = bytes_data(result);
      const wc_aead_message m{out, d.data(), d.size(), n.data(), n.size(), a.data(), a.size(), out + d.size()};
      const wc_status status = on_host(Way::seal, m);
      if (status != WC_OK) explain(Way::seal, args, resolver, status);
      return result;
    }
    Call call(std::nullopt, resolver);
    const Message message = prepare(call, Way::seal, args, std::nullopt);
    seal_one(call, message);
    return nb::borrow<nb::bytes>(message.result);
  }

  nb::bytes open(nb::handle nonce, nb::handle data, nb::handle aad, nb::handle resolver) const {
    const MessageArgs args{nonce, data, aad, {}, {}};
    PlainBytes n, d, a;
    if (n.read(nonce) && d.read(data) && (aad.is_none() || a.read(aad))) {
      // Shorter than its tag: prepare() finds it, after the nonce's checks.
      if (d.size() < tag_len_) explain(Way::open, args, resolver, WC_ERR_AUTH);
      const size_t len = d.size() - tag_len_;
      nb::bytes result = uninitialized_bytes(len);
      const wc_aead_message m{bytes_data(result), d.data(), len, n.data(), n.size(), a.data(), a.size(),
                              const_cast<uint8_t *>(d.data() + len)};
      const wc_status status = on_host(Way::open, m);
      if (status != WC_OK) explain(Way::open, args, resolver, status);
      return result;
    }
    Call call(std::nullopt, resolver);
    const Message message = prepare(call, Way::open, args, std::nullopt);
    open_one(call, message, nullptr);
    return nb::borrow<nb::bytes>(message.result);
  }

  // Returns the bytes written to buf: the ciphertext, and an attached tag.
  size_t seal_into(nb::handle nonce, nb::handle data, nb::handle aad, nb::handle buf, nb::handle tag,
                   std::optional<uintptr_t> stream, nb::handle resolver) const {
    require_buf(buf);
    Call call(stream, resolver);
    const Message message = prepare(call, Way::seal, {nonce, data, aad, buf, tag}, std::nullopt);
    seal_one(call, message);
    return message.c.len + (given(tag) ? 0 : tag_len_);
  }

  // Returns the plaintext bytes written to buf.
  size_t open_into(nb::handle nonce, nb::handle data, nb::handle aad, nb::handle buf, nb::handle tag,
                   nb::handle verified, std::optional<uintptr_t> stream, nb::handle resolver) const {
    require_buf(buf);
    Call call(stream, resolver);
    const Message message = prepare(call, Way::open, {nonce, data, aad, buf, tag}, std::nullopt);
    open_one(call, message, verdict_array(call, verified, 1));
    return message.c.len;
  }

  // A list of bytes without bufs, else None.
  nb::object seal_batch(const nb::list &nonces, const nb::list &messages, const std::optional<nb::list> &aads,
                        const std::optional<nb::list> &bufs, const std::optional<nb::list> &tags,
                        std::optional<uintptr_t> stream, nb::handle resolver) const {
    Call call(stream, resolver);
    const std::vector<Message> batch = prepare_batch(call, Way::seal, nonces, messages, aads, bufs, tags);
    const std::vector<wc_aead_message> all = descriptors(batch.data(), batch.size());
    const Call::Placement where = call.settle();
    wc_status status;
    if (!where.on_device) {
      nb::gil_scoped_release unlocked;
      status = key_ ? wc_aead_key_seal(key_.get(), all.data(), all.size(), tag_len_) : key_status_;
    } else {
      const uintptr_t handle = call.stream();
      call.wait_for_producers(where.device, handle);
      nb::gil_scoped_release unlocked;
      status = on_device(Way::seal, all.data(), all.size(), nullptr, handle);
    }
    if (status != WC_OK) fail_call(status, Way::seal, batch.data(), batch.size(), true, nullptr);
    return batch_results(batch, bufs.has_value());
  }

  // (results, failed): the results as seal_batch's; `failed`, the indices of
  // the messages that failed authentication, whose outputs are zeroed. With
  // `verified` the verdicts arrive there instead, and `failed` is empty.
  nb::tuple open_batch(const nb::list &nonces, const nb::list &messages, const std::optional<nb::list> &aads,
                       const std::optional<nb::list> &bufs, const std::optional<nb::list> &tags, nb::handle verified,
                       std::optional<uintptr_t> stream, nb::handle resolver) const {
    Call call(stream, resolver);
    const std::vector<Message> batch = prepare_batch(call, Way::open, nonces, messages, aads, bufs, tags);
    const View *verdicts = verdict_array(call, verified, batch.size());
    const std::vector<wc_aead_message> all = descriptors(batch.data(), batch.size());
    const Call::Placement where = call.settle();
    // A message too short for its tag splits the batch into runs, opened by
    // one library call each, and each call sees only its own run's buffers.
    if (std::any_of(batch.begin(), batch.end(), [](const Message &message) { return message.too_short; })) {
      refuse_overlaps(Way::open, batch.data(), batch.size(), true,
                      verdicts != nullptr ? as_verdicts(*verdicts) : nullptr);
    }
    const std::vector<size_t> failed =
        where.on_device ? open_batch_on_device(call, where, batch, all, verdicts) : open_batch_on_host(batch, all);
    return nb::make_tuple(batch_results(batch, bufs.has_value()), failed);
  }

  // `data` cut into chunks of `chunk_size` bytes (the last one shorter where
  // the length is not a multiple), each a message of its own with the
  // 12-byte nonce nonces[12 i:12 i + 12] and the tag tags[t i:t i + t],
  // worked in place or into buf. On a GPU the full chunks go as one strided
  // batch and a short last one as a message of its own, so the host does
  // no work per chunk. Returns the indices of the chunks that failed
  // authentication; none with `verified`, where the verdicts arrive.
  std::vector<size_t> crypt_chunks(bool seal, nb::handle nonces, nb::handle data, size_t chunk_size, nb::handle tags,
                                   nb::handle buf, nb::handle verified, std::optional<uintptr_t> stream,
                                   nb::handle resolver) const {
    if (chunk_size == 0) throw Failure(WC_ERR_INVALID_ARGUMENT, "chunk_size must be positive");
    if (wc_aead_nonce_len_valid(aead_, kChunkNonceLen) == 0) {
      throw Failure(WC_ERR_IV_LEN, name() + " does not take the 12-byte nonces of chunks");
    }
    Call call(stream, resolver);
    const View &out = call.array(given(buf) ? buf : data, Access::write, given(buf) ? "buf" : "data");
    const View &in = !given(buf) || data.is(buf) ? out : call.array(data, Access::read, "data");
    const size_t len = in.size();
    const size_t count = len / chunk_size + (len % chunk_size != 0);
    if (out.size() < len) {
      throw Failure(WC_ERR_OUTPUT_TOO_SMALL,
                    "buf holds " + std::to_string(out.size()) + " bytes; the result needs " + std::to_string(len));
    }
    const auto sized = [&](nb::handle object, Access access, const char *role, size_t each) -> const View & {
      const View &view = call.array(object, access, role);
      if (view.size() != count * each) {
        throw Failure(WC_ERR_INVALID_ARGUMENT, std::string(role) + " holds " + std::to_string(view.size()) +
                                                   " bytes; " + std::to_string(count) + " chunks need " +
                                                   std::to_string(count * each) + " (" + std::to_string(each) +
                                                   " each)");
      }
      return view;
    };
    const View &nonce_bytes = sized(nonces, Access::read, "nonces", kChunkNonceLen);
    const View &tag_bytes = sized(tags, seal ? Access::write : Access::read, "tags", tag_len_);
    const View *verdicts = verdict_array(call, verified, count);
    const Call::Placement where = call.settle();
    const auto message = [&](size_t i, size_t span) {
      const size_t at = i * chunk_size;
      return wc_aead_message{out.data() + at,  in.data() + at, std::min(span, len - at),
                             nonce_bytes.data() + kChunkNonceLen * i, kChunkNonceLen, nullptr, 0,
                             tag_bytes.data() + tag_len_ * i};
    };
    if (count == 0) return {};
    if (!where.on_device) {
      std::vector<wc_aead_message> all(count);
      for (size_t i = 0; i < count; ++i) all[i] = message(i, chunk_size);
      std::vector<wc_status> results(count, WC_OK);
      wc_status status;
      {
        nb::gil_scoped_release unlocked;
        status = !key_ ? key_status_
                 : seal     ? wc_aead_key_seal(key_.get(), all.data(), count, tag_len_)
                            : wc_aead_key_open(key_.get(), results.data(), all.data(), count, tag_len_);
      }
      if (status != WC_OK && status != WC_ERR_AUTH) fail(status);
      std::vector<size_t> failed;
      for (size_t i = 0; i < count; ++i) {
        if (results[i] != WC_OK) failed.push_back(i);
      }
      return failed;
    }
    const uintptr_t handle = call.stream();
    call.wait_for_producers(where.device, handle);
    std::optional<DeviceInts> own;
    int32_t *verdict = seal ? nullptr : verdicts_at(verdicts, own, where.device, count, handle);
    std::vector<int32_t> known;
    wc_status status;
    {
      nb::gil_scoped_release unlocked;
      const wc_aead_key *key = nullptr;
      status = device_key(&key);
      // The full chunks, then a short last one as a batch of its own: its
      // nonce is device memory too, which a message list cannot take.
      const size_t full = len / chunk_size;
      for (const auto &[first, span, number] : {std::tuple{size_t{0}, chunk_size, full},
                                                std::tuple{full, len % chunk_size, count - full}}) {
        if (status != WC_OK || number == 0) continue;
        const size_t at = first * chunk_size;
        const wc_aead_strided batch{out.data() + at, in.data() + at, span, span,
                                    nonce_bytes.data() + kChunkNonceLen * first, kChunkNonceLen,
                                    tag_bytes.data() + tag_len_ * first, tag_len_, number};
        status = seal ? wc_aead_key_seal_strided_device_async(key, &batch, tag_len_, as_stream(handle))
                      : wc_aead_key_open_strided_device_async(key, verdict + first, &batch, tag_len_,
                                                              as_stream(handle));
      }
      if (status == WC_OK && own) known = own->read();
    }
    if (status != WC_OK) fail(status);
    std::vector<size_t> failed;
    for (size_t i = 0; i < known.size(); ++i) {
      if (known[i] != 1) failed.push_back(i);
    }
    return failed;
  }

 private:
  std::string name() const { return wc_aead_name(aead_); }

  Message prepare(Call &call, Way way, const MessageArgs &args, std::optional<size_t> index) const {
    Message message;
    const std::string nonce_role = role("nonce", "nonces", index);
    const auto [nonce, nonce_len] = call.host(args.nonce, nonce_role, false);
    if (wc_aead_nonce_len_valid(aead_, nonce_len) == 0) {
      throw Failure(WC_ERR_IV_LEN, name() + " takes " + nonce_rule(aead_) + ", not " + std::to_string(nonce_len) +
                                       " bytes" + (index ? " (" + nonce_role + ")" : ""));
    }
    const auto [aad, aad_len] = call.host(args.aad, role("associated_data", "associated_data", index), true);

    const std::string in_role = role("data", "messages", index);
    const std::string out_role = role("buf", "bufs", index);
    const std::string tag_role = role("tag", "tags", index);
    const View *out = given(args.buf) ? &call.array(args.buf, Access::write, out_role) : nullptr;
    // In place, one view serves both roles: one export, one stream handshake.
    const View &in = out != nullptr && args.data.is(args.buf) ? *out : call.array(args.data, Access::read, in_role);
    if (out == nullptr && in.on_device()) {
      throw Failure(WC_ERR_INVALID_ARGUMENT,
                    in_role + " is in GPU memory, and results as bytes are host memory: " +
                        (index ? "pass bufs= to work on GPU arrays"
                               : "use encrypt_into() or decrypt_into() to work on GPU arrays"));
    }
    const View *tag = nullptr;
    if (given(args.tag)) {
      tag = &call.array(args.tag, way == Way::seal ? Access::write : Access::read, tag_role);
      if (tag->size() != tag_len_) {
        throw Failure(WC_ERR_INVALID_ARGUMENT, tag_role + " holds " + std::to_string(tag->size()) +
                                                   " bytes; this AEAD's tags are " + std::to_string(tag_len_) +
                                                   " bytes (tag_length)");
      }
    }

    size_t len = in.size();
    if (way == Way::open && tag == nullptr) {
      if (len < tag_len_) {
        message.too_short = true;
        message.result = uninitialized_bytes(0);
        return message;
      }
      len -= tag_len_;
    }
    if (args.pyca_limits) refuse_over_pyca_limit(len, aad_len);
    if (len > wc_aead_max_message_len(aead_)) {
      throw Failure(WC_ERR_RANGE, in_role + " holds " + std::to_string(len) + " bytes; " + name() +
                                      " seals at most " + std::to_string(wc_aead_max_message_len(aead_)) +
                                      " under one nonce");
    }
    const bool attached_output_tag = way == Way::seal && tag == nullptr;
    const size_t room = attached_output_tag ? len + tag_len_ : len;
    uint8_t *out_data = nullptr;
    if (out != nullptr) {
      if (out->size() < room) {
        // In place, data and buf are one array, which has no room for the tag.
        const std::string hint = out == &in ? std::string(" (in place, pass the tag an array of its own: ") +
                                                  (index ? "tags=)" : "tag=)")
                                            : "";
        // One message (encrypt_into, decrypt_into) in pyca/cryptography's
        // words, which code may match; a batch names the message.
        throw Failure(WC_ERR_OUTPUT_TOO_SMALL,
                      index ? out_role + " holds " + std::to_string(out->size()) + " bytes; the result needs " +
                                  std::to_string(room) + hint
                            : "buffer must be " + std::to_string(room) + " bytes" + hint);
      }
      out_data = out->data();
    } else {
      message.result = uninitialized_bytes(room);
      out_data = bytes_data(nb::borrow<nb::bytes>(message.result));
    }
    uint8_t *tag_data = tag != nullptr ? tag->data() : way == Way::seal ? out_data + len : in.data() + len;
    message.c = {out_data, in.data(), len, nonce, nonce_len, aad, aad_len, tag_data};
    message.tag_detached = tag != nullptr;
    return message;
  }

  std::vector<Message> prepare_batch(Call &call, Way way, const nb::list &nonces, const nb::list &messages,
                                     const std::optional<nb::list> &aads, const std::optional<nb::list> &bufs,
                                     const std::optional<nb::list> &tags) const {
    const size_t count = nb::len(messages);
    const auto check_count = [count](const nb::list &list, const char *what) {
      if (nb::len(list) != count) {
        throw Failure(WC_ERR_INVALID_ARGUMENT, "len(" + std::string(what) + ") is " + std::to_string(nb::len(list)) +
                                                   " and len(messages) " + std::to_string(count) +
                                                   ": one for each message");
      }
    };
    check_count(nonces, "nonces");
    if (aads) check_count(*aads, "associated_data");
    if (bufs) check_count(*bufs, "bufs");
    if (tags) check_count(*tags, "tags");
    if (tags && !bufs) {
      throw Failure(WC_ERR_INVALID_ARGUMENT, "tags= needs bufs=: results as bytes carry their tags attached");
    }
    // Borrowed items: the lists, which the caller cannot reach during the
    // call, hold them.
    const auto item = [](const std::optional<nb::list> &list, size_t i) {
      return list ? nb::handle(PyList_GetItem(list->ptr(), i)) : nb::handle(Py_None);
    };
    std::vector<Message> batch;
    batch.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      const MessageArgs args{PyList_GetItem(nonces.ptr(), i), PyList_GetItem(messages.ptr(), i), item(aads, i),
                             item(bufs, i), item(tags, i)};
      batch.push_back(prepare(call, way, args, i));
    }
    return batch;
  }

  // The caller's array for the verdicts of an asynchronous open on the GPU:
  // an int32 per message, 1 where it is authentic, 0 where not.
  const View *verdict_array(Call &call, nb::handle verified, size_t count) const {
    if (!given(verified)) return nullptr;
    const View &view = call.array(verified, Access::write, "verified");
    if (!view.on_device()) {
      throw Failure(WC_ERR_INVALID_ARGUMENT, "verified is in host memory: it is for GPU work, whose verdicts "
                                             "arrive as the stream runs it; host memory is opened at once, and "
                                             "a failure raises InvalidTag");
    }
    const size_t needed = sizeof(int32_t) * count;
    if (view.size() < needed) {
      throw Failure(WC_ERR_OUTPUT_TOO_SMALL, "verified holds " + std::to_string(view.size()) + " bytes; " +
                                                 std::to_string(count) + " int32 verdicts need " +
                                                 std::to_string(needed));
    }
    if (reinterpret_cast<uintptr_t>(view.data()) % alignof(int32_t) != 0) {
      throw Failure(WC_ERR_INVALID_ARGUMENT, "verified is not 4-byte aligned: it receives int32 verdicts");
    }
    return &view;
  }

  // Where the GPU writes the verdicts: the caller's array, else device
  // memory of the call's own, which `own` holds and reads back.
  static int32_t *verdicts_at(const View *verdicts, std::optional<DeviceInts> &own, int device, size_t count,
                              uintptr_t stream) {
    if (verdicts != nullptr) return as_verdicts(*verdicts);
    return own.emplace(device, count, stream).data();
  }

  static int32_t *as_verdicts(const View &verdicts) { return reinterpret_cast<int32_t *>(verdicts.data()); }

  // The caller's name for a buffer of `message`: "buf" for a message alone,
  // "bufs[3]" for one of a batch.
  static std::string buffer_role(wc_aead_buffer buffer, Way way, const Message &message,
                                 std::optional<size_t> index) {
    switch (buffer) {
      case WC_AEAD_BUFFER_IN: return role("data", "messages", index);
      case WC_AEAD_BUFFER_OUT: return role("buf", "bufs", index);
      case WC_AEAD_BUFFER_TAG:
        if (message.tag_detached) return role("tag", "tags", index);
        // An attached tag follows the ciphertext: in buf when sealing, in
        // data when opening.
        return way == Way::seal ? role("buf", "bufs", index) : role("data", "messages", index);
      case WC_AEAD_BUFFER_NONCE: return role("nonce", "nonces", index);
      case WC_AEAD_BUFFER_AAD: return role("associated_data", "associated_data", index);
      case WC_AEAD_BUFFER_VERIFIED: return "verified";
    }
    return "a buffer";
  }

  // Raises InvalidArgument naming two of the call's buffers that overlap, if
  // any do: the library refuses such a call without saying which.
  void refuse_overlaps(Way way, const Message *messages, size_t count, bool batched, const int32_t *verdicts) const {
    const std::vector<wc_aead_message> all = descriptors(messages, count);
    wc_aead_overlap found{};
    if (wc_aead_find_overlap(&found, all.data(), all.size(), tag_len_, way == Way::seal ? WC_ENCRYPT : WC_DECRYPT,
                             verdicts) == 0) {
      return;
    }
    const auto named = [&](size_t index, wc_aead_buffer buffer) {
      return buffer_role(buffer, way, messages[index], batched ? std::optional<size_t>(index) : std::nullopt);
    };
    throw Failure(WC_ERR_INVALID_ARGUMENT, named(found.written_message, found.written) + " and " +
                                               named(found.other_message, found.other) +
                                               " overlap: each output needs memory of its own, except that a "
                                               "message may be worked on in place (the same memory as input "
                                               "and output)");
  }

  // Raises for a failed call: for an invalid argument caused by buffers that
  // overlap, which ones; else the library's sentence for the status.
  [[noreturn]] void fail_call(wc_status status, Way way, const Message *messages, size_t count, bool batched,
                              const int32_t *verdicts) const {
    if (status == WC_ERR_INVALID_ARGUMENT) refuse_overlaps(way, messages, count, batched, verdicts);
    fail(status);
  }

  // GPU arrays, on the device key, queued on `stream`; an opening's verdicts
  // land in `verified`. Call it without the GIL.
  wc_status on_device(Way way, const wc_aead_message *messages, size_t count, int32_t *verified,
                      uintptr_t stream) const {
    const wc_aead_key *key = nullptr;
    const wc_status status = device_key(&key);
    if (status != WC_OK) return status;
    return way == Way::seal ? wc_aead_key_seal_device_async(key, messages, count, tag_len_, as_stream(stream))
                            : wc_aead_key_open_device_async(key, verified, messages, count, tag_len_,
                                                            as_stream(stream));
  }

  // The key, for GPU arrays: its device calls make the GPU's AEAD at the
  // first one (deriving GCM's constants once), or refuse as the library
  // does (the cpu backend; no device).
  wc_status device_key(const wc_aead_key **out) const {
    *out = key_.get();
    return key_ ? WC_OK : key_status_;
  }

  // One message in host memory, on the key; the GIL is kept for a short
  // one. WC_ERR_AUTH for a failed tag.
  wc_status on_host(Way way, const wc_aead_message &m) const {
    if (!key_) return key_status_;
    const auto run = [&] {
      wc_status result = WC_OK;
      return way == Way::seal ? wc_aead_key_seal(key_.get(), &m, 1, tag_len_)
                              : wc_aead_key_open(key_.get(), &result, &m, 1, tag_len_);
    };
    if (m.len < kReleaseGilFrom) return run();
    nb::gil_scoped_release unlocked;
    return run();
  }

  // Raises for a call of the short path that the library refused: the
  // message is looked at as the general path does, to name what was wrong.
  [[noreturn]] void explain(Way way, const MessageArgs &args, nb::handle resolver, wc_status status) const {
    Call call(std::nullopt, resolver);
    const Message message = prepare(call, way, args, std::nullopt);
    if (message.too_short) refuse_too_short();
    fail_call(status, way, &message, 1, false, nullptr);
  }

  [[noreturn]] void refuse_too_short() const {
    throw Failure(WC_ERR_AUTH,
                  "authentication failed: the data is shorter than its " + std::to_string(tag_len_) + "-byte tag");
  }

  void seal_one(Call &call, const Message &message) const {
    const Call::Placement where = call.settle();
    const wc_aead_message &m = message.c;
    wc_status status;
    if (!where.on_device) {
      status = on_host(Way::seal, m);
    } else {
      const uintptr_t handle = call.stream();
      call.wait_for_producers(where.device, handle);
      nb::gil_scoped_release unlocked;
      status = on_device(Way::seal, &m, 1, nullptr, handle);
    }
    if (status != WC_OK) fail_call(status, Way::seal, &message, 1, false, nullptr);
  }

  // Raises InvalidTag for a failed tag. On the GPU without `verdicts`, that
  // means waiting for the stream; with them, the call returns once queued.
  void open_one(Call &call, const Message &message, const View *verdicts) const {
    if (message.too_short) refuse_too_short();
    const Call::Placement where = call.settle();
    const wc_aead_message &m = message.c;
    wc_status status;
    if (!where.on_device) {
      status = on_host(Way::open, m);
      if (status != WC_OK) fail_call(status, Way::open, &message, 1, false, nullptr);
      return;
    }
    const uintptr_t handle = call.stream();
    call.wait_for_producers(where.device, handle);
    std::optional<DeviceInts> own;
    int32_t *verdict = verdicts_at(verdicts, own, where.device, 1, handle);
    std::vector<int32_t> known;
    {
      nb::gil_scoped_release unlocked;
      status = on_device(Way::open, &m, 1, verdict, handle);
      if (status == WC_OK && own) known = own->read();
    }
    if (status != WC_OK) fail_call(status, Way::open, &message, 1, false, verdict);
    if (own && known[0] != 1) fail(WC_ERR_AUTH);
  }

  std::vector<size_t> open_batch_on_host(const std::vector<Message> &batch,
                                         const std::vector<wc_aead_message> &all) const {
    std::vector<wc_status> results(batch.size(), WC_ERR_AUTH);
    wc_status status;
    {
      nb::gil_scoped_release unlocked;
      status = for_each_run(batch, [&](size_t first, size_t count) {
        return key_ ? wc_aead_key_open(key_.get(), results.data() + first, all.data() + first, count,
                                            tag_len_)
                         : key_status_;
      });
    }
    if (status != WC_OK && status != WC_ERR_AUTH) {
      fail_call(status, Way::open, batch.data(), batch.size(), true, nullptr);
    }
    std::vector<size_t> failed;
    for (size_t i = 0; i < results.size(); ++i) {
      if (results[i] != WC_OK) failed.push_back(i);
    }
    return failed;
  }

  std::vector<size_t> open_batch_on_device(const Call &call, const Call::Placement &where,
                                           const std::vector<Message> &batch, const std::vector<wc_aead_message> &all,
                                           const View *verdicts) const {
    const uintptr_t handle = call.stream();
    call.wait_for_producers(where.device, handle);
    std::optional<DeviceInts> own;
    int32_t *verdict = verdicts_at(verdicts, own, where.device, batch.size(), handle);
    std::vector<int32_t> known;
    wc_status status;
    {
      nb::gil_scoped_release unlocked;
      status = for_each_run(batch, [&](size_t first, size_t count) {
        return on_device(Way::open, all.data() + first, count, verdict + first, handle);
      });
      // A message too short for its tag fails as one whose tag did not match.
      for (size_t i = 0; i < batch.size() && status == WC_OK; ++i) {
        if (batch[i].too_short) clear_async(where.device, verdict + i, sizeof(int32_t), handle);
      }
      if (status == WC_OK && own) known = own->read();
    }
    if (status != WC_OK) fail_call(status, Way::open, batch.data(), batch.size(), true, verdict);
    std::vector<size_t> failed;
    for (size_t i = 0; i < known.size(); ++i) {
      if (known[i] != 1) failed.push_back(i);
    }
    return failed;
  }

  struct KeyFree {
    void operator()(wc_aead_key *key) const { wc_aead_key_free(key); }
  };

  const wc_aead *aead_;
  size_t tag_len_;
  std::unique_ptr<wc_aead_key, KeyFree> key_;  // wiped by wc_aead_key_free
  wc_status key_status_ = WC_OK;               // why key_ is null, where it is
};

}  // namespace

void bind_aead(nb::module_ &m) {
  m.attr("AEAD_MIN_TAG_SIZE") = WC_AEAD_MIN_TAG_LEN;
  m.attr("AEAD_MAX_TAG_SIZE") = WC_AEAD_MAX_TAG_LEN;
  m.attr("AEAD_MAX_NONCE_SIZE") = WC_AEAD_MAX_NONCE_LEN;

  // The table as plain values (warpcrypt.aead keeps them): module state
  // holds no extension object (see warpcrypt.exceptions.Status for why).
  m.def(
      "aead_table",
      [] {
        std::vector<std::tuple<std::string, size_t, size_t, uint64_t>> all;
        for (size_t i = 0; i < wc_aead_count(); ++i) {
          const wc_aead *aead = wc_aead_at(i);
          all.emplace_back(wc_aead_name(aead), wc_aead_key_len(aead), wc_aead_nonce_len(aead),
                           wc_aead_max_message_len(aead));
        }
        return all;
      },
      "Each AEAD of the library's table as (name, key size, recommended nonce size, longest message one nonce "
      "may seal), in bytes.");

  nb::class_<Aead>(m, "Aead",
                   "A key bound to one AEAD and tag length (warpcrypt.aead's classes hold one). Threads may share "
                   "it; the key is wiped when it is collected.")
      .def(nb::init<const std::string &, nb::handle, size_t, int, unsigned>(), "name"_a, "key"_a, "tag_size"_a,
           "backend"_a, "threads"_a)
      .def_prop_ro("tag_size", &Aead::tag_len)
      .def("seal", &Aead::seal, "nonce"_a.none(), "data"_a.none(), "aad"_a.none(), "resolver"_a,
           "Host memory in; the ciphertext with the tag attached, as bytes.")
      .def("open", &Aead::open, "nonce"_a.none(), "data"_a.none(), "aad"_a.none(), "resolver"_a,
           "The ciphertext with its tag attached in; the plaintext as bytes, or InvalidTag.")
      .def("seal_into", &Aead::seal_into, "nonce"_a.none(), "data"_a.none(), "aad"_a.none(), "buf"_a.none(),
           "tag"_a.none(), "stream"_a.none(), "resolver"_a,
           "Into buf (host or GPU memory), the tag attached or into `tag`; returns the bytes written to buf.")
      .def("open_into", &Aead::open_into, "nonce"_a.none(), "data"_a.none(), "aad"_a.none(), "buf"_a.none(),
           "tag"_a.none(), "verified"_a.none(), "stream"_a.none(), "resolver"_a,
           "Into buf, the tag attached to data or in `tag`; returns the plaintext bytes written to buf.")
      .def("seal_batch", &Aead::seal_batch, "nonces"_a, "messages"_a, "aads"_a.none(), "bufs"_a.none(),
           "tags"_a.none(), "stream"_a.none(), "resolver"_a,
           "Many messages in one library call; a list of bytes without bufs, else None.")
      .def("open_batch", &Aead::open_batch, "nonces"_a, "messages"_a, "aads"_a.none(), "bufs"_a.none(),
           "tags"_a.none(), "verified"_a.none(), "stream"_a.none(), "resolver"_a,
           "(results, indices of the messages that failed authentication).")
      .def("seal_chunks", [](const Aead &aead, nb::handle nonces, nb::handle data, size_t chunk_size, nb::handle tags,
                             nb::handle buf, std::optional<uintptr_t> stream, nb::handle resolver) {
             aead.crypt_chunks(true, nonces, data, chunk_size, tags, buf, nb::none(), stream, resolver);
           }, "nonces"_a, "data"_a, "chunk_size"_a, "tags"_a, "buf"_a.none(), "stream"_a.none(), "resolver"_a,
           "data cut into chunk_size-byte messages, sealed in place or into buf, their tags into `tags`.")
      .def("open_chunks", [](const Aead &aead, nb::handle nonces, nb::handle data, size_t chunk_size, nb::handle tags,
                             nb::handle buf, nb::handle verified, std::optional<uintptr_t> stream,
                             nb::handle resolver) {
             return aead.crypt_chunks(false, nonces, data, chunk_size, tags, buf, verified, stream, resolver);
           }, "nonces"_a, "data"_a, "chunk_size"_a, "tags"_a, "buf"_a.none(), "verified"_a.none(), "stream"_a.none(),
           "resolver"_a, "The chunks opened as seal_chunks sealed them; the indices of those that failed.");
}

}  // namespace wcpy
