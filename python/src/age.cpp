#include "age.h"

#include <cstdint>
#include <memory>
#include <string>
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

// A key set of the library, freed (and its secrets wiped) with the object.
template <typename Set, wc_status (*make)(Set **), void (*release)(Set *)>
class KeySet {
 public:
  KeySet() {
    Set *raw = nullptr;
    const wc_status status = make(&raw);
    if (status != WC_OK) fail(status);
    set_.reset(raw);
  }
  Set *get() const { return set_.get(); }

 private:
  struct Free {
    void operator()(Set *set) const { release(set); }
  };
  std::unique_ptr<Set, Free> set_;
};

using Recipients = KeySet<wc_age_recipients, wc_age_recipients_new, wc_age_recipients_free>;
using Identities = KeySet<wc_age_identities, wc_age_identities_new, wc_age_identities_free>;

void check_added(wc_status status, const char *detail, const char *what) {
  if (status != WC_OK) {
    throw Failure(status, std::string(what) + ": " + (detail != nullptr ? detail : wc_status_string(status)));
  }
}

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

// Runs `call(&job)` without the GIL; raises for its failure with `what` first.
template <typename Call>
void run_job(const std::string &what, Call call) {
  wc_job job;
  wc_job_init(&job);
  wc_status status;
  {
    nb::gil_scoped_release released;
    status = call(&job);
  }
  if (status != WC_OK) throw Failure(status, what + ": " + job.message);
}

// A buffer call: asks for the result's length first, then fills a bytes
// object of exactly that length.
template <typename Call>
nb::bytes run_buffer(const std::string &what, Call call) {
  size_t need = 0;
  wc_job job;
  wc_job_init(&job);
  wc_status status;
  {
    nb::gil_scoped_release released;
    status = call(&job, nullptr, 0, &need);
  }
  if (status != WC_OK && status != WC_ERR_OUTPUT_TOO_SMALL) throw Failure(status, what + ": " + job.message);
  std::vector<uint8_t> out(need);
  size_t len = 0;
  wc_job_init(&job);
  {
    nb::gil_scoped_release released;
    status = call(&job, out.data(), out.size(), &len);
  }
  if (status != WC_OK) {
    wc_memzero(out.data(), out.size());
    throw Failure(status, what + ": " + job.message);
  }
  nb::bytes result(reinterpret_cast<const char *>(out.data()), len);
  wc_memzero(out.data(), out.size());
  return result;
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
      .def("__len__", [](const Recipients &self) { return wc_age_recipients_count(self.get()); });

  nb::class_<Identities>(m, "AgeIdentities")
      .def(nb::init<>())
      .def("generate",
           [](Identities &self) {
             const wc_status status = wc_age_identities_generate(self.get());
             if (status != WC_OK) fail(status);
           })
      .def("add",
           [](Identities &self, const std::string &text) {
             const char *detail = nullptr;
             const wc_status status = wc_age_identities_add(self.get(), text.c_str(), &detail);
             check_added(status, detail, "identity");
           })
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
      .def("add_copy",
           [](Identities &self, const Identities &from, size_t index) {
             const wc_status status = wc_age_identities_add_copy(self.get(), from.get(), index);
             if (status != WC_OK) fail(status);
           })
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
        return run_buffer("encrypting", [&](wc_job *job, uint8_t *out, size_t cap, size_t *len) {
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
        return run_buffer("decrypting", [&](wc_job *job, uint8_t *out, size_t cap, size_t *len) {
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
