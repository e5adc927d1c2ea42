// The CUDA side of `warpcrypt speed`: device-resident buffers timed with CUDA
// events (on several devices, with the host's clock around all of them), and
// pinned host memory for the end-to-end figures.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "cli_error.h"
#include "speed_workload.h"

namespace warpcrypt::cli {
namespace {

void check_cuda(cudaError_t error, const char *what) {
  if (error != cudaSuccess) throw CliError(std::string(what) + ": " + cudaGetErrorString(error));
}

// What both device workloads share: a stream, a buffer of random bytes in
// the memory of one device, and operations timed with CUDA events on that
// stream. Made with its device current, and timed from any thread.
class TimedDeviceWorkload : public Workload {
 public:
  explicit TimedDeviceWorkload(const WorkloadSpec &spec) : spec_(spec) {
    check_cuda(cudaGetDevice(&device_), "cudaGetDevice");
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check_cuda(cudaEventCreate(&start_), "cudaEventCreate");
    check_cuda(cudaEventCreate(&stop_), "cudaEventCreate");
    check_cuda(cudaMalloc(&buffer_, spec.bytes), "cudaMalloc");
    const size_t piece = std::min<size_t>(spec.bytes, 64 << 20);
    std::vector<uint8_t> random(piece);
    fill_random(random.data(), random.size());
    for (size_t at = 0; at < spec.bytes; at += piece) {
      check_cuda(cudaMemcpy(buffer_ + at, random.data(), std::min(piece, spec.bytes - at), cudaMemcpyHostToDevice),
                 "cudaMemcpy");
    }
  }

  ~TimedDeviceWorkload() override {
    cudaFree(buffer_);
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
    cudaStreamDestroy(stream_);
  }

