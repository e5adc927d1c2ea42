// The DLPack ABI (https://github.com/dmlc/dlpack), the parts a consumer that
// only borrows a tensor for one call reads. Layouts are fixed by the
// standard; the names are ours, so no header is vendored.
#pragma once

#include <cstdint>

namespace wcpy::dlpack {

enum DeviceType : int32_t {
  kCPU = 1,
  kCUDA = 2,
  kCUDAHost = 3,  // page-locked host memory
  kCUDAManaged = 13,
};

struct Device {
  int32_t device_type;
  int32_t device_id;
};

struct DataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};

struct Tensor {
  void *data;
  Device device;
  int32_t ndim;
  DataType dtype;
  int64_t *shape;
  int64_t *strides;  // in elements; NULL means compact row-major
  uint64_t byte_offset;
};

// Capsule "dltensor": DLPack before 1.0.
struct ManagedTensor {
  Tensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(ManagedTensor *);
};

// Capsule "dltensor_versioned": DLPack 1.0 and later.
struct ManagedTensorVersioned {
  uint32_t major;
  uint32_t minor;
  void *manager_ctx;
  void (*deleter)(ManagedTensorVersioned *);
  uint64_t flags;
  Tensor dl_tensor;
};

constexpr uint64_t kFlagReadOnly = 1;

}  // namespace wcpy::dlpack
