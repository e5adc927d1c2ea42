#include "core/thread_pool.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>

namespace warpcrypt {

// One parallel_for call. Workers and the caller claim indices with next; the
// last to finish a task wakes the caller.
struct ThreadPool::Job {
  const std::function<void(size_t)> *task;
  size_t count;
  unsigned helpers_wanted;  // pool threads that may join, besides the caller
  unsigned helpers_joined = 0;
  std::atomic<size_t> next{0};
  std::atomic<size_t> finished{0};
  std::mutex done_mutex;
  std::condition_variable done;
};

ThreadPool &ThreadPool::instance() {
  static ThreadPool pool;
  return pool;
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread &t : workers_) t.join();
}

void ThreadPool::ensure_workers(unsigned count) {
  // Called with mutex_ held.
  while (workers_.size() < count) workers_.emplace_back([this] { worker_loop(); });
}

void ThreadPool::run_tasks(Job &job) {
  for (size_t i = job.next.fetch_add(1); i < job.count; i = job.next.fetch_add(1)) {
    (*job.task)(i);
    if (job.finished.fetch_add(1) + 1 == job.count) {
      std::lock_guard lock(job.done_mutex);
      job.done.notify_all();
    }
  }
}

void ThreadPool::worker_loop() {
  // Named so that `top -H`, a debugger and the tests can tell the library's
  // threads from the host program's and the CUDA driver's.
  pthread_setname_np(pthread_self(), kWorkerName);
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (stopping_) return;
      job = jobs_.front();
      // A job leaves the queue once enough helpers have joined it.
      if (++job->helpers_joined >= job->helpers_wanted) jobs_.pop_front();
    }
    run_tasks(*job);
  }
}

void ThreadPool::parallel_for(size_t count, unsigned workers,
                              const std::function<void(size_t)> &task) {
  if (count == 0) return;
  const unsigned helpers =
      static_cast<unsigned>(std::min<size_t>(count, std::max(1u, workers)) - 1);
  if (helpers == 0) {
    for (size_t i = 0; i < count; ++i) task(i);
    return;
  }
  auto job = std::make_shared<Job>();
  job->task = &task;
  job->count = count;
  job->helpers_wanted = helpers;
  {
    std::lock_guard lock(mutex_);
    ensure_workers(std::max<unsigned>(helpers, static_cast<unsigned>(workers_.size())));
    jobs_.push_back(job);
  }
  wake_.notify_all();
  run_tasks(*job);
  {
    std::unique_lock lock(job->done_mutex);
    job->done.wait(lock, [&] { return job->finished.load() == job->count; });
  }
  // Helpers that never got to the job must not find it later: it refers to a
  // task object that is about to go away.
  std::lock_guard lock(mutex_);
  std::erase(jobs_, job);
}

void ThreadPool::copy(void *target, const void *source, size_t len, unsigned workers) {
  auto *to = static_cast<uint8_t *>(target);
  const auto *from = static_cast<const uint8_t *>(source);
  parallel_for((len + kCopyPiece - 1) / kCopyPiece, workers, [&](size_t piece) {
    const size_t at = piece * kCopyPiece;
    std::memcpy(to + at, from + at, std::min(kCopyPiece, len - at));
  });
}

}  // namespace warpcrypt
