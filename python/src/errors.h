// Failed calls: C++ exceptions inside the extension, typed Python exceptions
// (warpcrypt.exceptions) outside it.
#pragma once

#include <stdexcept>
#include <string>

#include <nanobind/nanobind.h>

#include "warpcrypt/warpcrypt.h"

namespace wcpy {

// A failure with the C library's status, which picks the Python exception
// class, and a message that says what went wrong in the caller's terms. A
// failed read or write also carries errno and the file it was on, which
// become the OSError's errno, strerror (the message) and filename.
class Failure : public std::runtime_error {
 public:
  Failure(wc_status status, const std::string &message) : std::runtime_error(message), status_(status) {}
  Failure(int os_error, const std::string &message, std::string filename)
      : std::runtime_error(message), status_(WC_ERR_IO), os_error_(os_error), filename_(std::move(filename)) {}
  wc_status status() const { return status_; }
  int os_error() const { return os_error_; }
  const std::string &filename() const { return filename_; }

 private:
  wc_status status_;
  int os_error_ = 0;
  std::string filename_;
};

// Throws a Failure carrying the library's own text for `status`.
[[noreturn]] void fail(wc_status status);

// Defines the Status enum (the library's statuses, named by wc_status_name)
// and status_string, and turns every Failure that reaches Python into the
// warpcrypt.exceptions class for its status.
void bind_errors(nanobind::module_ &m);

}  // namespace wcpy
