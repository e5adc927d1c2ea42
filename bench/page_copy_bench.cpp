// The kernel's copy between the page cache and a user buffer, against how
// far apart the two sit within a 4 KiB page: the measurement behind
// engine/io_buffer.h. For each distance d, 1 MiB preads of FILE into a buffer
// d bytes further into its page than the file offset (the destination d bytes
// past the source), and 1 MiB pwrites to SCRATCH from a buffer d bytes before
// the file offset (again the destination d bytes past the source); the best
// of seven passes over the first 256 MiB, in GB/s. FILE should sit in the
// page cache (tmpfs, or read once); SCRATCH is overwritten, then left there.
//
//   c++ -O2 -std=c++20 -o page_copy_bench bench/page_copy_bench.cpp
//   ./page_copy_bench /dev/shm/random.bin /dev/shm/scratch.bin
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

namespace {

constexpr size_t kPage = 4096;
constexpr size_t kPiece = size_t{1} << 20;
constexpr size_t kSpan = size_t{256} << 20;
constexpr int kPasses = 7;

using Transfer = ssize_t (*)(int, void *, size_t, off_t);

// pwrite with pread's shape, so one loop times both.
ssize_t write_from(int fd, void *buffer, size_t len, off_t offset) { return pwrite(fd, buffer, len, offset); }

// GB/s of the best pass moving kSpan bytes in kPiece pieces through `buffer`.
double best_rate(Transfer transfer, int fd, unsigned char *buffer) {
  double best = 0;
  for (int pass = 0; pass < kPasses; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    for (off_t at = 0; at < static_cast<off_t>(kSpan); at += kPiece) {
      if (transfer(fd, buffer, kPiece, at) != static_cast<ssize_t>(kPiece)) {
        std::perror("transfer");
        std::exit(1);
      }
    }
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    best = std::max(best, kSpan / took.count() / 1e9);
  }
  return best;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s FILE SCRATCH (FILE at least 256 MiB, in the page cache)\n", argv[0]);
    return 2;
  }
  const int in = open(argv[1], O_RDONLY);
  const int out = open(argv[2], O_RDWR | O_CREAT, 0600);
  if (in < 0 || out < 0) {
    std::perror("open");
    return 1;
  }
  auto *memory = static_cast<unsigned char *>(::operator new(kPiece + 2 * kPage, std::align_val_t{kPage}));
  std::memset(memory, 1, kPiece + 2 * kPage);
  // An untimed first round creates the scratch file's pages: every timed
  // pass overwrites, as the reads read pages that exist.
  best_rate(write_from, out, memory);
  std::printf("%6s %12s %12s\n", "d", "pread GB/s", "pwrite GB/s");
  for (const size_t d : {0, 1, 4, 8, 15, 16, 24, 31, 32, 48, 64, 184, 2048, 4064, 4080, 4095}) {
    // File offsets are page-aligned: a read's buffer starts d bytes into its
    // page, a write's d bytes before the end of one.
    const double read = best_rate(pread, in, memory + d);
    const double written = best_rate(write_from, out, memory + (kPage - d) % kPage);
    std::printf("%6zu %12.2f %12.2f\n", d, read, written);
  }
  ::operator delete(memory, std::align_val_t{kPage});
  return 0;
}
