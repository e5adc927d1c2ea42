// The device side of `warpcrypt speed`: device-resident buffers (on several
// devices at once, one host thread each) and page-locked host memory for the
// end-to-end figures, all through the library's C API (warpcrypt/device.h):
// the CLI links no CUDA of its own. Each device workload queues its calls on
// its device's default stream and is timed by the host's clock, from before
// the first call is queued until a read of one byte behind the last returns.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "cli_error.h"
#include "speed_workload.h"

namespace warpcrypt::cli {
namespace {

// Device memory of `device`, freed with the object.
class DeviceMemory {
 public:
  DeviceMemory(int device, size_t bytes) : device_(device) {
    void *memory = nullptr;
    check(wc_device_alloc_async(device, &memory, bytes, nullptr), "device memory for speed");
    data_ = static_cast<uint8_t *>(memory);
  }
  ~DeviceMemory() { (void)wc_device_free_async(device_, data_, nullptr); }
  DeviceMemory(const DeviceMemory &) = delete;
  DeviceMemory &operator=(const DeviceMemory &) = delete;
  uint8_t *data() const { return data_; }

 private:
  int device_;
  uint8_t *data_ = nullptr;
};

// What both device workloads share: a buffer of random-looking bytes in one
// device's memory, and operations queued on that device's default stream.
// The bytes are zeros encrypted once under a random key (aes-128-ctr), made
// on the device: a block mode's table lookups on all-equal blocks would
// never conflict, and run faster than on real data.
class TimedDeviceWorkload : public Workload {
 public:
  TimedDeviceWorkload(const WorkloadSpec &spec, int device)
      : spec_(spec), device_(device), buffer_(device, spec.bytes) {
    check(wc_device_clear_async(device, buffer_.data(), spec.bytes, nullptr), "clearing the device buffer");
    const wc_cipher *scrambler = wc_cipher_by_name("aes-128-ctr");
    std::vector<uint8_t> key(16);
    std::vector<uint8_t> iv(16);
    check(wc_random_bytes(key.data(), key.size()), "random key");
    check(wc_random_bytes(iv.data(), iv.size()), "random IV");
    check(wc_encrypt_device_async(scrambler, buffer_.data(), buffer_.data(), spec.bytes, key.data(), key.size(),
                                  iv.data(), iv.size(), 0, nullptr),
          "filling the device buffer");
    finish();
  }

  double time_operations(size_t operations) override {
    const auto start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < operations; ++i) queue_operation();
    finish();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

 protected:
  // Queues one operation on the device's default stream without waiting.
  virtual void queue_operation() = 0;

  const WorkloadSpec spec_;
  const int device_;
  DeviceMemory buffer_;

 private:
  // Returns once the stream has run everything queued so far.
  void finish() {
    uint8_t byte = 0;
    check(wc_device_read(device_, &byte, buffer_.data(), 1, nullptr), "waiting for the device");
  }
};

// The cipher in place on the buffer, one call per operation.
class DeviceWorkload final : public TimedDeviceWorkload {
 public:
  DeviceWorkload(const WorkloadSpec &spec, int device) : TimedDeviceWorkload(spec, device) {
    key_.resize(wc_cipher_key_len(spec.cipher));
    iv_.resize(wc_cipher_iv_len(spec.cipher));
    check(wc_random_bytes(key_.data(), key_.size()), "random key");
    check(wc_random_bytes(iv_.data(), iv_.size()), "random IV");
  }

 private:
  void queue_operation() override {
    const auto call = spec_.direction == WC_ENCRYPT ? wc_encrypt_device_async : wc_decrypt_device_async;
    check(call(spec_.cipher, buffer_.data(), buffer_.data(), spec_.bytes, key_.data(), key_.size(), iv_.data(),
               iv_.size(), 0, nullptr),
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
  DeviceAeadWorkload(const WorkloadSpec &spec, int device)
      : TimedDeviceWorkload(spec, device),
        keying_(make_aead_keying(spec.aead)),
        tag_and_verdict_(device, WC_AEAD_MAX_TAG_LEN + sizeof(int32_t)),
        opened_(device, spec.direction == WC_DECRYPT ? spec.bytes : 1) {
    if (spec.direction == WC_DECRYPT) seal();
  }

 private:
  void queue_operation() override {
    if (spec_.direction == WC_ENCRYPT) {
      seal();
      return;
    }
    check(wc_aead_open_device_async(spec_.aead, opened_.data(),
                                    reinterpret_cast<int32_t *>(tag_and_verdict_.data() + WC_AEAD_MAX_TAG_LEN),
                                    keying_.key.data(), keying_.key.size(), keying_.nonce.data(),
                                    keying_.nonce.size(), nullptr, 0, buffer_.data(), spec_.bytes,
                                    tag_and_verdict_.data(), WC_AEAD_MAX_TAG_LEN, nullptr),
          std::string("device open with ") + wc_aead_name(spec_.aead));
  }

  void seal() {
    check(wc_aead_seal_device_async(spec_.aead, buffer_.data(), tag_and_verdict_.data(), WC_AEAD_MAX_TAG_LEN,
                                    keying_.key.data(), keying_.key.size(), keying_.nonce.data(),
                                    keying_.nonce.size(), nullptr, 0, buffer_.data(), spec_.bytes, nullptr),
          std::string("device seal with ") + wc_aead_name(spec_.aead));
  }

  AeadKeying keying_;
  DeviceMemory tag_and_verdict_;
  DeviceMemory opened_;
};

// The same workload on several devices at once, one host thread each; a
// run's time is the host's clock from before the first thread starts until
// the last is done.
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

// What a request for device work says where there is none.
std::string no_device(const std::string &flag, const std::string &instead) {
  return flag + (wc_built_with_cuda() ? " needs a CUDA device; " : " needs a build with CUDA; ") + instead;
}

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
  if (spec.aead != nullptr) return std::make_unique<DeviceAeadWorkload>(spec, device);
  return std::make_unique<DeviceWorkload>(spec, device);
}

}  // namespace

std::unique_ptr<Workload> make_device_workload(const WorkloadSpec &spec) {
  if (!have_device()) {
    throw CliError(no_device("--resident device", "run without it to measure the CPU"), WC_KIND_NO_DEVICE);
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
    throw CliError(no_device("--memory pinned", "use --memory pageable"), WC_KIND_NO_DEVICE);
  }
  void *memory = nullptr;
  check(wc_host_alloc_pinned(&memory, bytes), "page-locked memory for speed");
  return std::shared_ptr<uint8_t>(static_cast<uint8_t *>(memory), [](uint8_t *p) { wc_host_free_pinned(p); });
}

std::string device_description(wc_backend backend, const EngineFlags &engine) {
  if (backend == WC_BACKEND_CPU || !have_device()) return "cpu";
  const std::vector<int> devices = listed_devices(engine);
  wc_device_info info;
  const std::string name = wc_device_info_get(&info, devices.front()) == WC_OK ? info.name : "gpu";
  return devices.size() == 1 ? name : std::to_string(devices.size()) + " x " + name;
}

}  // namespace warpcrypt::cli
