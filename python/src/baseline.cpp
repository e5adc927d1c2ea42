// The C API timed from C, with nothing of Python in the loop: the baseline
// against which bench/python_overhead.py measures what the Python layer
// adds. Not part of the package's API.
#include <chrono>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "errors.h"
#include "warpcrypt/warpcrypt.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace wcpy {
namespace {

const wc_cipher *cipher_named(const std::string &name) {
  const wc_cipher *cipher = wc_cipher_by_name(name.c_str());
  if (cipher == nullptr) fail(WC_ERR_UNKNOWN_CIPHER);
  return cipher;
}

// Mean nanoseconds per wc_encrypt of `data` into one reused buffer.
double c_encrypt_ns(const std::string &name, nb::bytes key, nb::bytes iv, nb::bytes data, size_t iterations) {
  const wc_cipher *cipher = cipher_named(name);
  const auto *in = static_cast<const uint8_t *>(data.data());
  std::vector<uint8_t> out(wc_encrypt_bound(cipher, data.size()));
  size_t written = 0;
  wc_status status = WC_OK;
  const auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < iterations && status == WC_OK; ++i) {
    status = wc_encrypt(nullptr, cipher, out.data(), out.size(), &written, static_cast<const uint8_t *>(key.data()),
                        key.size(), static_cast<const uint8_t *>(iv.data()), iv.size(), in, data.size());
  }
  const std::chrono::duration<double, std::nano> elapsed = std::chrono::steady_clock::now() - start;
  if (status != WC_OK) fail(status);
  return elapsed.count() / static_cast<double>(iterations);
}

// One in-place wc_encrypt_device_async on `stream`, with nothing of Python
// between the C call and the caller's own events: bench/python_overhead.py
// records a CUDA event just before and just after this call, as it does
// around the Python call, and the difference is the Python layer's cost
// (this call's own binding, some 0.1 us, counts on the C side). Raises
// NoDevice without CUDA.
void c_encrypt_device(const std::string &name, nb::bytes key, nb::bytes iv, uintptr_t pointer, size_t length,
                      uintptr_t stream) {
  const wc_cipher *cipher = cipher_named(name);
  auto *data = reinterpret_cast<uint8_t *>(pointer);
  const wc_status status =
      wc_encrypt_device_async(cipher, data, data, length, static_cast<const uint8_t *>(key.data()), key.size(),
                              static_cast<const uint8_t *>(iv.data()), iv.size(), 0,
                              reinterpret_cast<wc_cuda_stream>(stream));
  if (status != WC_OK) fail(status);
}

}  // namespace

void bind_baselines(nb::module_ &m) {
  m.def("c_encrypt_ns", &c_encrypt_ns, "name"_a, "key"_a, "iv"_a, "data"_a, "iterations"_a,
        "Mean ns per wc_encrypt call, looped in C (bench/python_overhead.py's baseline).");
  m.def("c_encrypt_device", &c_encrypt_device, "name"_a, "key"_a, "iv"_a, "pointer"_a, "length"_a, "stream"_a,
        "One in-place wc_encrypt_device_async call (bench/python_overhead.py's baseline).");
}

}  // namespace wcpy
