#include "gpu_support.h"

#include <cuda_runtime_api.h>

#include <stdexcept>


namespace wctest {
namespace {

constexpr uint8_t kGuard = 0xA5;

void check_cuda(cudaError_t error, const char *what) {
  if (error != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(error));
}

}  // namespace

DeviceBuffer::DeviceBuffer(size_t len, size_t slack) : len_(len), slack_(slack) {
  check_cuda(cudaMalloc(reinterpret_cast<void **>(&base_), len + 2 * slack), "cudaMalloc");
  check_cuda(cudaMemset(base_, kGuard, len + 2 * slack), "cudaMemset");
}

DeviceBuffer::~DeviceBuffer() { cudaFree(base_); }

void DeviceBuffer::upload(const Bytes &bytes, size_t offset) {
  if (offset + bytes.size() > len_ + slack_) throw std::out_of_range("DeviceBuffer::upload");
  check_cuda(cudaMemcpy(at(offset), bytes.data(), bytes.size(), cudaMemcpyHostToDevice), "upload");
}

Bytes DeviceBuffer::download(size_t len, size_t offset) const {
  Bytes out(len);
  check_cuda(cudaMemcpy(out.data(), base_ + slack_ + offset, len, cudaMemcpyDeviceToHost), "download");
  return out;
}

bool DeviceBuffer::guard_bytes_intact(size_t len) const {
  Bytes all(len_ + 2 * slack_);
  check_cuda(cudaMemcpy(all.data(), base_, all.size(), cudaMemcpyDeviceToHost), "download");
  for (size_t i = 0; i < all.size(); ++i) {
    const bool inside = i >= slack_ && i < slack_ + len;
    if (!inside && all[i] != kGuard) return false;
  }
  return true;
}

void synchronize_device() { check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

}  // namespace wctest
