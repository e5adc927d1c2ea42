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

#if WARPCRYPT_PY_CUDA
#include <cuda_runtime.h>
#endif

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

// Milliseconds of each of `repeats` in-place wc_encrypt_device_async calls
// on `stream`, each bracketed by CUDA events recorded just before and after
// it, so the host's cost of issuing the call counts as it does when Python
// issues it between the same two events. Bound in every build, so that the
// module's interface (and its checked-in stub) is the same with and without
// CUDA; without it the call raises NoDevice.
std::vector<double> c_encrypt_device_ms(const std::string &name, nb::bytes key, nb::bytes iv, uintptr_t pointer,
                                        size_t length, uintptr_t stream_handle, int repeats) {
#if WARPCRYPT_PY_CUDA
  const wc_cipher *cipher = cipher_named(name);
  auto *data = reinterpret_cast<uint8_t *>(pointer);
  auto stream = reinterpret_cast<cudaStream_t>(stream_handle);
  cudaEvent_t begin = nullptr;
  cudaEvent_t end = nullptr;
  if (cudaEventCreate(&begin) != cudaSuccess || cudaEventCreate(&end) != cudaSuccess) fail(WC_ERR_DEVICE);
  std::vector<double> times;
  wc_status status = WC_OK;
  for (int r = 0; r < repeats && status == WC_OK; ++r) {
    cudaEventRecord(begin, stream);
    status = wc_encrypt_device_async(cipher, data, data, length, static_cast<const uint8_t *>(key.data()),
                                     key.size(), static_cast<const uint8_t *>(iv.data()), iv.size(), 0,
                                     reinterpret_cast<wc_cuda_stream>(stream));
    cudaEventRecord(end, stream);
    float ms = 0;
    if (cudaEventSynchronize(end) != cudaSuccess || cudaEventElapsedTime(&ms, begin, end) != cudaSuccess) {
      status = WC_ERR_DEVICE;
    }
    times.push_back(ms);
  }
  cudaEventDestroy(begin);
  cudaEventDestroy(end);
  if (status != WC_OK) fail(status);
  return times;
#else
  (void)name, (void)key, (void)iv, (void)pointer, (void)length, (void)stream_handle, (void)repeats;
  fail(WC_ERR_NO_DEVICE);
#endif
}

}  // namespace

void bind_baselines(nb::module_ &m) {
  m.def("c_encrypt_ns", &c_encrypt_ns, "name"_a, "key"_a, "iv"_a, "data"_a, "iterations"_a,
        "Mean ns per wc_encrypt call, looped in C (bench/python_overhead.py's baseline).");
  m.def("c_encrypt_device_ms", &c_encrypt_device_ms, "name"_a, "key"_a, "iv"_a, "pointer"_a, "length"_a,
        "stream"_a, "repeats"_a,
        "Per-call ms of in-place wc_encrypt_device_async between CUDA events (bench/python_overhead.py).");
}

}  // namespace wcpy
