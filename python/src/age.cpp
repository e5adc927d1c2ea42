#include "age.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nanobind/stl/string.h>

#include "errors.h"
#include "options.h"
#include "views.h"
#include "warpcrypt/warpcrypt.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace wcpy {
namespace {

// An exception a Python callback raised (a passphrase callable, a
// PluginUI method), kept while the library call that ran the callback
// unwinds through C frames, which carry only a status, and raised as itself
// once that call has returned. The library calls back on the thread that
// called it (age.h), so each call keeps its scope in thread-local storage;
// a call made inside a callback gets a scope of its own.
class CallbackErrors {
 public:
  CallbackErrors() : outer_(current_) { current_ = this; }
  ~CallbackErrors() { current_ = outer_; }
  CallbackErrors(const CallbackErrors &) = delete;
  CallbackErrors &operator=(const CallbackErrors &) = delete;

  // `body()` with the GIL, or `failed` where it raised (the exception is
  // kept) or an earlier callback of the same call did: the application's
  // code is not run again once it has failed.
  template <typename Result, typename Body>
  static Result run(Result failed, Body body) {
    CallbackErrors *scope = current_;
    if (scope == nullptr) return failed;  // only this module's calls run these callbacks
    nb::gil_scoped_acquire held;
    if (scope->error_) return failed;
    try {
      return body();
    } catch (...) {
      scope->error_ = std::current_exception();
      return failed;
    }
  }

  // Raises what a callback raised during the call, if anything.
  void rethrow() {
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  static thread_local CallbackErrors *current_;
  CallbackErrors *outer_;
  std::exception_ptr error_;
};

thread_local CallbackErrors *CallbackErrors::current_ = nullptr;

// Copies `value`, a str (its UTF-8) or a bytes-like object, into `out` and
// returns its length. Python's own copies cannot be wiped; the caller drops
// them as soon as this returns.
size_t copy_secret(nb::handle value, uint8_t *out, size_t out_cap, const std::string &role) {
  const uint8_t *bytes = nullptr;
  size_t len = 0;
  std::optional<View> view;
  if (nb::isinstance<nb::str>(value)) {
    Py_ssize_t size = 0;
    const char *utf8 = PyUnicode_AsUTF8AndSize(value.ptr(), &size);
    if (utf8 == nullptr) throw nb::python_error();
    bytes = reinterpret_cast<const uint8_t *>(utf8);
    len = static_cast<size_t>(size);
  } else if (PyObject_CheckBuffer(value.ptr())) {
    view.emplace(View::host(value, Access::read, role.c_str()));
    bytes = view->data();
    len = view->size();
  } else {
    throw nb::type_error((role + " must be str or bytes, not " + nb::type_name(value.type()).c_str()).c_str());
  }
  if (len > out_cap) {
    throw Failure(WC_ERR_INVALID_ARGUMENT, role + " is longer than " + std::to_string(out_cap) + " bytes");
  }
  std::memcpy(out, bytes, len);
  return len;
}

// The way to a passphrase-protected SSH key's passphrase, the context of the
// wc_age_passphrase_fn the library calls when a file names the key: a
// passphrase held here, in native memory wiped when the last key using it
// goes, or a Python callable, asked each time the library asks. Every set
// holding the source holds a reference to the callable of its own (below).
class SshPassphrase {
 public:
  explicit SshPassphrase(nb::handle given) {
    if (PyCallable_Check(given.ptr())) {
      callable_ = given;
    } else {
      held_len_ = copy_secret(given, held_.data(), held_.size(), "passphrase");
    }
  }
  ~SshPassphrase() { wc_memzero(held_.data(), held_.size()); }
  SshPassphrase(const SshPassphrase &) = delete;
  SshPassphrase &operator=(const SshPassphrase &) = delete;
  nb::handle callable() const { return callable_; }

  static wc_status ask(void *context, uint8_t *out, size_t out_cap, size_t *out_len) {
    const auto *self = static_cast<const SshPassphrase *>(context);
    if (!self->callable_.is_valid()) {
      if (self->held_len_ > out_cap) return WC_ERR_INVALID_ARGUMENT;
      std::memcpy(out, self->held_.data(), self->held_len_);
      *out_len = self->held_len_;
      return WC_OK;
    }
    // Any failure status will do: the callable's exception replaces it.
    return CallbackErrors::run(WC_ERR_CANCELLED, [&] {
      *out_len = copy_secret(self->callable_(), out, out_cap, "the passphrase callable's result");
      return WC_OK;
    });
  }

