// What a process pays before its first GPU chunk, stage by stage, in one
// fresh process (run it several times: the first stage depends on whether
// the driver is already loaded on the machine). Prints one line per stage,
// in milliseconds:
//   count     wc_device_count: loading the driver and counting devices
//   context   cudaSetDevice and cudaFree(0): device 0's primary context
//   first     the first wc_encrypt of `MiB` MiB of pinned memory on the GPU
//             backend (aes-256-ctr): the lanes' pinned and device buffers,
//             the tables, the kernels' module, the copies and the kernel
//   second    the same call again: the steady cost of one call
//   host      cudaMallocHost of the buffers themselves, before the above
//   warpcrypt_start_bench [MiB]   (default 32)
// Or, with `contexts serial|parallel`, the primary context of every device,
// started one after another or each on a thread of its own at once: what a
// job on several devices pays before its first chunk either way.
//   warpcrypt_start_bench contexts serial|parallel
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "warpcrypt/warpcrypt.h"

namespace {

double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

bool start_context(int device) { return cudaSetDevice(device) == cudaSuccess && cudaFree(nullptr) == cudaSuccess; }

// Every device's primary context, one after another or all at once.
int start_contexts(bool parallel) {
  int devices = 0;
  if (wc_device_count(&devices) != WC_OK || devices == 0) {
    std::fprintf(stderr, "no CUDA device\n");
    return 1;
  }
  const auto start = std::chrono::steady_clock::now();
  std::vector<char> started(devices, 0);
  if (parallel) {
    std::vector<std::thread> threads;
    for (int d = 0; d < devices; ++d) threads.emplace_back([d, &started] { started[d] = start_context(d); });
    for (std::thread &thread : threads) thread.join();
  } else {
    for (int d = 0; d < devices; ++d) started[d] = start_context(d);
  }
  std::printf("contexts %8.1f ms  (%d devices, %s)\n", since(start), devices, parallel ? "parallel" : "serial");
  for (char ok : started) {
    if (!ok) return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc > 2 && std::strcmp(argv[1], "contexts") == 0) return start_contexts(std::strcmp(argv[2], "parallel") == 0);
  const size_t bytes = (argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 32) << 20;
  auto start = std::chrono::steady_clock::now();
  int devices = 0;
  if (wc_device_count(&devices) != WC_OK || devices == 0) {
    std::fprintf(stderr, "no CUDA device\n");
    return 1;
  }
  std::printf("count    %8.1f ms\n", since(start));
  start = std::chrono::steady_clock::now();
  if (cudaSetDevice(0) != cudaSuccess || cudaFree(nullptr) != cudaSuccess) return 1;
  std::printf("context  %8.1f ms\n", since(start));
  start = std::chrono::steady_clock::now();
  uint8_t *in = nullptr;
  uint8_t *out = nullptr;
  if (cudaMallocHost(&in, bytes) != cudaSuccess || cudaMallocHost(&out, bytes) != cudaSuccess) return 1;
  std::printf("host     %8.1f ms  (%zu MiB twice)\n", since(start), bytes >> 20);
  const std::vector<uint8_t> key(32, 7);
  const std::vector<uint8_t> iv(16, 9);
  wc_options options;
  wc_options_init(&options);
  options.backend = WC_BACKEND_GPU;
  const wc_cipher *cipher = wc_cipher_by_name("aes-256-ctr");
  for (const char *stage : {"first", "second"}) {
    start = std::chrono::steady_clock::now();
    size_t written = 0;
    if (wc_encrypt(&options, cipher, out, bytes, &written, key.data(), key.size(), iv.data(), iv.size(), in,
                   bytes) != WC_OK) {
      return 1;
    }
    std::printf("%-8s %8.1f ms\n", stage, since(start));
  }
  cudaFreeHost(in);
  cudaFreeHost(out);
  return 0;
}
