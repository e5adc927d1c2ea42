// The bytes of a Python object for the length of one call, whatever protocol
// exports them: the buffer protocol (bytes, bytearray, memoryview, NumPy),
// PyTorch's own tensor methods, DLPack (CuPy, JAX, NumPy) or
// __cuda_array_interface__ (Numba).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include <nanobind/nanobind.h>

namespace wcpy {

enum class Access { read, write };

// The CUDA stream a call works on. DLPack producers must be told it before
// they export (they order their pending work before it), so it is settled by
// the first GPU array acquired: the caller's explicit stream, else the one a
// __cuda_array_interface__ names, else what `resolver(array, device)` returns
// (warpcrypt._streams.current: the framework's current stream).
struct StreamChoice {
  std::optional<uintptr_t> handle;
  nanobind::handle resolver;

  uintptr_t settle(nanobind::handle array, int device);
};

class View {
 public:
  // Host memory only: device arrays are refused with a message that says
  // how to work on them.
  static View host(nanobind::handle object, Access access, const char *role);
  // Host or GPU memory; GPU arrays settle `streams`.
  static View any(nanobind::handle object, Access access, const char *role, StreamChoice &streams);

  View(View &&other) noexcept;
  View &operator=(View &&) = delete;
  View(const View &) = delete;
  ~View();

  uint8_t *data() const { return data_; }
  size_t size() const { return size_; }
  bool on_device() const { return on_device_; }
  // The CUDA ordinal of GPU memory; -1 for host memory and for empty arrays
  // without an address.
  int device() const { return device_; }
  // The stream the data is ready on, where that is not the call's stream: a
  // __cuda_array_interface__'s stream, or PyTorch's current stream.
  std::optional<uintptr_t> ready_on() const { return ready_on_; }

 private:
  View() = default;
  // `streams` is null where only host memory will do.
  static View acquire(nanobind::handle object, Access access, const char *role, StreamChoice *streams);
  void from_buffer(nanobind::handle object, Access access, const char *role);
  void from_torch(nanobind::handle tensor, Access access, const char *role, StreamChoice *streams);
  void from_dlpack(nanobind::handle object, Access access, const char *role, StreamChoice *streams);
  void from_cuda_array_interface(nanobind::handle object, Access access, const char *role, StreamChoice *streams);

  Py_buffer buffer_{};
  bool has_buffer_ = false;
  nanobind::object keep_;  // the DLPack capsule, whose destructor frees the export
  uint8_t *data_ = nullptr;
  size_t size_ = 0;
  bool on_device_ = false;
  int device_ = -1;
  std::optional<uintptr_t> ready_on_;
};

// A new bytes object of `size` bytes, for the library to fill before anyone
// else sees it, and its bytes. Both are the stable ABI's calls: a 3.12 wheel
// is built against it, which has no PyBytes_AS_STRING.
nanobind::bytes uninitialized_bytes(size_t size);
uint8_t *bytes_data(const nanobind::bytes &bytes);

}  // namespace wcpy