 private:
  nb::handle callable_;
  std::array<uint8_t, WC_AGE_PASSPHRASE_MAX> held_{};
  size_t held_len_ = 0;
};

// A plugin's text as str: it is untrusted, and need not be UTF-8.
nb::str plugin_text(const char *text) {
  return nb::steal<nb::str>(PyUnicode_DecodeUTF8(text, static_cast<Py_ssize_t>(std::strlen(text)), "replace"));
}

// An application's answers to a plugin's questions: the methods of a
// warpcrypt.age.PluginUI behind the library's wc_age_plugin_ui. Each
// returns 0 for an answer and 1 for "fail" (age.h).
class PluginAnswers {
 public:
  explicit PluginAnswers(nb::handle ui) : ui_(nb::borrow(ui)) {}
  wc_age_plugin_ui table() { return {this, display_message, request_value, confirm}; }

 private:
  static const nb::object &ui(void *context) { return static_cast<PluginAnswers *>(context)->ui_; }

  // None (or True) once shown; False where it could not be.
  static int display_message(void *context, const char *plugin, const char *message) {
    return CallbackErrors::run(1, [&] {
      const nb::object shown = ui(context).attr("message")(plugin_text(plugin), plugin_text(message));
      return shown.ptr() == Py_False ? 1 : 0;
    });
  }

  // The value as str or bytes, or None to decline.
  static int request_value(void *context, const char *plugin, const char *prompt, int secret, char *value,
                           size_t value_cap, size_t *value_len) {
    return CallbackErrors::run(1, [&] {
      const nb::object answer =
          ui(context).attr("request_value")(plugin_text(plugin), plugin_text(prompt), secret != 0);
      if (answer.is_none()) return 1;
      *value_len = copy_secret(answer, reinterpret_cast<uint8_t *>(value), value_cap, "plugin_ui.request_value()");
      return 0;
    });
  }

  // True for `yes`, False for `no`, None to decline.
  static int confirm(void *context, const char *plugin, const char *prompt, const char *yes, const char *no,
                     int *chose_yes) {
    return CallbackErrors::run(1, [&] {
      const nb::object no_choice = no != nullptr ? nb::object(plugin_text(no)) : nb::none();
      const nb::object answer =
          ui(context).attr("confirm")(plugin_text(plugin), plugin_text(prompt), plugin_text(yes), no_choice);
      if (answer.is_none()) return 1;
      if (!nb::isinstance<nb::bool_>(answer)) {
        throw nb::type_error("plugin_ui.confirm() must return True, False or None");
      }
      *chose_yes = answer.ptr() == Py_True ? 1 : 0;
      return 0;
    });
  }

  nb::object ui_;
};

// A key set of the library, freed (and its secrets wiped) with the object.
// Its plugins talk to the user through the PluginUI given to it, if any.
template <typename Set, wc_status (*make)(Set **), void (*release)(Set *),
          void (*install_ui)(Set *, const wc_age_plugin_ui *)>
class KeySet {
 public:
  KeySet() {
    Set *raw = nullptr;
    const wc_status status = make(&raw);
    if (status != WC_OK) fail(status);
    set_.reset(raw);
  }
  Set *get() const { return set_.get(); }
  // Frees the set now, its secrets wiped; the object is empty after.
  void release_set() { set_.reset(); }

  void set_plugin_ui(nb::handle ui) {
    auto answers = std::make_unique<PluginAnswers>(ui);
    const wc_age_plugin_ui table = answers->table();
    install_ui(get(), &table);
    answers_ = std::move(answers);  // after the set no longer points at the ones it replaces
  }

