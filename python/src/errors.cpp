#include "errors.h"

namespace nb = nanobind;

namespace wcpy {
namespace {

// The enum's identifiers, which C cannot reflect. A switch rather than a
// table: -Wswitch names any status the header gains and this list lacks.
const char *identifier(wc_status status) {
  switch (status) {
    case WC_OK: return "OK";
    case WC_ERR_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case WC_ERR_UNKNOWN_CIPHER: return "UNKNOWN_CIPHER";
    case WC_ERR_KEY_LEN: return "KEY_LEN";
    case WC_ERR_IV_LEN: return "IV_LEN";
    case WC_ERR_NOT_BLOCK_ALIGNED: return "NOT_BLOCK_ALIGNED";
    case WC_ERR_BAD_DECRYPT: return "BAD_DECRYPT";
    case WC_ERR_OUTPUT_TOO_SMALL: return "OUTPUT_TOO_SMALL";
    case WC_ERR_RANGE: return "RANGE";
    case WC_ERR_UNSUPPORTED: return "UNSUPPORTED";
    case WC_ERR_NO_DEVICE: return "NO_DEVICE";
    case WC_ERR_BACKEND_UNAVAILABLE: return "BACKEND_UNAVAILABLE";
    case WC_ERR_CONTEXT_STATE: return "CONTEXT_STATE";
    case WC_ERR_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
    case WC_ERR_CRYPTO_LIBRARY: return "CRYPTO_LIBRARY";
    case WC_ERR_DIGEST: return "DIGEST";
    case WC_ERR_DEVICE: return "DEVICE";
    case WC_ERR_IO: return "IO";
    case WC_ERR_CANCELLED: return "CANCELLED";
    case WC_ERR_AUTH: return "AUTH";
    case WC_ERR_FORMAT: return "FORMAT";
  }
  return nullptr;
}

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
      nb::dict classes = nb::module_::import_("warpcrypt.exceptions").attr("_BY_STATUS");
      found = classes.get(nb::int_(static_cast<int>(failure.status())), nb::none());
      if (!found.is_none()) type = found.ptr();
    } catch (const nb::python_error &) {
    }
    PyErr_SetString(type, failure.what());
  }
}

}  // namespace

void fail(wc_status status) { throw Failure(status, wc_status_string(status)); }

void bind_errors(nb::module_ &m) {
  nb::enum_<wc_status> status(m, "Status", nb::is_arithmetic(),
                              "The C library's wc_status codes; each error status has its own exception class.");
  // The statuses are numbered from WC_OK without gaps.
  for (int code = 0; identifier(static_cast<wc_status>(code)) != nullptr; ++code) {
    const auto value = static_cast<wc_status>(code);
    status.value(identifier(value), value, wc_status_string(value));
  }
  m.def(
      "status_string", [](int code) { return wc_status_string(static_cast<wc_status>(code)); }, nb::arg("code"),
      "The C library's description of a status code (\"unknown status\" for a code it lacks).");
  nb::register_exception_translator(translate);
}

}  // namespace wcpy
