// The least time an age payload can take on this machine's cores, without
// warpcrypt: OpenSSL's ChaCha20-Poly1305 sealing FILE in age's 64 KiB chunks
// on N threads, each claiming a window of whole chunks at a time, with the
// plaintext taken three ways:
//   memory  every window sealed from one buffer per thread, filled once and
//           kept in that core's cache: the AEAD's own bound, no reading;
//   pread   each window read into the thread's buffer first, as the engine
//           does: the AEAD plus the kernel's copy out of the page cache;
//   mmap    each window sealed straight from a read-only mapping of FILE,
//           mapped and unmapped within the pass: no copy, but page faults
//           and cold reads.
// Nothing is written anywhere. For 1 and all cores, windows of 256 KiB and
// 1 MiB: the best of five passes over the whole file, wall-clock seconds
// from the threads' start to their end (no process start), GB/s, and the
// pass's user and system seconds. FILE should sit in the page cache (tmpfs).
//
//   c++ -O2 -std=c++20 -o age_floor_bench bench/age_floor_bench.cpp -lcrypto -pthread
//   ./age_floor_bench /dev/shm/plain-1g
#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace {

constexpr size_t kChunk = size_t{64} << 10;  // age's payload chunk
constexpr size_t kTag = 16;
constexpr int kPasses = 5;

enum class Source { memory, pread, mmap };

[[noreturn]] void die(const char *what) {
  std::perror(what);
  std::exit(1);
}

struct Input {
  int fd = -1;
  size_t size = 0;
  const uint8_t *mapping = nullptr;  // Source::mmap only
};

double seconds(const timeval &t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; }

struct Pass {
  double wall = 0;
  double user = 0;
  double system = 0;
};

// One thread's share: windows claimed from `next` until none is left, each
// chunk sealed with its age nonce (11-byte counter, last-chunk flag).
void seal_windows(const Input &in, Source source, size_t window, std::atomic<size_t> &next) {
  const size_t windows = (in.size + window - 1) / window;
  std::unique_ptr<uint8_t[]> plain(new uint8_t[window]);
  std::unique_ptr<uint8_t[]> sealed(new uint8_t[window + window / kChunk * kTag]);
  if (source == Source::memory && pread(in.fd, plain.get(), window, 0) != static_cast<ssize_t>(window)) die("pread");
  const uint8_t key[32] = {};
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
  if (ctx == nullptr || EVP_EncryptInit_ex(ctx, EVP_chacha20_poly1305(), nullptr, key, nullptr) != 1) die("EVP");
  for (size_t w = next.fetch_add(1); w < windows; w = next.fetch_add(1)) {
    const size_t offset = w * window;
    const size_t len = std::min(window, in.size - offset);
    const uint8_t *from = plain.get();
    if (source == Source::mmap) from = in.mapping + offset;
    for (size_t got = 0; source == Source::pread && got < len;) {
      const ssize_t n = pread(in.fd, plain.get() + got, len - got, static_cast<off_t>(offset + got));
      if (n <= 0) die("pread");
      got += static_cast<size_t>(n);
    }
    for (size_t at = 0; at < len; at += kChunk) {
      const size_t piece = std::min(kChunk, len - at);
      const uint64_t index = (offset + at) / kChunk;
      uint8_t nonce[12] = {};
      for (int i = 0; i < 8; ++i) nonce[10 - i] = static_cast<uint8_t>(index >> (8 * i));
      nonce[11] = offset + at + piece == in.size ? 1 : 0;
      uint8_t *out = sealed.get() + at / kChunk * (kChunk + kTag);
      int out_len = 0;
      if (EVP_EncryptInit_ex(ctx, nullptr, nullptr, nullptr, nonce) != 1 ||
          EVP_EncryptUpdate(ctx, out, &out_len, from + at, static_cast<int>(piece)) != 1 ||
          EVP_EncryptFinal_ex(ctx, out + piece, &out_len) != 1 ||
          EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, kTag, out + piece) != 1) {
        die("EVP");
      }
    }
  }
  EVP_CIPHER_CTX_free(ctx);
}

// A pass maps the file afresh for Source::mmap, and unmaps it before the
// clock stops, so that it pays what a program reading that way would.
Pass run_pass(Input in, Source source, size_t window, unsigned threads) {
  rusage before{};
  rusage after{};
  getrusage(RUSAGE_SELF, &before);
  const auto start = std::chrono::steady_clock::now();
  if (source == Source::mmap) {
    void *mapping = mmap(nullptr, in.size, PROT_READ, MAP_SHARED, in.fd, 0);
    if (mapping == MAP_FAILED) die("mmap");
    in.mapping = static_cast<const uint8_t *>(mapping);
  }
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back([&] { seal_windows(in, source, window, next); });
  for (std::thread &thread : pool) thread.join();
  if (source == Source::mmap) munmap(const_cast<uint8_t *>(in.mapping), in.size);
  Pass pass;
  pass.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  getrusage(RUSAGE_SELF, &after);
  pass.user = seconds(after.ru_utime) - seconds(before.ru_utime);
  pass.system = seconds(after.ru_stime) - seconds(before.ru_stime);
  return pass;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FILE\n", argv[0]);
    return 2;
  }
  Input in;
  in.fd = open(argv[1], O_RDONLY | O_CLOEXEC);
  struct stat status{};
  if (in.fd < 0 || fstat(in.fd, &status) != 0) die(argv[1]);
  in.size = static_cast<size_t>(status.st_size);
  if (in.size < (size_t{1} << 20)) {
    std::fprintf(stderr, "%s: give it at least 1 MiB\n", argv[1]);
    return 2;
  }
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const struct {
    Source source;
    const char *name;
  } sources[] = {{Source::memory, "memory"}, {Source::pread, "pread"}, {Source::mmap, "mmap"}};
  std::printf("%zu bytes, %zu-byte chunks; best of %d passes\n", in.size, kChunk, kPasses);
  for (const unsigned threads : {1u, cores}) {
    for (const size_t window : {size_t{256} << 10, size_t{1} << 20}) {
      for (const auto &[source, name] : sources) {
        Pass best;
        for (int p = 0; p < kPasses; ++p) {
          const Pass pass = run_pass(in, source, window, threads);
          if (p == 0 || pass.wall < best.wall) best = pass;
        }
        std::printf("%2u threads  %4zu KiB windows  %-6s  %.4f s  %6.2f GB/s  user %.3f s  system %.3f s\n", threads,
                    window >> 10, name, best.wall, static_cast<double>(in.size) / best.wall / 1e9, best.user,
                    best.system);
      }
    }
  }
  return 0;
}