 private:
  struct Free {
    void operator()(Set *set) const { release(set); }
  };
  std::unique_ptr<Set, Free> set_;
  std::unique_ptr<PluginAnswers> answers_;
};

using Recipients = KeySet<wc_age_recipients, wc_age_recipients_new, wc_age_recipients_free,
                          wc_age_recipients_set_plugin_ui>;

void check_added(wc_status status, const char *detail, const char *what) {
  if (status != WC_OK) {
    throw Failure(status, std::string(what) + ": " + (detail != nullptr ? detail : wc_status_string(status)));
  }
}

// The identity set keeps the passphrase sources of its SSH keys, its own
// and those of the keys copied in, for as long as it holds those keys.
class Identities
    : public KeySet<wc_age_identities, wc_age_identities_new, wc_age_identities_free, wc_age_identities_set_plugin_ui> {
 public:
  // `passphrase`: None, or what an SSH key among `text`'s asks for (SshPassphrase).
  void add(const std::string &text, nb::handle passphrase) {
    auto source = passphrase.is_none() ? nullptr : std::make_shared<SshPassphrase>(passphrase);
    const char *detail = nullptr;
    const wc_status status = wc_age_identities_add_with_prompt(get(), text.c_str(),
                                                               source ? SshPassphrase::ask : nullptr, source.get(),
                                                               &detail);
    check_added(status, detail, "identity");
    if (source) passphrases_.push_back({source, nb::borrow(source->callable())});
  }

  void add_copy(const Identities &from, size_t index) {
    const wc_status status = wc_age_identities_add_copy(get(), from.get(), index);
    if (status != WC_OK) fail(status);
    if (&from == this) return;
    for (const Share &share : from.passphrases_) passphrases_.push_back({share.source, share.callable});
  }

  // The garbage collector's way through the set to the callables, which may
  // hold the Identity that holds it (a bound method of the object keeping
  // the identity): a cycle it can then find and break.
  static int traverse(PyObject *self, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(self));
    if (!nb::inst_ready(self)) return 0;
    for (const Share &share : nb::inst_ptr<Identities>(self)->passphrases_) Py_VISIT(share.callable.ptr());
    return 0;
  }
  // Breaks such a cycle: the keys go first, so none is left to call back.
  static int clear(PyObject *self) {
    Identities *identities = nb::inst_ptr<Identities>(self);
    identities->release_set();
    identities->passphrases_.clear();
    return 0;
  }

 private:
  // A source, and the set's own reference to its callable (empty where the
  // passphrase is held), which the collector sees from the set.
  struct Share {
    std::shared_ptr<SshPassphrase> source;
    nb::object callable;
  };
  std::vector<Share> passphrases_;
};

PyType_Slot identities_slots[] = {{Py_tp_traverse, reinterpret_cast<void *>(Identities::traverse)},
                                  {Py_tp_clear, reinterpret_cast<void *>(Identities::clear)},
                                  {0, nullptr}};

// What `format` writes of identity `index`; the library's refusal names
// the identity's type.
std::string formatted(wc_status (*format)(const wc_age_identities *, size_t, char *, size_t, const char **),
                      const Identities &set, size_t index) {
  char text[WC_AGE_KEY_MAX_LEN];
  const char *detail = nullptr;
  const wc_status status = format(set.get(), index, text, sizeof text, &detail);
  if (status != WC_OK) throw Failure(status, detail != nullptr ? detail : wc_status_string(status));
  std::string out = text;
  wc_memzero(text, sizeof text);
  return out;
}

// Runs `call(&job)` without the GIL; raises what a Python callback raised
// during it, else for its failure with `what` first.
template <typename Call>
void run_job(const std::string &what, Call call) {
  wc_job job;
  wc_job_init(&job);
  CallbackErrors callback_errors;
  wc_status status;
  {
    nb::gil_scoped_release released;
    status = call(&job);
  }
  callback_errors.rethrow();
  if (status != WC_OK) throw Failure(status, what + ": " + job.message);
}

// Bytes wiped when they go, however the call that filled them ends.
struct WipedBuffer {
  explicit WipedBuffer(size_t size) : bytes(size) {}
  ~WipedBuffer() { wc_memzero(bytes.data(), bytes.size()); }
  std::vector<uint8_t> bytes;
};

// A buffer call into room for `capacity` bytes, what the library says the
// result takes at most (wc_age_encrypted_capacity; a decryption's input
// size), so that the work, and every question a passphrase callable or a
// plugin asks, runs once; where a plugin's stanza makes it short, the
// library says how much is needed, and a second run fills exactly that.
template <typename Call>
nb::bytes run_buffer(const std::string &what, size_t capacity, Call call) {
  WipedBuffer out(capacity);
  size_t len = 0;
  const auto fill = [&](wc_job *job) { return call(job, out.bytes.data(), out.bytes.size(), &len); };
  try {
    run_job(what, fill);
  } catch (const Failure &failure) {
    if (failure.status() != WC_ERR_OUTPUT_TOO_SMALL) throw;
    out.bytes.assign(len, 0);
    run_job(what, fill);
  }
  return nb::bytes(reinterpret_cast<const char *>(out.bytes.data()), len);
}

}  // namespace

