// What a loader written in C++ could reach moving a page-cached file to GPUs:
// reader threads pread the file into page-locked slots, and each reader
// copies the slot it filled to its device on a stream of its own, two slots
// a reader so that a read overlaps the copy before it. No cipher and no
// Python: the bound under warpcrypt.safetensors' GPU loads, measured for
// slots of 256 KiB to 16 MiB. The loader's Python pipeline cannot issue
// small slots fast enough (bench/multigpu_load_bounds.py: 1 MiB slots ran at
// 9 GB/s); here a slot costs one system call and one copy launch, so small
// slots show whether slots that stay in the last-level cache let the copy
// engines read what the readers wrote from there, sparing host memory the
// round trip that bounds the loader (reads alone 66 GB/s, copies alone 109,
// both together 44 on the H200 x2 machine).
//
//   warpcrypt_file_load_bench FILE_GIB [runs]
//
// Writes a FILE_GIB file of random bytes to /dev/shm, then for device 0
// alone and for every device (each device taking its own contiguous share
// of the file), and each slot size, prints one JSON object a line: the best
// and median GB/s of file bytes over `runs` loads (default 3).
#include <cuda_runtime.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

void check_cuda(cudaError_t error, const char *what) {
  if (error != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(error));
}

void read_fully(int fd, uint8_t *to, size_t len, uint64_t offset) {
  for (size_t done = 0; done < len;) {
    const ssize_t got = pread(fd, to + done, len - done, static_cast<off_t>(offset + done));
    if (got <= 0) throw std::runtime_error("pread failed or the file ended");
    done += static_cast<size_t>(got);
  }
}

// One reader: two page-locked slots, a stream and an event a slot, on its
// device; it claims the next slot's worth of its device's share, reads it
// and queues its copy.
class Reader {
 public:
  Reader(int device, size_t slot_bytes) : device_(device), slot_bytes_(slot_bytes) {
    check_cuda(cudaSetDevice(device), "cudaSetDevice");
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    for (int i = 0; i < 2; ++i) {
      check_cuda(cudaMallocHost(&slots_[i], slot_bytes), "cudaMallocHost");
      check_cuda(cudaEventCreateWithFlags(&copied_[i], cudaEventDisableTiming), "cudaEventCreate");
    }
  }
  ~Reader() {
    cudaSetDevice(device_);
    for (int i = 0; i < 2; ++i) {
      cudaEventDestroy(copied_[i]);
      cudaFreeHost(slots_[i]);
    }
    cudaStreamDestroy(stream_);
  }
  Reader(const Reader &) = delete;
  Reader &operator=(const Reader &) = delete;

  // Loads slots of [share_begin, share_end) of the file, claimed through
  // `next`, into `target` (the share's device memory).
  void run(int fd, std::atomic<uint64_t> &next, uint64_t share_begin, uint64_t share_end, uint8_t *target) {
    check_cuda(cudaSetDevice(device_), "cudaSetDevice");
    for (unsigned turn = 0;; ++turn) {
      const uint64_t at = next.fetch_add(slot_bytes_);
      if (at >= share_end - share_begin) break;
      const size_t len = static_cast<size_t>(std::min<uint64_t>(slot_bytes_, share_end - share_begin - at));
      const int slot = static_cast<int>(turn % 2);
      check_cuda(cudaEventSynchronize(copied_[slot]), "cudaEventSynchronize");
      read_fully(fd, slots_[slot], len, share_begin + at);
      check_cuda(cudaMemcpyAsync(target + at, slots_[slot], len, cudaMemcpyHostToDevice, stream_), "upload");
      check_cuda(cudaEventRecord(copied_[slot], stream_), "cudaEventRecord");
    }
    check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }

 private:
  int device_;
  size_t slot_bytes_;
  cudaStream_t stream_ = nullptr;
  uint8_t *slots_[2] = {};
  cudaEvent_t copied_[2] = {};
};

