#include "views.h"

#include <charconv>
#include <string>
#include <vector>

#include <nanobind/stl/string.h>

#include "device.h"
#include "dlpack.h"
#include "errors.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace wcpy {
namespace {

[[noreturn]] void invalid(const std::string &message) { throw Failure(WC_ERR_INVALID_ARGUMENT, message); }

[[noreturn]] void refuse_device(const std::string &role) {
  invalid(role + " is in GPU memory, which only warpcrypt.encrypt and warpcrypt.decrypt with out= reach "
                 "(out=data works in place); cipher contexts and bytes results need host memory");
}

[[noreturn]] void refuse_type(nb::handle object, const std::string &role) {
  throw nb::type_error((role + " must be bytes-like, a NumPy array, or an array with __dlpack__ or "
                               "__cuda_array_interface__, not " + nb::type_name(object.type()).c_str())
                           .c_str());
}

// Elements times element size. Shapes come from other libraries, so a
// negative extent or a product past what an address space holds is refused
// rather than wrapped.
size_t checked_size(const std::string &role, const std::vector<int64_t> &shape, size_t element_size) {
  uint64_t total = element_size;
  for (int64_t extent : shape) {
    if (extent < 0) invalid(role + " has a negative extent in its shape");
    if (__builtin_mul_overflow(total, static_cast<uint64_t>(extent), &total)) total = UINT64_MAX;
  }
  for (int64_t extent : shape) {
    if (extent == 0) return 0;
  }
  if (total > static_cast<uint64_t>(PY_SSIZE_T_MAX)) {
    invalid(role + " is too large: its shape describes more bytes than an address space holds");
  }
  return static_cast<size_t>(total);
}

// Whether `strides` lay the elements out compactly in row-major order, the
// order the bytes are encrypted in. An extent-1 dimension may carry any
// stride, as NumPy and PyTorch give them. `innermost` is the stride of the
// last dimension in the strides' unit (1 element, or the element size in
// bytes). Only called on non-empty arrays whose size checked_size accepted,
// so `expected` never overflows.
bool row_major(const std::vector<int64_t> &shape, const std::vector<int64_t> &strides, int64_t innermost) {
  int64_t expected = innermost;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

[[noreturn]] void refuse_strided(const std::string &role) {
  invalid(role + " is not C-contiguous: encryption runs over memory in order, so make a contiguous copy "
                 "first (numpy.ascontiguousarray, cupy.ascontiguousarray or tensor.contiguous())");
}

[[noreturn]] void refuse_read_only(const std::string &role) {
  invalid(role + " is read-only: results are written into it, so pass a writable buffer "
                 "(a bytearray or a writable array)");
}

std::vector<int64_t> int_tuple(nb::handle sequence, const std::string &role, const char *what) {
  std::vector<int64_t> values;
  try {
    for (nb::handle item : nb::cast<nb::tuple>(sequence)) values.push_back(nb::cast<int64_t>(item));
  } catch (const nb::cast_error &) {
    invalid(role + "'s __cuda_array_interface__ " + what + " is not a tuple of 64-bit integers");
  }
  return values;
}

// The object's DLPack capsule, asking for DLPack 1.x, which flags read-only
// exports; producers older than 1.0 take no max_version.
nb::object export_dlpack(nb::handle object, nb::handle stream) {
  nb::object method = object.attr("__dlpack__");
  try {
    return method("stream"_a = stream, "max_version"_a = nb::make_tuple(1, 0));
  } catch (nb::python_error &error) {
    if (!error.matches(PyExc_TypeError)) throw;
  }
  return method("stream"_a = stream);
}

// Whether `object` is a PyTorch tensor. Only once torch is imported can one
// exist, so this imports nothing.
bool is_torch_tensor(nb::handle object) {
  PyObject *torch = PyDict_GetItemString(PyImport_GetModuleDict(), "torch");
  if (torch == nullptr) return false;
  const nb::object tensor_type = nb::steal(PyObject_GetAttrString(torch, "Tensor"));
  if (!tensor_type.is_valid()) {
    PyErr_Clear();  // a torch module still importing
    return false;
  }
  const int found = PyObject_IsInstance(object.ptr(), tensor_type.ptr());
  if (found < 0) throw nb::python_error();
  return found == 1;
}

}  // namespace

uintptr_t StreamChoice::settle(nb::handle array, int device) {
  if (!handle) handle = resolver.is_valid() ? nb::cast<uintptr_t>(resolver(array, device)) : 0;
  return *handle;
}

View View::host(nb::handle object, Access access, const char *role) {
  return acquire(object, access, role, nullptr);
}

View View::any(nb::handle object, Access access, const char *role, StreamChoice &streams) {
  return acquire(object, access, role, &streams);
}

View View::acquire(nb::handle object, Access access, const char *role, StreamChoice *streams) {
  View view;
  PyObject *raw = object.ptr();
  if (PyBytes_Check(raw) || PyByteArray_Check(raw) || PyMemoryView_Check(raw)) {
    view.from_buffer(object, access, role);  // the common case, recognised cheaply
  } else if (is_torch_tensor(object)) {
    view.from_torch(object, access, role, streams);
  } else if (nb::hasattr(object, "__cuda_array_interface__")) {
    // Device arrays before the buffer protocol: CuPy's arrays export a buffer
    // that refuses device memory. DLPack where offered, as for any array.
    if (nb::hasattr(object, "__dlpack__")) {
      view.from_dlpack(object, access, role, streams);
    } else {
      view.from_cuda_array_interface(object, access, role, streams);
    }
  } else if (PyObject_CheckBuffer(raw)) {
    view.from_buffer(object, access, role);
  } else if (nb::hasattr(object, "__dlpack__")) {
    view.from_dlpack(object, access, role, streams);
  } else if (nb::hasattr(object, "__cuda_array_interface__")) {
    view.from_cuda_array_interface(object, access, role, streams);
  } else {
    refuse_type(object, role);
  }
  return view;
}

View::View(View &&other) noexcept
    : buffer_(other.buffer_),
      has_buffer_(other.has_buffer_),
      keep_(std::move(other.keep_)),
      data_(other.data_),
      size_(other.size_),
      on_device_(other.on_device_),
      device_(other.device_),
      ready_on_(other.ready_on_) {
  other.has_buffer_ = false;
}

View::~View() {
  if (has_buffer_) PyBuffer_Release(&buffer_);
}

void View::from_buffer(nb::handle object, Access access, const char *role) {
  const int flags = access == Access::write ? PyBUF_WRITABLE : PyBUF_SIMPLE;
  if (PyObject_GetBuffer(object.ptr(), &buffer_, flags) == 0) {
    has_buffer_ = true;
    data_ = static_cast<uint8_t *>(buffer_.buf);
    size_ = static_cast<size_t>(buffer_.len);
    return;
  }
  // The exporter's message ("ndarray is not C-contiguous", "Object is not
  // writable.") does not say what to do; find out which it was.
  nb::python_error original;
  Py_buffer probe;
  if (PyObject_GetBuffer(object.ptr(), &probe, PyBUF_RECORDS_RO) != 0) {
    PyErr_Clear();
    throw original;
  }
  const bool contiguous = PyBuffer_IsContiguous(&probe, 'C') != 0;
  const bool read_only = probe.readonly != 0;
  PyBuffer_Release(&probe);
  if (!contiguous) refuse_strided(role);
  if (access == Access::write && read_only) refuse_read_only(role);
  throw original;
}

// PyTorch tensors are read through their own methods: their __dlpack__ is
// Python code costing several microseconds a call, as much as the library
// may add over the C API on a 64 MiB tensor in place. What DLPack export
// would check and arrange is done here instead.
void View::from_torch(nb::handle tensor, Access access, const char *role, StreamChoice *streams) {
  const std::string who(role);
  on_device_ = nb::cast<bool>(tensor.attr("is_cuda"));
  if (!on_device_ && !nb::cast<bool>(tensor.attr("is_cpu"))) {
    invalid(who + " is on a '" + nb::cast<std::string>(tensor.attr("device").attr("type")) +
            "' device, which warpcrypt cannot reach: it works on host memory and CUDA GPUs");
  }
  // Autograd does not see the write, so gradients through the tensor would
  // silently be wrong.
  if (access == Access::write && nb::cast<bool>(tensor.attr("requires_grad"))) {
    invalid(who + " requires grad: write into a tensor that does not (tensor.detach() shares its memory)");
  }
  // With these lazy bits set, memory does not hold the tensor's values.
  if (nb::cast<bool>(tensor.attr("is_conj")()) || nb::cast<bool>(tensor.attr("is_neg")())) {
    invalid(who + " has its conjugate or negative bit set: call resolve_conj() and resolve_neg() first");
  }
  if (!nb::cast<bool>(tensor.attr("is_contiguous")())) refuse_strided(role);
  size_ = nb::cast<size_t>(tensor.attr("nbytes"));
  data_ = reinterpret_cast<uint8_t *>(nb::cast<uintptr_t>(tensor.attr("data_ptr")()));
  if (!on_device_) return;

  if (streams == nullptr) refuse_device(role);
  device_ = nb::cast<int>(tensor.attr("get_device")());
  // PyTorch queues work on its current stream. Work on another stream must
  // wait for it, as DLPack export to that stream would arrange.
  const uintptr_t current = nb::cast<uintptr_t>(streams->resolver(tensor, device_));
  if (!streams->handle) streams->handle = current;
  if (*streams->handle != current) ready_on_ = current;
}

void View::from_dlpack(nb::handle object, Access access, const char *role, StreamChoice *streams) {
  const nb::object where = object.attr("__dlpack_device__")();
  const auto type = nb::cast<int32_t>(where[0]);
  on_device_ = type == dlpack::kCUDA || type == dlpack::kCUDAManaged;
  if (!on_device_ && type != dlpack::kCPU && type != dlpack::kCUDAHost) {
    invalid(std::string(role) + " is on DLPack device type " + std::to_string(type) +
            ", which warpcrypt cannot reach: it works on host memory and CUDA GPUs");
  }
  nb::object stream = nb::none();
  if (on_device_) {
    if (streams == nullptr) refuse_device(role);
    const uintptr_t handle = streams->settle(object, nb::cast<int>(where[1]));
    // DLPack reserves 0 and names the legacy default stream 1.
    stream = nb::int_(handle == 0 ? 1 : handle);
  }
  keep_ = export_dlpack(object, stream);

  PyObject *capsule = keep_.ptr();
  const dlpack::Tensor *tensor = nullptr;
  bool read_only = false;
  if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
    auto *managed = static_cast<dlpack::ManagedTensorVersioned *>(PyCapsule_GetPointer(capsule, "dltensor_versioned"));
    if (managed->major != 1) {
      invalid(std::string(role) + " came as DLPack " + std::to_string(managed->major) + ".x; warpcrypt reads 1.x");
    }
    tensor = &managed->dl_tensor;
    read_only = (managed->flags & dlpack::kFlagReadOnly) != 0;
  } else if (PyCapsule_IsValid(capsule, "dltensor")) {
    tensor = &static_cast<dlpack::ManagedTensor *>(PyCapsule_GetPointer(capsule, "dltensor"))->dl_tensor;
  } else {
    throw nb::type_error((std::string(role) + ".__dlpack__() returned no DLPack capsule").c_str());
  }
  if (access == Access::write && read_only) refuse_read_only(role);

