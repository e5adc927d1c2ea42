// Device-resident kernel measurements the `speed` command does not make:
//
//   batch    AEAD over many small messages in one call (the packet and
//            tensor-shard workload: 1 KiB; age's payload chunks: 64 KiB)
//            against one large message of the same total size, through a
//            wc_aead_key so the per-key constants are computed once: as a
//            list of messages, and as one strided batch (wc_aead_strided).
//   spread   each production kernel timed over a fixed size with all-zero
//            and with random keys and data, interleaved run by run, so a
//            data- or key-dependent time would show as a gap between the two
//            medians larger than the run-to-run spread (docs/security.md).
//   copies   no cipher: the bytes of pinned host memory up to the GPU and
//            back in the engine's pieces (8 MiB on four streams per
//            device), on device 0 alone and on every device at once, one
//            host thread and buffer per device: the PCIe and host-memory
//            limit the pinned-memory figures of `speed` work under.
//
// Every figure is the median of --runs timed runs after a warm-up, timed with
// CUDA events around the queued calls (copies: the host's clock around every
// device's). One JSON object per line on stdout.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "warpcrypt/warpcrypt.h"

namespace {

void check_cuda(cudaError_t error, const char *what) {
  if (error != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(error));
}
void check(wc_status status, const std::string &what) {
  if (status != WC_OK) throw std::runtime_error(what + ": " + wc_status_string(status));
}

struct DeviceBuffer {
  explicit DeviceBuffer(size_t bytes) { check_cuda(cudaMalloc(&data, std::max<size_t>(bytes, 1)), "cudaMalloc"); }
  ~DeviceBuffer() { cudaFree(data); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  uint8_t *data = nullptr;
};

std::vector<uint8_t> random_bytes(size_t n, std::mt19937_64 &rng) {
  std::vector<uint8_t> bytes(n);
  for (size_t i = 0; i < n; i += 8) {
    const uint64_t word = rng();
    std::memcpy(bytes.data() + i, &word, std::min<size_t>(8, n - i));
  }
  return bytes;
}

// Queues one operation per call of `queue` and returns each run's seconds,
// after a warm-up run (module load, shared-memory carveout, allocator) when
// asked for one.
template <class Queue>
std::vector<double> time_runs(cudaStream_t stream, unsigned runs, bool warm_up, Queue &&queue) {
  cudaEvent_t start, stop;
  check_cuda(cudaEventCreate(&start), "cudaEventCreate");
  check_cuda(cudaEventCreate(&stop), "cudaEventCreate");
  if (warm_up) {
    queue();
    check_cuda(cudaStreamSynchronize(stream), "warm-up");
  }
  std::vector<double> seconds;
  for (unsigned r = 0; r < runs; ++r) {
    check_cuda(cudaEventRecord(start, stream), "cudaEventRecord");
    queue();
    check_cuda(cudaEventRecord(stop, stream), "cudaEventRecord");
    check_cuda(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    seconds.push_back(ms / 1e3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return seconds;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// The messages of a batch: `count` slices of `size` bytes of one buffer,
// sealed in place, each with its own nonce and tag slot.
struct Batch {
  Batch(size_t count, size_t size, size_t nonce_len, uint8_t *data, uint8_t *tags, const uint8_t *nonces)
      : messages(count) {
    for (size_t i = 0; i < count; ++i) {
      messages[i] = wc_aead_message{data + i * size, data + i * size, size, nonces + i * nonce_len, nonce_len,
                                    nullptr, 0, tags + i * WC_AEAD_MAX_TAG_LEN};
    }
  }
  std::vector<wc_aead_message> messages;
};

void measure_batch(const wc_aead *aead, size_t total, size_t message_bytes, unsigned runs, cudaStream_t stream) {
  std::mt19937_64 rng(1);
  const std::vector<uint8_t> key = random_bytes(wc_aead_key_len(aead), rng);
  wc_options options{};
  wc_options_init(&options);
  options.backend = WC_BACKEND_GPU;
  wc_aead_key *keyed = nullptr;
  check(wc_aead_key_new(&keyed, &options, aead, key.data(), key.size()), "wc_aead_key_new");
  const size_t nonce_len = wc_aead_nonce_len(aead);
  const size_t count = total / message_bytes;
  DeviceBuffer data(total), tags(count * WC_AEAD_MAX_TAG_LEN);
  // Nonces (and AAD) are read by the host when the call is queued; data and
  // tags live on the device.
  const std::vector<uint8_t> nonces = random_bytes(count * nonce_len, rng);
  check_cuda(cudaMemset(data.data, 0x5a, total), "cudaMemset");
  check_cuda(cudaDeviceSynchronize(), "cudaMemset");
  for (const size_t size : {total, message_bytes}) {
    const Batch batch(total / size, size, nonce_len, data.data, tags.data, nonces.data());
    const std::vector<double> seconds = time_runs(stream, runs, true, [&] {
      check(wc_aead_key_seal_device_async(keyed, batch.messages.data(), batch.messages.size(), WC_AEAD_MAX_TAG_LEN,
                                          stream),
            "wc_aead_key_seal_device_async");
    });
    std::printf("{\"bench\":\"batch\",\"aead\":\"%s\",\"messages\":%zu,\"message_bytes\":%zu,\"seconds\":%.6g,"
                "\"gb_per_s\":%.1f}\n",
                wc_aead_name(aead), batch.messages.size(), size, median(seconds), total / median(seconds) / 1e9);
  }
  // The same short messages as one strided batch: nonces in device memory,
  // nothing prepared per message on the host.
  DeviceBuffer device_nonces(nonces.size());
  check_cuda(cudaMemcpy(device_nonces.data, nonces.data(), nonces.size(), cudaMemcpyHostToDevice), "cudaMemcpy");
  const wc_aead_strided strided{data.data,          data.data, message_bytes, message_bytes, device_nonces.data,
                                nonce_len,          tags.data, WC_AEAD_MAX_TAG_LEN,          count};
  const std::vector<double> seconds = time_runs(stream, runs, true, [&] {
    check(wc_aead_key_seal_strided_device_async(keyed, &strided, WC_AEAD_MAX_TAG_LEN, stream),
          "wc_aead_key_seal_strided_device_async");
  });
  std::printf("{\"bench\":\"strided\",\"aead\":\"%s\",\"messages\":%zu,\"message_bytes\":%zu,\"seconds\":%.6g,"
              "\"gb_per_s\":%.1f}\n",
              wc_aead_name(aead), count, message_bytes, median(seconds), total / median(seconds) / 1e9);
  wc_aead_key_free(keyed);
}

// Times `name` (a cipher or an AEAD) over `bytes` of device memory, runs
// alternating between zero and random keys and data, each kind first on
// every other run so that neither gains from going second.
void measure_spread(const std::string &name, size_t bytes, unsigned runs, cudaStream_t stream) {
  std::mt19937_64 rng(2);
  const wc_cipher *cipher = wc_cipher_by_name(name.c_str());
  const wc_aead *aead = wc_aead_by_name(name.c_str());
  if (cipher == nullptr && aead == nullptr) throw std::runtime_error("unknown cipher " + name);
  const size_t key_len = cipher ? wc_cipher_key_len(cipher) : wc_aead_key_len(aead);
  const size_t iv_len = cipher ? wc_cipher_iv_len(cipher) : wc_aead_nonce_len(aead);
  DeviceBuffer data(bytes), tag(WC_AEAD_MAX_TAG_LEN);
  // Both inputs' data wait on the device, so that every run is prepared the
  // same way, by a device-to-device copy: a host upload before one kind of
  // run only would leave the GPU idle long enough to lower its clock.
  DeviceBuffer zero_data(bytes), random_data(bytes);
  const std::vector<uint8_t> random_host = random_bytes(bytes, rng);
  check_cuda(cudaMemcpy(random_data.data, random_host.data(), bytes, cudaMemcpyHostToDevice), "data");
  check_cuda(cudaMemset(zero_data.data, 0, bytes), "data");
  check_cuda(cudaDeviceSynchronize(), "data");
  struct Input {
    const char *label;
    std::vector<uint8_t> key, iv;
    bool random_data;
    std::vector<double> seconds;
  };
  Input inputs[2] = {{"zero", std::vector<uint8_t>(key_len), std::vector<uint8_t>(iv_len), false, {}},
                     {"random", random_bytes(key_len, rng), random_bytes(iv_len, rng), true, {}}};
  // In place, a run's output is neither zero nor the chosen random bytes, so
  // every run starts from fresh data and is timed without a warm-up of its
  // own: one untimed run of each input warms up first.
  for (unsigned r = 0; r < runs + 1; ++r) {
    for (unsigned i = 0; i < 2; ++i) {
      Input &input = inputs[(r + i) % 2];
      check_cuda(cudaMemcpyAsync(data.data, (input.random_data ? random_data : zero_data).data, bytes,
                                 cudaMemcpyDeviceToDevice, stream),
                 "data");
      const std::vector<double> one = time_runs(stream, 1, false, [&] {
        if (cipher != nullptr) {
          check(wc_encrypt_device_async(cipher, data.data, data.data, bytes, input.key.data(), key_len,
                                        input.iv.data(), iv_len, 0, stream),
                "wc_encrypt_device_async");
        } else {
          check(wc_aead_seal_device_async(aead, data.data, tag.data, WC_AEAD_MAX_TAG_LEN, input.key.data(), key_len,
                                          input.iv.data(), iv_len, nullptr, 0, data.data, bytes, stream),
                "wc_aead_seal_device_async");
        }
      });
      if (r != 0) input.seconds.push_back(one.front());
    }
  }
  for (const Input &input : inputs) {
    const auto [low, high] = std::minmax_element(input.seconds.begin(), input.seconds.end());
    std::printf("{\"bench\":\"spread\",\"kernel\":\"%s\",\"input\":\"%s\",\"bytes\":%zu,\"runs\":%u,"
                "\"median_us\":%.2f,\"min_us\":%.2f,\"max_us\":%.2f}\n",
                name.c_str(), input.label, bytes, runs, median(input.seconds) * 1e6, *low * 1e6, *high * 1e6);
  }
}

}  // namespace

// One device's part of a copy run: its pinned buffer, streams and device
// pieces, made and used with the device current on the thread that runs it.
class CopyLane {
 public:
  static constexpr size_t kPiece = size_t{8} << 20;
  static constexpr int kStreams = 4;

  CopyLane(int device, size_t bytes) : device_(device), bytes_(bytes) {
    check_cuda(cudaSetDevice(device), "cudaSetDevice");
    check_cuda(cudaMallocHost(&host_, bytes), "cudaMallocHost");
    std::memset(host_, 0x5a, bytes);
    for (int i = 0; i < kStreams; ++i) {
      check_cuda(cudaStreamCreateWithFlags(&streams_[i], cudaStreamNonBlocking), "cudaStreamCreate");
      check_cuda(cudaMalloc(&pieces_[i], kPiece), "cudaMalloc");
    }
  }
  ~CopyLane() {
    cudaSetDevice(device_);
    for (int i = 0; i < kStreams; ++i) {
      cudaFree(pieces_[i]);
      cudaStreamDestroy(streams_[i]);
    }
    cudaFreeHost(host_);
  }
  CopyLane(const CopyLane &) = delete;
  CopyLane &operator=(const CopyLane &) = delete;

  // Every piece up and back down, the streams taken in turn, then waits.
  void run() {
    check_cuda(cudaSetDevice(device_), "cudaSetDevice");
    for (size_t at = 0, turn = 0; at < bytes_; at += kPiece, ++turn) {
      const size_t len = std::min(kPiece, bytes_ - at);
      cudaStream_t stream = streams_[turn % kStreams];
      uint8_t *piece = pieces_[turn % kStreams];
      check_cuda(cudaMemcpyAsync(piece, host_ + at, len, cudaMemcpyHostToDevice, stream), "upload");
      check_cuda(cudaMemcpyAsync(host_ + at, piece, len, cudaMemcpyDeviceToHost, stream), "download");
    }
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  }

 private:
  int device_;
  size_t bytes_;
  uint8_t *host_ = nullptr;
  cudaStream_t streams_[kStreams] = {};
  uint8_t *pieces_[kStreams] = {};
};

void measure_copies(int devices, size_t bytes_per_device, unsigned runs) {
  std::vector<std::unique_ptr<CopyLane>> lanes;
  for (int device = 0; device < devices; ++device) lanes.push_back(std::make_unique<CopyLane>(device, bytes_per_device));
  auto run_all = [&lanes] {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (auto &lane : lanes) threads.emplace_back([&lane] { lane->run(); });
    for (std::thread &thread : threads) thread.join();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  run_all();
  std::vector<double> gbps;
  for (unsigned r = 0; r < runs; ++r) gbps.push_back(double(bytes_per_device) * devices / run_all() / 1e9);
  std::printf("{\"mode\": \"copies\", \"devices\": %d, \"bytes_per_device\": %zu, \"median_gbps\": %.2f, "
              "\"min_gbps\": %.2f, \"max_gbps\": %.2f}\n",
              devices, bytes_per_device, median(gbps), *std::min_element(gbps.begin(), gbps.end()),
              *std::max_element(gbps.begin(), gbps.end()));
  std::fflush(stdout);
}

int main(int argc, char **argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  const unsigned runs = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 11;
  try {
    if (mode != "batch" && mode != "spread" && mode != "copies") {
      std::fprintf(stderr, "usage: %s batch|spread|copies [runs]\n", argv[0]);
      return 2;
    }
    int devices = 0;
    if (wc_device_count(&devices) != WC_OK || devices == 0) throw std::runtime_error("no CUDA device");
    if (mode == "copies") {
      measure_copies(1, size_t{1} << 30, runs);
      if (devices > 1) measure_copies(devices, size_t{1} << 30, runs);
      return 0;
    }
    cudaStream_t stream;
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    if (mode == "batch") {
      for (const char *name : {"aes-128-gcm", "aes-256-gcm", "chacha20-poly1305"}) {
        measure_batch(wc_aead_by_name(name), size_t{1} << 30, 1024, runs, stream);
      }
      // age's payload: ChaCha20-Poly1305 over 64 KiB chunks.
      measure_batch(wc_aead_by_name("chacha20-poly1305"), size_t{1} << 30, size_t{64} << 10, runs, stream);
    } else {
      for (const char *name : {"aes-128-ctr", "aes-256-ctr", "aes-128-gcm", "aes-256-gcm", "chacha20",
                               "chacha20-poly1305"}) {
        measure_spread(name, size_t{64} << 20, runs, stream);
      }
    }
    cudaStreamDestroy(stream);
  } catch (const std::exception &error) {
    std::fprintf(stderr, "kernel_bench: %s\n", error.what());
    return 1;
  }
  return 0;
}
