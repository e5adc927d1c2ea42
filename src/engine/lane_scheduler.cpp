#include "engine/lane_scheduler.h"

#include <algorithm>
#include <atomic>
#include <new>

#include "core/thread_pool.h"

namespace warpcrypt::engine {

void run_lanes(size_t lanes, JobMonitor &monitor, const LaneStep &step) {
  // One pool task per lane, and as many threads: a lane's state (staging
  // buffers, a CUDA stream) is only ever touched by the thread running it.
  ThreadPool::instance().parallel_for(lanes, static_cast<unsigned>(lanes), [&](size_t lane) {
    bool finished = false;
    while (!finished && !monitor.stopped()) {
      wc_status status = WC_OK;
      try {
        status = step(lane, &finished);
      } catch (const std::bad_alloc &) {
        status = WC_ERR_OUT_OF_MEMORY;
      }
      if (status != WC_OK) monitor.fail(status);
    }
  });
}

void run_lanes_indexed(size_t lanes, size_t count, JobMonitor &monitor, const IndexedUnit &work) {
  std::atomic<size_t> next{0};
  run_lanes(std::min(lanes, count), monitor, [&](size_t lane, bool *finished) {
    const size_t unit = next.fetch_add(1);
    *finished = unit >= count;
    return *finished ? WC_OK : work(lane, unit);
  });
}

}  // namespace warpcrypt::engine