  const size_t bits = size_t{tensor->dtype.bits} * tensor->dtype.lanes;
  if (bits % 8 != 0) {
    invalid(std::string(role) + " has " + std::to_string(bits) +
            "-bit elements: packed sub-byte types have no byte order to encrypt in");
  }
  const std::vector<int64_t> shape(tensor->shape, tensor->shape + tensor->ndim);
  size_ = checked_size(role, shape, bits / 8);
  if (size_ != 0 && tensor->strides != nullptr &&
      !row_major(shape, std::vector<int64_t>(tensor->strides, tensor->strides + tensor->ndim), 1)) {
    refuse_strided(role);
  }
  data_ = static_cast<uint8_t *>(tensor->data) + tensor->byte_offset;
  device_ = on_device_ ? tensor->device.device_id : -1;
}

void View::from_cuda_array_interface(nb::handle object, Access access, const char *role, StreamChoice *streams) {
  if (streams == nullptr) refuse_device(role);
  const std::string who(role);
  const nb::object interface = object.attr("__cuda_array_interface__");
  if (!nb::isinstance<nb::dict>(interface)) {
    throw nb::type_error((who + ".__cuda_array_interface__ is not a dict").c_str());
  }
  const nb::dict fields = nb::borrow<nb::dict>(interface);
  const auto field = [&](const char *name) {
    if (!fields.contains(name)) invalid(who + "'s __cuda_array_interface__ has no '" + name + "'");
    return nb::object(fields[name]);
  };

  // typestr is "<f4", "|u1" and the like: byte order, kind, size in bytes.
  const std::string typestr = nb::cast<std::string>(field("typestr"));
  size_t element_size = 0;
  if (typestr.size() < 3 ||
      std::from_chars(typestr.data() + 2, typestr.data() + typestr.size(), element_size).ec != std::errc{} ||
      element_size == 0) {
    invalid(who + "'s __cuda_array_interface__ typestr '" + typestr + "' names no element size");
  }
  if (fields.contains("mask") && !nb::object(fields["mask"]).is_none()) {
    invalid(who + " has a mask: masked arrays are not supported");
  }
  const std::vector<int64_t> shape = int_tuple(field("shape"), who, "shape");
  size_ = checked_size(who, shape, element_size);
  const nb::object strides = fields.contains("strides") ? nb::object(fields["strides"]) : nb::none();
  if (size_ != 0 && !strides.is_none() &&
      !row_major(shape, int_tuple(strides, who, "strides"), static_cast<int64_t>(element_size))) {
    refuse_strided(role);
  }
  const nb::object data = field("data");
  if (!nb::isinstance<nb::tuple>(data) || nb::len(data) != 2) {
    invalid(who + "'s __cuda_array_interface__ data is not (pointer, read_only)");
  }
  if (access == Access::write && nb::cast<bool>(data[1])) refuse_read_only(role);
  data_ = reinterpret_cast<uint8_t *>(nb::cast<uintptr_t>(data[0]));
  on_device_ = true;
  if (size_ != 0) device_ = device_of(data_);

  if (fields.contains("stream") && !nb::object(fields["stream"]).is_none()) {
    ready_on_ = nb::cast<uintptr_t>(fields["stream"]);
  }
  if (!streams->handle && ready_on_) streams->handle = ready_on_;
  streams->settle(object, device_);
}

nanobind::bytes uninitialized_bytes(size_t size) {
  PyObject *bytes = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(size));
  if (bytes == nullptr) throw nanobind::python_error();
  return nanobind::steal<nanobind::bytes>(bytes);
}

uint8_t *bytes_data(const nanobind::bytes &bytes) { return reinterpret_cast<uint8_t *>(PyBytes_AsString(bytes.ptr())); }

}  // namespace wcpy
