#include "engine/lane_scheduler.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <condition_variable>
#include <mutex>
#include <new>

#include "core/thread_pool.h"

namespace warpcrypt::engine {
namespace {

using Clock = std::chrono::steady_clock;

// The trial lasts at least this long, an eighth of the time the job had run
// when the late lanes were ready, and this many steps per late lane, so that
// the late lanes' pipelines (a GPU lane's copies and kernels) have filled.
// The other lanes' rate is measured over as long just before they join:
// earlier, the job was still ramping up, or sharing a core with the start.
constexpr auto kTrialTime = std::chrono::milliseconds(5);
constexpr size_t kTrialSteps = 4;
// The late lanes stay where the job runs at least this much faster with
// them. On the H100 machine (2026-11-27), trials on jobs bound by a pipe or
// by writing a file, where the GPU lanes can add nothing, came out up to 9 %
// apart, either way.
constexpr double kStayGain = 1.10;
// A context's calls that take the late lanes whole on trial are judged
// together, this many of them: on the H100 machine (2026-11-27), 1 GiB calls
// of one process on one backend ran up to 25 % apart.
constexpr size_t kTrialCalls = 3;
// The late lanes start only where the other lanes spent at least this share
// of the latest window computing in user space. Below it, the job waits on
// its input or its output, or on the kernel's copies, which more computing
// power cannot speed: on the H100 machine (2026-11-27), hybrid aes-256-ctr
// from a `cat` pipe, which delivers 1.3-1.7 GB/s, started its device, tried
// it and sent it away, and took 12 % longer than the CPU lanes alone; and
// into a file in /dev/shm, whose writes the kernel takes one at a time, its
// lanes were busy on a core but in the kernel, and a trial sent the device
// away again (2.25 GB/s before it, 1.88 with it).
constexpr double kBusyShare = 0.5;
// How often the scout looks at the job's progress before the start; how
// often a waiting lane looks for a stop, the one change nothing notifies it
// of (as OrderedWriter does). Lanes that wait do not wake the busy ones'
// cores a thousand times a second.
constexpr auto kPoll = std::chrono::milliseconds(1);
constexpr auto kStopPoll = std::chrono::milliseconds(20);

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }
double milliseconds(Clock::duration d) { return 1e3 * seconds(d); }

// WARPCRYPT_HYBRID_TRACE=1 prints the late lanes' start, trial and verdict
// on stderr: why a hybrid job did or did not use its GPU.
void trace(const char *format, ...) {
  static const bool on = [] {
    const char *value = std::getenv("WARPCRYPT_HYBRID_TRACE");
    return value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0;
  }();
  if (!on) return;
  std::va_list arguments;
  va_start(arguments, format);
  std::fputs("warpcrypt: late lanes: ", stderr);
  std::vfprintf(stderr, format, arguments);
  std::fputc('\n', stderr);
  va_end(arguments);
}

class LaneRun {
 public:
  LaneRun(size_t lanes, JobMonitor &monitor, const LaneStep &step, LateLanes *late)
      : lanes_(lanes), monitor_(monitor), step_(step), late_(late), scouting_(late != nullptr) {}

  void run() {
    const Clock::time_point began = Clock::now();
    const uint64_t done_before = monitor_.bytes_done();
    if (late_ != nullptr && late_->counted && !late_->counted()) run_while_counting();
    if (!ended_ && !monitor_.stopped()) {
      const size_t late_count = late_ != nullptr ? late_->count : 0;
      // One pool task per lane, and as many threads: a lane's state (staging
      // buffers, a CUDA stream) is only ever touched by the thread running it.
      const size_t tasks = lanes_ + late_count;
      ThreadPool::instance().parallel_for(tasks, static_cast<unsigned>(tasks), [&](size_t task) {
        if (task < lanes_) {
          run_lane(task);
        } else {
          run_late_lane(task - lanes_);
        }
      });
    }
    if (late_ != nullptr) record_call(Clock::now() - began, monitor_.bytes_done() - done_before);
  }

 private:
  // The late lanes' phases: waiting to start, on trial, staying, or gone
  // (they left after their trial, or never joined).
  enum class Phase { waiting, trial, staying, gone };

