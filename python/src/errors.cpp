#include "errors.h"

#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <utility>
#include <vector>

namespace nb = nanobind;

namespace wcpy {
namespace {

// warpcrypt.exceptions maps each status to its class. It is looked up per
// failure, not cached, so the extension holds no Python state between calls;
// failures are the slow path. Should the package itself be broken, the error
// still surfaces, as a RuntimeError.
void translate(const std::exception_ptr &thrown, void *) {
  try {
    std::rethrow_exception(thrown);
  } catch (const Failure &failure) {
    PyObject *type = PyExc_RuntimeError;
    nb::object found;
    try {
      nb::module_ exceptions = nb::module_::import_("warpcrypt.exceptions");
      if (failure.os_error() != 0) {
        // The OSError subclass errno names (FileNotFoundError, ...), as open() raises.
        nb::object error = exceptions.attr("_io_failure")(failure.os_error(), failure.what(),
                                                          failure.filename().empty() ? nb::object(nb::none())
                                                                                     : nb::object(nb::str(failure.filename().c_str())));
        PyErr_SetObject(reinterpret_cast<PyObject *>(Py_TYPE(error.ptr())), error.ptr());
        return;
      }
      found = nb::dict(exceptions.attr("_BY_STATUS")).get(nb::int_(static_cast<int>(failure.status())), nb::none());
      if (!found.is_none()) type = found.ptr();
    } catch (const nb::python_error &) {
    }
    PyErr_SetString(type, failure.what());
  }
}

}  // namespace

void fail(wc_status status) { throw Failure(status, wc_status_string(status)); }

void bind_errors(nb::module_ &m) {
  // The codes as plain values: warpcrypt.exceptions.Status is a Python enum
  // of them (see there why no extension type stands for a status).
  m.def(
      "status_codes",
      [] {
        std::vector<std::pair<std::string, int>> codes;
        for (size_t code = 0; code < wc_status_count(); ++code) {
          codes.emplace_back(wc_status_name(static_cast<wc_status>(code)), static_cast<int>(code));
        }
        return codes;
      },
      "The C library's wc_status codes as (wc_status_name, code), in order.");
  m.def(
      "status_string", [](int code) { return wc_status_string(static_cast<wc_status>(code)); }, nb::arg("code"),
      "The C library's description of a status code (\"unknown status\" for a code it lacks).");
  nb::register_exception_translator(translate);
}

}  // namespace wcpy