  double time_operations(size_t operations) override {
    check_cuda(cudaSetDevice(device_), "cudaSetDevice");
    check_cuda(cudaEventRecord(start_, stream_), "cudaEventRecord");
    for (size_t i = 0; i < operations; ++i) queue_operation();
    check_cuda(cudaEventRecord(stop_, stream_), "cudaEventRecord");
    check_cuda(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    float milliseconds = 0;
    check_cuda(cudaEventElapsedTime(&milliseconds, start_, stop_), "cudaEventElapsedTime");
    return milliseconds / 1e3;
  }

 protected:
  // Queues one operation on stream_ without waiting for it.
  virtual void queue_operation() = 0;

  WorkloadSpec spec_;
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  uint8_t *buffer_ = nullptr;

 private:
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

// The cipher in place on the buffer, one call per operation.
class DeviceWorkload final : public TimedDeviceWorkload {
 public:
  explicit DeviceWorkload(const WorkloadSpec &spec) : TimedDeviceWorkload(spec) {
    key_.resize(wc_cipher_key_len(spec.cipher));
    iv_.resize(wc_cipher_iv_len(spec.cipher));
    check(wc_random_bytes(key_.data(), key_.size()), "random key");
    check(wc_random_bytes(iv_.data(), iv_.size()), "random IV");
  }

 private:
  void queue_operation() override {
    const auto call = spec_.direction == WC_ENCRYPT ? wc_encrypt_device_async : wc_decrypt_device_async;
    check(call(spec_.cipher, buffer_, buffer_, spec_.bytes, key_.data(), key_.size(), iv_.data(),
               iv_.size(), 0, stream_),
          std::string("device ") + wc_cipher_name(spec_.cipher));
  }

  std::vector<uint8_t> key_;
  std::vector<uint8_t> iv_;
};

// One message per operation, as the host AEAD workload, on device memory:
// sealing in place with the tag on the device; opening a message sealed
// once into a second buffer, the verdict on the device.
class DeviceAeadWorkload final : public TimedDeviceWorkload {
 public:
  explicit DeviceAeadWorkload(const WorkloadSpec &spec)
      : TimedDeviceWorkload(spec), keying_(make_aead_keying(spec.aead)) {
    check_cuda(cudaMalloc(&tag_and_verdict_, WC_AEAD_MAX_TAG_LEN + sizeof(int32_t)), "cudaMalloc");
    if (spec.direction == WC_DECRYPT) {
      check_cuda(cudaMalloc(&opened_, spec.bytes), "cudaMalloc");
      seal();
      check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    }
  }

  ~DeviceAeadWorkload() override {
    cudaFree(opened_);
    cudaFree(tag_and_verdict_);
  }

 private:
  void queue_operation() override {
    if (spec_.direction == WC_ENCRYPT) {
      seal();
      return;
    }
    check(wc_aead_open_device_async(spec_.aead, opened_,
                                    reinterpret_cast<int32_t *>(tag_and_verdict_ + WC_AEAD_MAX_TAG_LEN),
                                    keying_.key.data(), keying_.key.size(), keying_.nonce.data(),
                                    keying_.nonce.size(), nullptr, 0, buffer_, spec_.bytes, tag_and_verdict_,
                                    WC_AEAD_MAX_TAG_LEN, stream_),
          std::string("device open with ") + wc_aead_name(spec_.aead));
  }

  void seal() {
    check(wc_aead_seal_device_async(spec_.aead, buffer_, tag_and_verdict_, WC_AEAD_MAX_TAG_LEN,
                                    keying_.key.data(), keying_.key.size(), keying_.nonce.data(),
                                    keying_.nonce.size(), nullptr, 0, buffer_, spec_.bytes, stream_),
          std::string("device seal with ") + wc_aead_name(spec_.aead));
  }

  AeadKeying keying_;
  uint8_t *opened_ = nullptr;
  uint8_t *tag_and_verdict_ = nullptr;
};

// The same workload on several devices at once, one host thread each.
// Events of different devices cannot be compared, so a run's time is the
// host's clock from before the first thread starts until the last is done.
class DeviceSetWorkload final : public Workload {
 public:
  explicit DeviceSetWorkload(std::vector<std::unique_ptr<Workload>> members) : members_(std::move(members)) {}

  double time_operations(size_t operations) override {
    std::vector<std::thread> threads;
    std::vector<std::string> failures(members_.size());
    const auto start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < members_.size(); ++i) {
      threads.emplace_back([this, i, operations, &failures] {
        try {
          members_[i]->time_operations(operations);
        } catch (const CliError &error) {
          failures[i] = error.what();
        }
      });
    }
    for (std::thread &thread : threads) thread.join();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (const std::string &failure : failures) {
      if (!failure.empty()) throw CliError(failure);
    }
    return seconds;
  }

  size_t copies() const override { return members_.size(); }

 private:
  std::vector<std::unique_ptr<Workload>> members_;
};

int device_count() {
  int count = 0;
  return wc_device_count(&count) == WC_OK ? count : 0;
}

bool have_device() { return device_count() > 0; }

// The devices `engine` lists, each one the library knows, or every device.
std::vector<int> listed_devices(const EngineFlags &engine) {
  std::vector<int> devices = engine.devices;
  for (int device = 0; devices.empty() && device < device_count(); ++device) devices.push_back(device);
  for (int device : devices) {
    wc_device_info info;
    check(wc_device_info_get(&info, device), "--devices " + std::to_string(device));
  }
  return devices;
}

std::unique_ptr<Workload> make_one_device_workload(const WorkloadSpec &spec, int device) {
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  if (spec.aead != nullptr) return std::make_unique<DeviceAeadWorkload>(spec);
  return std::make_unique<DeviceWorkload>(spec);
}

}  // namespace

std::unique_ptr<Workload> make_device_workload(const WorkloadSpec &spec) {
  if (!have_device()) {
    throw CliError("--resident device needs a CUDA device; run without it to measure the CPU", WC_KIND_NO_DEVICE);
  }
  if (spec.backend != WC_BACKEND_GPU) throw CliError("--resident device needs --backend gpu");
  const std::vector<int> devices = listed_devices(*spec.engine);
  if (devices.size() == 1) return make_one_device_workload(spec, devices.front());
  std::vector<std::unique_ptr<Workload>> members;
  for (int device : devices) members.push_back(make_one_device_workload(spec, device));
  return std::make_unique<DeviceSetWorkload>(std::move(members));
}

bool can_pin_memory() { return have_device(); }

std::shared_ptr<uint8_t> allocate_pinned_buffer(size_t bytes) {
  if (!have_device()) {
    throw CliError("--memory pinned needs a CUDA device; use --memory pageable", WC_KIND_NO_DEVICE);
  }
  uint8_t *memory = nullptr;
  check_cuda(cudaMallocHost(&memory, bytes), "cudaMallocHost");
  return std::shared_ptr<uint8_t>(memory, [](uint8_t *p) { cudaFreeHost(p); });
}

std::string device_description(wc_backend backend, const EngineFlags &engine) {
  if (backend == WC_BACKEND_CPU || !have_device()) return "cpu";
  const std::vector<int> devices = listed_devices(engine);
  wc_device_info info;
  const std::string name = wc_device_info_get(&info, devices.front()) == WC_OK ? info.name : "gpu";
  return devices.size() == 1 ? name : std::to_string(devices.size()) + " x " + name;
}

}  // namespace warpcrypt::cli