  // The other lanes alone, while the late lanes' devices are counted (their
  // number sets the late lanes' threads): a watcher ends their run, between
  // two steps, once the count is in, and run() goes on with every lane. A
  // count that finds no device has failed the job through the monitor.
  void run_while_counting() {
    std::atomic<bool> counted{false};
    ThreadPool::instance().parallel_for(lanes_ + 1, static_cast<unsigned>(lanes_ + 1), [&](size_t task) {
      if (task < lanes_) {
        while (!counted.load(std::memory_order_relaxed) && step(task)) {
        }
        return;
      }
      std::unique_lock lock(mutex_);
      while (!ended_ && !monitor_.stopped()) {
        lock.unlock();
        const bool known = late_->counted();
        lock.lock();
        if (known) break;
        changed_.wait_for(lock, kPoll, [&] { return ended_; });
      }
      counted.store(true, std::memory_order_relaxed);
    });
  }

  // One step of `lane`; false once the lane must stop. The other lanes'
  // steps are timed on late_->lane_clock while the scout waits to start.
  bool step(size_t lane) {
    const bool timed = lane < lanes_ && scouting_.load(std::memory_order_relaxed);
    const double from = timed ? late_->lane_clock() : 0;
    bool finished = false;
    wc_status status = WC_OK;
    try {
      status = step_(lane, &finished);
    } catch (const std::bad_alloc &) {
      status = WC_ERR_OUT_OF_MEMORY;
    }
    if (timed) busy_ns_.fetch_add(static_cast<uint64_t>(1e9 * (late_->lane_clock() - from)));
    if (status != WC_OK) monitor_.fail(status);
    if (finished || status != WC_OK) {
      std::lock_guard lock(mutex_);
      ended_ = true;
      changed_.notify_all();
    }
    return !finished && !monitor_.stopped();
  }

  // Waits, polling for a stop, until `ready` (called with the lock held).
  template <class Ready>
  void wait_until(std::unique_lock<std::mutex> &lock, Ready ready) {
    while (!ready() && !monitor_.stopped()) changed_.wait_for(lock, kStopPoll);
  }

  bool late_lanes_running() const { return phase_ == Phase::trial || phase_ == Phase::staying; }

  void run_lane(size_t lane) {
    const bool displaced = late_ != nullptr && lane + late_->displaces >= lanes_;
    for (;;) {
      if (displaced) {
        std::unique_lock lock(mutex_);
        wait_until(lock, [&] { return ended_ || !late_lanes_running(); });
        if (ended_) return;
      }
      if (!step(lane)) return;
    }
  }

  void run_late_lane(size_t index) {
    if (index == 0) scout();
    {
      std::unique_lock lock(mutex_);
      wait_until(lock, [&] { return ended_ || phase_ != Phase::waiting; });
    }
    const size_t lane = late_->first + index;
    for (;;) {
      {
        std::lock_guard lock(mutex_);
        if (ended_ || !late_lanes_running()) return;
      }
      if (!step(lane)) return;
      late_steps_.fetch_add(1);
      if (index == 0) judge();
    }
  }