void measure(const char *path, uint64_t size, int devices, unsigned readers_per_device, size_t slot_bytes,
             unsigned runs) {
  const uint64_t share = (size / devices + slot_bytes - 1) / slot_bytes * slot_bytes;
  std::vector<uint8_t *> targets(devices);
  for (int d = 0; d < devices; ++d) {
    check_cuda(cudaSetDevice(d), "cudaSetDevice");
    check_cuda(cudaMalloc(&targets[d], share), "cudaMalloc");
  }
  std::vector<std::unique_ptr<Reader>> readers;
  for (int d = 0; d < devices; ++d) {
    for (unsigned r = 0; r < readers_per_device; ++r) readers.push_back(std::make_unique<Reader>(d, slot_bytes));
  }
  const int fd = open(path, O_RDONLY);
  if (fd < 0) throw std::runtime_error("cannot open the file");
  auto load = [&] {
    std::vector<std::atomic<uint64_t>> next(devices);
    for (auto &claimed : next) claimed = 0;
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (size_t i = 0; i < readers.size(); ++i) {
      const int d = static_cast<int>(i / readers_per_device);
      const uint64_t begin = std::min<uint64_t>(size, d * share);
      const uint64_t end = std::min<uint64_t>(size, begin + share);
      threads.emplace_back([&, i, d, begin, end] { readers[i]->run(fd, next[d], begin, end, targets[d]); });
    }
    for (std::thread &thread : threads) thread.join();
    return double(size) / std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / 1e9;
  };
  load();  // warm-up: the streams' first copies, the file's pages in the TLBs
  std::vector<double> gbps;
  for (unsigned r = 0; r < runs; ++r) gbps.push_back(load());
  std::sort(gbps.begin(), gbps.end());
  std::printf("{\"bench\": \"file_load\", \"devices\": %d, \"readers_per_device\": %u, \"slot_bytes\": %zu, "
              "\"file_bytes\": %llu, \"best_gbps\": %.2f, \"median_gbps\": %.2f}\n",
              devices, readers_per_device, slot_bytes, static_cast<unsigned long long>(size), gbps.back(),
              gbps[gbps.size() / 2]);
  std::fflush(stdout);
  close(fd);
  readers.clear();
  for (int d = 0; d < devices; ++d) {
    cudaSetDevice(d);
    cudaFree(targets[d]);
  }
}

// FILE_GIB of random bytes: a 64 MiB random block written over and over.
void write_file(const char *path, uint64_t size) {
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) throw std::runtime_error("cannot create the file");
  std::vector<uint8_t> block(size_t{64} << 20);
  std::mt19937_64 random(7);
  for (size_t i = 0; i < block.size(); i += 8) {
    const uint64_t word = random();
    std::copy_n(reinterpret_cast<const uint8_t *>(&word), 8, block.data() + i);
  }
  for (uint64_t done = 0; done < size;) {
    const size_t len = static_cast<size_t>(std::min<uint64_t>(block.size(), size - done));
    if (write(fd, block.data(), len) != static_cast<ssize_t>(len)) throw std::runtime_error("write failed");
    done += len;
  }
  close(fd);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE_GIB [runs]\n", argv[0]);
    return 2;
  }
  const auto size = static_cast<uint64_t>(std::atof(argv[1]) * double(uint64_t{1} << 30));
  const unsigned runs = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 3;
  const char *path = "/dev/shm/warpcrypt-file-load-bench";
  try {
    int devices = 0;
    check_cuda(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
    write_file(path, size);
    for (const size_t slot : {size_t{256} << 10, size_t{1} << 20, size_t{4} << 20, size_t{16} << 20}) {
      measure(path, size, 1, 16, slot, runs);
      if (devices > 1) measure(path, size, devices, 16, slot, runs);
    }
    measure(path, size, 1, 32, size_t{1} << 20, runs);
  } catch (const std::exception &error) {
    std::fprintf(stderr, "file_load_bench: %s\n", error.what());
    unlink(path);
    return 1;
  }
  unlink(path);
  return 0;
}
