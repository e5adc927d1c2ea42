// Failed calls: C++ exceptions inside the extension, typed Python exceptions
// (warpcrypt.exceptions) outside it.
#pragma once

#include <stdexcept>
#include <string>

#include <nanobind/nanobind.h>

#include "warpcrypt/warpcrypt.h"

namespace wcpy {

// A failure with the C library's status, which picks the Python exception
// class, and a message that says what went wrong in the caller's terms.
class Failure : public std::runtime_error {
 public:
  Failure(wc_status status, const std::string &message) : std::runtime_error(message), status_(status) {}
  wc_status status() const { return status_; }

 private:
  wc_status status_;
};

// Throws a Failure carrying the library's own text for `status`.
[[noreturn]] void fail(wc_status status);

// Defines the Status enum (the library's statuses, named by wc_status_name)
// and status_string, and turns every Failure that reaches Python into the
// warpcrypt.exceptions class for its status.
void bind_errors(nanobind::module_ &m);

}  // namespace wcpy