  // The first late lane's thread: waits until starting the late lanes pays,
  // starts them, and lets them join, on trial unless an earlier trial of
  // this kind of work has judged.
  void scout() {
    const LateVerdict verdict = late_->verdict->load();
    if (verdict == LateVerdict::leave) {
      trace("not started: an earlier trial on this kind of work found that they do not pay");
      return set_phase(Phase::gone);
    }
    // A context's call once its late lanes are built, where no verdict is
    // known: they take part in the whole call, on trial (record_call).
    call_trial_ = verdict == LateVerdict::untried && late_->start_seconds == 0 && late_->calls.best_rate_without != 0;
    const bool trial_in_call = verdict == LateVerdict::untried && !call_trial_;
    started_ = window_from_ = Clock::now();
    window_done_ = monitor_.bytes_done();
    window_busy_ns_ = busy_ns_.load();
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        changed_.wait_for(lock, kPoll, [&] { return ended_; });
        if (ended_ || monitor_.stopped()) {
          if (busy_share_ < kBusyShare) {
            trace("not started: the other lanes computed %.0f %% of their time, waiting on the input, the "
                  "output or the kernel's copies, which they cannot speed",
                  100 * busy_share_);
          } else {
            trace("not started: the job ended before their start would pay");
          }
          return set_phase_locked(Phase::gone);
        }
      }
      if (start_pays(trial_in_call)) break;
    }
    trace("starting them at %.1f ms", milliseconds(Clock::now() - started_));
    const wc_status status = late_->start();
    if (status != WC_OK && status != WC_ERR_BACKEND_UNAVAILABLE) monitor_.fail(status);
    std::unique_lock lock(mutex_);
    if (status != WC_OK || ended_) return set_phase_locked(Phase::gone);
    trial_time_ = trial_time(Clock::now());
    if (trial_in_call) {
      const Clock::time_point from = Clock::now();
      const uint64_t done = monitor_.bytes_done();
      changed_.wait_for(lock, trial_time_, [&] { return ended_; });
      if (ended_) return set_phase_locked(Phase::gone);
      rate_before_ = static_cast<double>(monitor_.bytes_done() - done) / seconds(Clock::now() - from);
    }
    joined_ = Clock::now();
    done_at_join_ = monitor_.bytes_done();
    if (trial_in_call) {
      trace("joining at %.1f ms on trial; before them %.2f GB/s", milliseconds(joined_ - started_), rate_before_ / 1e9);
    } else if (call_trial_) {
      trace("joining at %.1f ms on trial for the whole call", milliseconds(joined_ - started_));
    } else {
      trace("joining at %.1f ms to stay: an earlier trial found that they pay", milliseconds(joined_ - started_));
    }
    set_phase_locked(trial_in_call ? Phase::trial : Phase::staying);
  }

  // Whether, in the latest window of kTrialTime, the other lanes were busy
  // (kBusyShare) and the job's work left, at the window's rate, outlasts the
  // late lanes' start and, for a trial in this call, three trial windows:
  // the rate before them, the trial, and a margin. So a trial never runs
  // into the job's end, where fewer lanes have work and the rates mean
  // nothing. The first window is not used: the lanes were still starting. A
  // job of unknown size is expected to last as long again as it has run, and
  // so are a context's later calls (calls.seconds).
  bool start_pays(bool trial_in_call) {
    if (!trial_in_call && late_->start_seconds == 0) return true;
    const Clock::time_point now = Clock::now();
    if (now - window_from_ < kTrialTime) return false;
    const uint64_t done = monitor_.bytes_done();
    const uint64_t busy_ns = busy_ns_.load();
    const double window = seconds(now - window_from_);
    const double rate = static_cast<double>(done - window_done_) / window;
    const bool first_window = window_from_ == started_;
    const double busy_share =
        1e-9 * static_cast<double>(busy_ns - window_busy_ns_) / (window * static_cast<double>(lanes_));
    window_from_ = now;
    window_done_ = done;
    window_busy_ns_ = busy_ns;
    if (first_window) return false;
    busy_share_ = busy_share;
    if (busy_share_ < kBusyShare) return false;
    const uint64_t total = monitor_.total();
    if (total != 0 && rate == 0) return false;
    const double left =
        total != 0 ? static_cast<double>(total - std::min(total, done)) / rate : seconds(now - started_);
    const double trial = trial_in_call ? 3 * seconds(trial_time(now)) : 0;
    const bool pays = left + late_->calls.seconds > late_->start_seconds + trial;
    if (pays) trace("the other lanes computed %.0f %% of the latest window", 100 * busy_share_);
    return pays;
  }

  // How long the trial and the window before it last, for late lanes that
  // join at `now`.
  Clock::duration trial_time(Clock::time_point now) const {
    return std::max<Clock::duration>(kTrialTime, (now - started_) / 8);
  }

  // After the scout's steps on trial: once the trial has run its length,
  // the late lanes stay if the job runs faster with them, else leave, and
  // the verdict is kept for the next job of this kind.
  void judge() {
    std::lock_guard lock(mutex_);
    const Clock::duration ran = Clock::now() - joined_;
    if (phase_ != Phase::trial || ran < trial_time_ || late_steps_.load() < kTrialSteps * late_->count) return;
    const double rate = static_cast<double>(monitor_.bytes_done() - done_at_join_) / seconds(ran);
    set_phase_locked(keep_verdict(rate, rate_before_) ? Phase::staying : Phase::gone);
  }

  // After the call, on the calling thread: its time counts towards the
  // start in the context's next calls; a call the late lanes took no part in
  // may be the fastest without them; once kTrialCalls calls have taken them
  // whole on trial, their rate is judged against the fastest without them,
  // and the verdict kept.
  void record_call(Clock::duration took, uint64_t bytes) {
    LateLanes::Calls &calls = late_->calls;
    calls.seconds += seconds(took);
    if (monitor_.status() != WC_OK) return;
    if (late_steps_.load() == 0) {
      calls.best_rate_without = std::max(calls.best_rate_without, static_cast<double>(bytes) / seconds(took));
    } else if (call_trial_) {
      calls.trial_seconds += seconds(took);
      calls.trial_bytes += bytes;
      if (++calls.trial_calls == kTrialCalls) {
        keep_verdict(static_cast<double>(calls.trial_bytes) / calls.trial_seconds, calls.best_rate_without);
      }
    }
  }

  // The verdict of a trial in which the job ran at `with` bytes a second,
  // against `without` before it, kept for the next jobs of this kind: true
  // where the late lanes stay.
  bool keep_verdict(double with, double without) {
    const bool stay = with > without * kStayGain;
    trace("with them %.2f GB/s, without them %.2f: they %s", with / 1e9, without / 1e9, stay ? "stay" : "leave");
    late_->verdict->store(stay ? LateVerdict::stay : LateVerdict::leave);
    return stay;
  }

  void set_phase(Phase phase) {
    std::lock_guard lock(mutex_);
    set_phase_locked(phase);
  }
  void set_phase_locked(Phase phase) {
    phase_ = phase;
    scouting_.store(phase == Phase::waiting, std::memory_order_relaxed);
    changed_.notify_all();
  }

  const size_t lanes_;
  JobMonitor &monitor_;
  const LaneStep &step_;
  LateLanes *late_;

  std::mutex mutex_;  // guards phase_, ended_ and what the scout measured
  std::condition_variable changed_;
  Phase phase_ = Phase::waiting;
  std::atomic<bool> scouting_;  // phase_ is waiting: the scout reads busy_ns_
  bool ended_ = false;  // a step found no work left, or failed
  bool call_trial_ = false;  // the late lanes take this whole call on trial
  std::atomic<size_t> late_steps_{0};
  Clock::time_point started_;
  Clock::time_point joined_;
  Clock::duration trial_time_{};
  std::atomic<uint64_t> busy_ns_{0};  // the other lanes' time computing in their steps, on late_->lane_clock
  Clock::time_point window_from_;     // the scout's latest window, before the start
  uint64_t window_done_ = 0;
  uint64_t window_busy_ns_ = 0;
  double busy_share_ = 1;  // of the other lanes' time, in the latest window
  uint64_t done_at_join_ = 0;
  double rate_before_ = 0;  // bytes per second before the late lanes joined
};

}  // namespace

double thread_user_seconds() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec) + 1e-6 * static_cast<double>(usage.ru_utime.tv_usec);
}

void run_lanes(size_t lanes, JobMonitor &monitor, const LaneStep &step, LateLanes *late) {
  const bool has_late = late != nullptr && (late->count != 0 || late->counted);
  LaneRun(lanes, monitor, step, has_late ? late : nullptr).run();
}

void run_lanes_indexed(size_t lanes, size_t count, JobMonitor &monitor, const IndexedUnits &work,
                       LateLanes *late) {
  std::atomic<size_t> next{0};
  LateLanes *joining = count > 1 ? late : nullptr;
  run_lanes(
      std::min(lanes, count), monitor,
      [&](size_t lane, bool *finished) {
        const size_t claim = joining != nullptr && lane >= joining->first ? joining->claim_units : 1;
        const size_t first = next.fetch_add(claim);
        *finished = first >= count;
        return *finished ? WC_OK : work(lane, first, std::min(claim, count - first));
      },
      joining);
}

}  // namespace warpcrypt::engine