void bind_age(nb::module_ &m) {
  m.attr("AGE_DEFAULT_WORK_FACTOR") = WC_AGE_DEFAULT_WORK_FACTOR;
  m.attr("AGE_DEFAULT_MAX_WORK_FACTOR") = WC_AGE_DEFAULT_MAX_WORK_FACTOR;
  m.attr("AGE_MAX_WORK_FACTOR") = WC_AGE_MAX_WORK_FACTOR;

  nb::class_<Recipients>(m, "AgeRecipients")
      .def(nb::init<>())
      .def("add",
           [](Recipients &self, const std::string &text) {
             const char *detail = nullptr;
             const wc_status status = wc_age_recipients_add(self.get(), text.c_str(), &detail);
             check_added(status, detail, "recipient");
           })
      .def("add_passphrase",
           [](Recipients &self, nb::handle passphrase, unsigned work_factor) {
             const View view = View::host(passphrase, Access::read, "passphrase");
             const wc_status status = wc_age_recipients_add_passphrase(self.get(), view.data(), view.size(),
                                                                       work_factor);
             if (status != WC_OK) {
               throw Failure(status, "passphrase: must not be empty, and the work factor must be 1 to " +
                                         std::to_string(WC_AGE_MAX_WORK_FACTOR));
             }
           })
      .def("set_plugin_ui", &Recipients::set_plugin_ui, "ui"_a,
           "The plugins of these recipients ask `ui` (a warpcrypt.age.PluginUI) what they ask the user.")
      .def("__len__", [](const Recipients &self) { return wc_age_recipients_count(self.get()); });

  nb::class_<Identities>(m, "AgeIdentities", nb::type_slots(identities_slots))
      .def(nb::init<>())
      .def("generate",
           [](Identities &self) {
             const wc_status status = wc_age_identities_generate(self.get());
             if (status != WC_OK) fail(status);
           })
      .def("add", &Identities::add, "text"_a, "passphrase"_a = nb::none(),
           "Adds the identities of `text`; `passphrase` (str, bytes or a callable returning either) opens a "
           "passphrase-protected SSH key among them, held in native memory or asked when a file names the key.")
      .def("add_passphrase",
           [](Identities &self, nb::handle passphrase, unsigned max_work_factor) {
             const View view = View::host(passphrase, Access::read, "passphrase");
             const wc_status status = wc_age_identities_add_passphrase(self.get(), view.data(), view.size(),
                                                                       max_work_factor);
             if (status != WC_OK) {
               throw Failure(status, "passphrase: must not be empty, and the work factor limit must be 1 to " +
                                         std::to_string(WC_AGE_MAX_WORK_FACTOR));
             }
           })
      .def("add_copy", &Identities::add_copy, "source"_a, "index"_a)
      .def("set_plugin_ui", &Identities::set_plugin_ui, "ui"_a,
           "The plugin identities of this set ask `ui` (a warpcrypt.age.PluginUI) what they ask the user.")
      .def("type",
           [](const Identities &self, size_t index) {
             const char *type = nullptr;
             const wc_status status = wc_age_identity_type(self.get(), index, &type);
             if (status != WC_OK) fail(status);
             return std::string(type);
           })
      .def("secret_key", [](const Identities &self, size_t index) {
        return formatted(wc_age_identity_format, self, index);
      })
      .def("recipient", [](const Identities &self, size_t index) {
        return formatted(wc_age_identity_recipient, self, index);
      })
      .def("__len__", [](const Identities &self) { return wc_age_identities_count(self.get()); });

  m.def(
      "age_encrypt",
      [](const Recipients &recipients, nb::handle data, bool armor, int backend, unsigned threads) {
        const View in = View::host(data, Access::read, "data");
        const wc_options options = make_options(backend, threads);
        const size_t capacity = wc_age_encrypted_capacity(recipients.get(), in.size(), armor);
        return run_buffer("encrypting", capacity, [&](wc_job *job, uint8_t *out, size_t cap, size_t *len) {
          return wc_age_encrypt_buffer(&options, recipients.get(), armor, job, out, cap, len, in.data(), in.size());
        });
      },
      "recipients"_a, "data"_a, "armor"_a, "backend"_a, "threads"_a);
  m.def(
      "age_decrypt",
      [](const Identities &identities, nb::handle data, uint64_t offset, uint64_t length, int backend,
         unsigned threads) {
        const View in = View::host(data, Access::read, "data");
        const wc_options options = make_options(backend, threads);
        // The plaintext is always shorter than its age file.
        return run_buffer("decrypting", in.size(), [&](wc_job *job, uint8_t *out, size_t cap, size_t *len) {
          return wc_age_decrypt_buffer(&options, identities.get(), offset, length, job, out, cap, len, in.data(),
                                       in.size());
        });
      },
      "identities"_a, "data"_a, "offset"_a, "length"_a, "backend"_a, "threads"_a);
  m.def(
      "age_encrypt_fd",
      [](const Recipients &recipients, int out_fd, int in_fd, bool armor, int backend, unsigned threads) {
        const wc_options options = make_options(backend, threads);
        run_job("encrypting", [&](wc_job *job) {
          return wc_age_encrypt_fd(&options, recipients.get(), armor, job, out_fd, in_fd);
        });
      },
      "recipients"_a, "out_fd"_a, "in_fd"_a, "armor"_a, "backend"_a, "threads"_a);
  m.def(
      "age_decrypt_fd",
      [](const Identities &identities, int out_fd, int in_fd, uint64_t offset, uint64_t length, int backend,
         unsigned threads) {
        const wc_options options = make_options(backend, threads);
        run_job("decrypting", [&](wc_job *job) {
          return wc_age_decrypt_fd(&options, identities.get(), offset, length, job, out_fd, in_fd);
        });
      },
      "identities"_a, "out_fd"_a, "in_fd"_a, "offset"_a, "length"_a, "backend"_a, "threads"_a);
  m.def(
      "age_inspect_fd",
      [](int in_fd, const std::string &name) {
        wc_age_info info{};
        run_job("inspecting " + name, [&](wc_job *job) { return wc_age_inspect_fd(in_fd, &info, job); });
        nb::list types;
        for (size_t i = 0; i < info.stanza_count; ++i) types.append(nb::str(info.stanza_types[i]));
        static const char *const kPostQuantum[] = {"unknown", "no", "yes"};
        nb::tuple facts = nb::make_tuple(info.armored != 0, kPostQuantum[info.postquantum], nb::tuple(types),
                                         info.header_bytes, info.armor_bytes, info.overhead_bytes,
                                         info.payload_bytes, info.chunk_count, info.file_bytes);
        wc_age_info_release(&info);
        return facts;
      },
      "in_fd"_a, "name"_a,
      "(armored, postquantum, stanza types, header, armor, overhead and payload sizes, chunks, file size) of the "
      "age file read from in_fd, which nothing decrypts.");
  m.def(
      "age_encrypt_file",
      [](const Recipients &recipients, const std::string &source, const std::string &target, bool armor,
         int backend, unsigned threads) {
        const wc_options options = make_options(backend, threads);
        run_job("encrypting " + source, [&](wc_job *job) {
          return wc_age_encrypt_file(&options, recipients.get(), armor, job, target.c_str(), source.c_str());
        });
      },
      "recipients"_a, "source"_a, "target"_a, "armor"_a, "backend"_a, "threads"_a);
  m.def(
      "age_decrypt_file",
      [](const Identities &identities, const std::string &source, const std::string &target, uint64_t offset,
         uint64_t length, int backend, unsigned threads) {
        const wc_options options = make_options(backend, threads);
        run_job("decrypting " + source, [&](wc_job *job) {
          return wc_age_decrypt_file(&options, identities.get(), offset, length, job, target.c_str(),
                                     source.c_str());
        });
      },
      "identities"_a, "source"_a, "target"_a, "offset"_a, "length"_a, "backend"_a, "threads"_a);
}

}  // namespace wcpy
