#include "backends/cuda/device_context.h"

#include <array>
#include <atomic>
#include <cstring>
#include <mutex>

#include "core/aes_tables.h"

namespace warpcrypt::cuda {
namespace {

constexpr int kMaxDevices = 64;

// Tables for one device in one allocation: enc0, dec0 (1 KiB each), sbox,
// inv_sbox (256 B each).
bool upload_tables(DeviceContext &context) {
  const aes::Tables &t = aes::tables();
  constexpr size_t kWordsBytes = 256 * sizeof(uint32_t);
  constexpr size_t kTotal = 2 * kWordsBytes + 2 * 256;
  uint8_t *memory = nullptr;
  if (cudaMalloc(&memory, kTotal) != cudaSuccess) return false;
  std::array<uint8_t, kTotal> host{};
  std::memcpy(host.data(), t.enc0.data(), kWordsBytes);
  std::memcpy(host.data() + kWordsBytes, t.dec0.data(), kWordsBytes);
  std::memcpy(host.data() + 2 * kWordsBytes, t.sbox.data(), 256);
  std::memcpy(host.data() + 2 * kWordsBytes + 256, t.inv_sbox.data(), 256);
  if (cudaMemcpy(memory, host.data(), kTotal, cudaMemcpyHostToDevice) != cudaSuccess) return false;
  context.tables.enc0 = reinterpret_cast<const uint32_t *>(memory);
  context.tables.dec0 = reinterpret_cast<const uint32_t *>(memory + kWordsBytes);
  context.tables.sbox = memory + 2 * kWordsBytes;
  context.tables.inv_sbox = memory + 2 * kWordsBytes + 256;
  return true;
}

}  // namespace

wc_status device_status(cudaError_t error) {
  if (error == cudaSuccess) return WC_OK;
  cudaGetLastError();
  return WC_ERR_DEVICE;
}

CurrentDevice::CurrentDevice(int device) {
  if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
  status_ = device_status(cudaSetDevice(device));
}

CurrentDevice::~CurrentDevice() {
  if (previous_ >= 0) cudaSetDevice(previous_);
}

WorkDevice::WorkDevice(cudaStream_t stream, std::initializer_list<const void *> buffers) {
  int chosen = -1;
  const bool default_stream = stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread;
  if (!default_stream && cudaStreamGetDevice(stream, &chosen) != cudaSuccess) {
    cudaGetLastError();
    status_ = WC_ERR_INVALID_ARGUMENT;  // not a stream of this process's devices
    return;
  }
  for (const void *buffer : buffers) {
    cudaPointerAttributes attributes{};
    if (buffer == nullptr || cudaPointerGetAttributes(&attributes, buffer) != cudaSuccess) {
      cudaGetLastError();
      continue;  // not memory CUDA knows of
    }
    if (attributes.type != cudaMemoryTypeDevice) continue;
    if (chosen < 0) chosen = attributes.device;
    if (attributes.device != chosen) {
      status_ = WC_ERR_INVALID_ARGUMENT;
      return;
    }
  }
  if (chosen < 0 && cudaGetDevice(&chosen) != cudaSuccess) {
    status_ = device_status(cudaErrorNoDevice);
    return;
  }
  current_.emplace(chosen);
  status_ = current_->status();
}

namespace {

// One context per device, set up once per process.
struct DeviceContexts {
  std::array<DeviceContext, kMaxDevices> contexts;
  std::array<std::once_flag, kMaxDevices> once;
  std::array<std::atomic<bool>, kMaxDevices> ready{};
};

DeviceContexts &device_contexts() {
  static DeviceContexts all;
  return all;
}

}  // namespace

bool device_context_ready(int device) {
  return device >= 0 && device < kMaxDevices && device_contexts().ready[device].load();
}

const DeviceContext *current_device_context() {
  DeviceContexts &all = device_contexts();
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices) {
    cudaGetLastError();
    return nullptr;
  }
  std::call_once(all.once[device], [&all, device] {
    DeviceContext &context = all.contexts[device];
    context.device = device;
    int major = 0;
    const bool ready = cudaDeviceGetAttribute(&context.multiprocessors, cudaDevAttrMultiProcessorCount,
                                              device) == cudaSuccess &&
                       cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
                       upload_tables(context);
    context.binary_tensor_cores = major >= 8;
    if (!ready) cudaGetLastError();
    all.ready[device].store(ready);
  });
  return all.ready[device].load() ? &all.contexts[device] : nullptr;
}

}  // namespace warpcrypt::cuda
