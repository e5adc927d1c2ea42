// A process-wide pool of worker threads: the engine's lanes (cipher chunks,
// sealed-file windows and the GPU AEAD's staging alike) and the CPU
// backend's AEAD batches all run on it. It lives in core, below both, so
// that neither reaches into the other. Threads start on first use and live
// until exit, so a stream of updates does not pay thread creation on every
// call.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace warpcrypt {

class ThreadPool {
 public:
  static ThreadPool &instance();

  // The name every pool thread carries (Linux allows 15 characters).
  static constexpr const char *kWorkerName = "warpcrypt-pool";

  // Runs task(i) for every i in [0, count) on at most `workers` threads, the
  // caller among them, and returns when all have finished. Safe to call from
  // several threads at once.
  void parallel_for(size_t count, unsigned workers, const std::function<void(size_t)> &task);

  // Copies `len` bytes from `source` to `target` (which must not overlap)
  // in pieces of kCopyPiece on up to `workers` threads: one thread copies
  // pageable memory at a fraction of the rate the memory system allows.
  static constexpr size_t kCopyPiece = size_t{1} << 20;
  void copy(void *target, const void *source, size_t len, unsigned workers);

  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

 private:
  struct Job;
  ThreadPool() = default;
  void ensure_workers(unsigned count);
  void worker_loop();
  static void run_tasks(Job &job);

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Job>> jobs_;
  std::vector<std::thread> workers_;
  bool stopping_ = false;
};

}  // namespace warpcrypt
