// The scheduler's late lanes (engine/lane_scheduler.h), with lanes that only
// sleep, timed on a wall clock so that their sleep stands for work: late
// lanes that would start after the job ends are never started, lanes that
// make the job faster stay, lanes that make it slower leave and give the
// paused lanes their cores back, a verdict spares the next job its trial,
// a context's short calls start them and try them on a whole call, a
// failing start fails the job, and while their devices are counted beside
// the job the other lanes run alone. Timed on their threads' user time, the
// sleeping lanes are lanes that wait, and late lanes never start. Every unit
// runs exactly once whatever the lanes do.
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "engine/lane_scheduler.h"

namespace warpcrypt::engine {
namespace {

using std::chrono::microseconds;

constexpr uint64_t kUnitBytes = 1 << 20;

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A job of `units` units on `early` lanes taking `early_cost` each and, if
// `late` has lanes, late lanes taking `late_cost`.
struct SleepJob {
  size_t units;
  size_t early;
  microseconds early_cost;
  microseconds late_cost;
  std::vector<std::atomic<int>> runs;  // per unit
  std::atomic<size_t> late_units{0};
  std::atomic<int> starts{0};
  microseconds start_cost{0};  // what late lanes' start takes, as a device's does

  SleepJob(size_t unit_count, size_t early_lanes, microseconds early_unit, microseconds late_unit)
      : units(unit_count), early(early_lanes), early_cost(early_unit), late_cost(late_unit), runs(unit_count) {}

  wc_status run(LateLanes *late, JobMonitor &monitor) {
    run_lanes_indexed(early, units, monitor, [&](size_t lane, size_t first, size_t count) {
      const bool is_late = late != nullptr && lane >= late->first;
      for (size_t unit = first; unit < first + count; ++unit) {
        std::this_thread::sleep_for(is_late ? late_cost : early_cost);
        runs[unit].fetch_add(1);
        monitor.advance(is_late ? WC_BACKEND_GPU : WC_BACKEND_CPU, kUnitBytes);
      }
      if (is_late) late_units.fetch_add(count);
      return WC_OK;
    }, late);
    return monitor.status();
  }

  LateLanes late_lanes(size_t count, size_t displaces, double start_seconds, std::atomic<LateVerdict> *verdict,
                       wc_status start_status = WC_OK) {
    LateLanes late;
    late.first = early;
    late.count = count;
    late.displaces = displaces;
    late.claim_units = 2;
    late.start_seconds = start_seconds;
    late.verdict = verdict;
    late.lane_clock = wall_seconds;
    late.start = [this, start_status] {
      starts.fetch_add(1);
      std::this_thread::sleep_for(start_cost);
      return start_status;
    };
    return late;
  }

  void expect_every_unit_once() const {
    for (size_t unit = 0; unit < units; ++unit) ASSERT_EQ(runs[unit].load(), 1) << "unit " << unit;
  }

  // Runs the job `calls` times on the same late lanes, as a context's calls
  // (LateLanes::calls), each unit once per call; their start costs what
  // `late` says until they have started, then nothing, as LaneSet::late
  // gives it. Returns the units the late lanes ran in each call.
  std::vector<size_t> run_calls(LateLanes &late, int calls) {
    const double cold_start_seconds = late.start_seconds;
    std::vector<size_t> late_units_per_call;
    for (int call = 0; call < calls; ++call) {
      for (std::atomic<int> &unit_runs : runs) unit_runs.store(0);
      late_units.store(0);
      late.start_seconds = starts.load() > 0 ? 0 : cold_start_seconds;
      JobMonitor monitor(nullptr, units * kUnitBytes);
      EXPECT_EQ(run(&late, monitor), WC_OK);
      expect_every_unit_once();
      late_units_per_call.push_back(late_units.load());
    }
    return late_units_per_call;
  }

  // Runs the job to its end with `late`, each unit once, and checks that the
  // late lanes were never started: no start, no unit, no verdict.
  void expect_late_lanes_never_started(LateLanes &late, const std::atomic<LateVerdict> &verdict) {
    JobMonitor monitor(nullptr, units * kUnitBytes);
    ASSERT_EQ(run(&late, monitor), WC_OK);
    expect_every_unit_once();
    EXPECT_EQ(starts.load(), 0);
    EXPECT_EQ(late_units.load(), 0u);
    EXPECT_EQ(verdict.load(), LateVerdict::untried);
  }
};

TEST(LateLanes, AreNotStartedWhenTheJobEndsBeforeTheirStart) {
  SleepJob job(200, 2, microseconds(100), microseconds(10));
  std::atomic<LateVerdict> verdict{LateVerdict::untried};
  LateLanes late = job.late_lanes(2, 0, /*start_seconds=*/5.0, &verdict);
  job.expect_late_lanes_never_started(late, verdict);
}

TEST(LateLanes, AreNotStartedWhereTheOtherLanesWait) {
  // The job of the next test, whose late lanes start and stay, but its lanes
  // are timed on their user time: sleeping, they wait (on a pipe, say), and
  // lanes that add computing power cannot speed the job. Their start costs
  // 20 ms here, far less than the job's 600 ms of waiting but more than
  // the user time a sanitizer's bookkeeping gives its units (under TSan it
  // once made them look worth a start at 1 ms).
  SleepJob job(600, 1, microseconds(1000), microseconds(50));
  std::atomic<LateVerdict> verdict{LateVerdict::untried};
  LateLanes late = job.late_lanes(2, 0, 0.02, &verdict);
  late.lane_clock = thread_user_seconds;
  job.expect_late_lanes_never_started(late, verdict);
}

TEST(LateLanes, TheLaneClockCountsComputingNotWaitingNorTheKernelsCopies) {
  const double slept_from = thread_user_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_LT(thread_user_seconds() - slept_from, 0.01);
  // 100 ms of the kernel copying one file in memory into another, as a
  // lane's reads and writes have it copy: the kernel's time, which late
  // lanes cannot take over. (copy_file_range, not pread: a sanitizer's
  // pread marks the buffer written, in user space.)
  const int from = memfd_create("lane-clock-from", 0);
  const int to = memfd_create("lane-clock-to", 0);
  ASSERT_GE(from, 0);
  ASSERT_GE(to, 0);
  const std::vector<uint8_t> piece(1 << 20, 1);
  ASSERT_EQ(pwrite(from, piece.data(), piece.size(), 0), static_cast<ssize_t>(piece.size()));
  const double copied_from = thread_user_seconds();
  for (const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
       std::chrono::steady_clock::now() < end;) {
    off_t in = 0;
    off_t out = 0;
    ASSERT_EQ(copy_file_range(from, &in, to, &out, piece.size(), 0), static_cast<ssize_t>(piece.size()));
  }
  close(from);
  close(to);
  EXPECT_LT(thread_user_seconds() - copied_from, 0.03);
  // Computing, the clock advances: 20 ms of it are reached well within the
  // wall-clock limit even on a loaded machine.
  const double worked_from = thread_user_seconds();
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  volatile uint64_t sink = 0;
  while (thread_user_seconds() - worked_from < 0.02 && std::chrono::steady_clock::now() < limit) sink = sink + 1;
  EXPECT_GE(thread_user_seconds() - worked_from, 0.02);
}

TEST(LateLanes, StayWhereTheJobRunsFasterWithThem) {
  // One lane at 1 ms a unit, two late lanes at 50 us. Their start takes
  // 200 ms, as a device's does, so that the trial and the window before it
  // last some 26 ms each: with a start of 1 ms they lasted 5 ms, and on the
  // CI machine, running other tests on both cores, a trial whose late lanes
  // were kept off a core for part of those 5 ms once judged them not worth
  // keeping.
  SleepJob job(1000, 1, microseconds(1000), microseconds(50));
  job.start_cost = std::chrono::milliseconds(200);
  std::atomic<LateVerdict> verdict{LateVerdict::untried};
  LateLanes late = job.late_lanes(2, 0, 0.2, &verdict);
  JobMonitor monitor(nullptr, job.units * kUnitBytes);
  ASSERT_EQ(job.run(&late, monitor), WC_OK);
  job.expect_every_unit_once();
  EXPECT_EQ(job.starts.load(), 1);
  EXPECT_EQ(verdict.load(), LateVerdict::stay);
  EXPECT_GT(job.late_units.load(), job.units / 2) << "the fast lanes did most of the work";
}

TEST(LateLanes, LeaveWhereTheJobRunsSlowerAndThePausedLanesResume) {
  // Two lanes at 4 ms a unit; on trial, one of them pauses for a late lane
  // at 80 ms a unit: the job runs at about half its rate, so the late lane
  // leaves, and the paused lane must come back for the job to end. Their
  // start takes 200 ms, as a device's does, so that the rate before the
  // trial is measured over an eighth of that (some 6 units), not over the
  // 5 ms the scheduler's shortest window is: over 5 ms, a loaded 2-core
  // machine that woke the sleeping lanes late caught one unit or none, and
  // the trial looked faster.
  SleepJob job(400, 2, microseconds(4000), microseconds(80000));
  job.start_cost = std::chrono::milliseconds(200);
  std::atomic<LateVerdict> verdict{LateVerdict::untried};
  LateLanes late = job.late_lanes(1, 1, 0.2, &verdict);
  JobMonitor monitor(nullptr, job.units * kUnitBytes);
  ASSERT_EQ(job.run(&late, monitor), WC_OK);
  job.expect_every_unit_once();
  EXPECT_EQ(job.starts.load(), 1);
  EXPECT_EQ(verdict.load(), LateVerdict::leave);
  EXPECT_LT(job.late_units.load(), job.units / 10);
}

TEST(LateLanes, AVerdictToLeaveSparesTheNextJobTheirStart) {
  SleepJob job(200, 2, microseconds(500), microseconds(10));
  std::atomic<LateVerdict> verdict{LateVerdict::leave};
  LateLanes late = job.late_lanes(2, 1, 0.0, &verdict);
  JobMonitor monitor(nullptr, job.units * kUnitBytes);
  ASSERT_EQ(job.run(&late, monitor), WC_OK);
  job.expect_every_unit_once();
  EXPECT_EQ(job.starts.load(), 0);
  EXPECT_EQ(job.late_units.load(), 0u);
}

TEST(LateLanes, AVerdictToStayJoinsAtOnceWhenTheyStartForFree) {
  SleepJob job(400, 1, microseconds(1000), microseconds(50));
  std::atomic<LateVerdict> verdict{LateVerdict::stay};
  LateLanes late = job.late_lanes(2, 0, 0.0, &verdict);
  JobMonitor monitor(nullptr, job.units * kUnitBytes);
  ASSERT_EQ(job.run(&late, monitor), WC_OK);
  job.expect_every_unit_once();
  EXPECT_EQ(job.starts.load(), 1);
  EXPECT_GT(job.late_units.load(), job.units * 3 / 4);
}

TEST(LateLanes, AContextsShortCallsStartThemAndTryThemOnAWholeCall) {
  // Calls of some 12 ms: too short for a start of 50 ms, and, at the
  // scout's second window (10 ms), for a trial in the call. Once the context
  // has run longer than the start, a call starts them; the next takes them
  // from its start on trial, runs far faster, and they stay for the rest.
  SleepJob job(12, 1, microseconds(1000), microseconds(50));
  std::atomic<LateVerdict> verdict{LateVerdict::untried};
  LateLanes late = job.late_lanes(2, 0, 0.05, &verdict);
  const std::vector<size_t> late_units = job.run_calls(late, 12);
  EXPECT_EQ(verdict.load(), LateVerdict::stay);
  EXPECT_EQ(late_units.front(), 0u) << "the first call cannot pay for their start";
  EXPECT_GT(late_units.back(), job.units / 2) << "the fast lanes did most of the last call";
}

TEST(LateLanes, AWholeCallOnTrialThatRunsSlowerSendsThemAway) {
  // As above, but a late lane takes 20 ms a unit and displaces one of the two
  // other lanes: the call on trial runs at about half the context's rate.
  SleepJob job(24, 2, microseconds(1000), microseconds(20000));
  std::atomic<LateVerdict> verdict{LateVerdict::untried};
  LateLanes late = job.late_lanes(1, 1, 0.05, &verdict);
  const std::vector<size_t> late_units = job.run_calls(late, 12);
  EXPECT_EQ(verdict.load(), LateVerdict::leave);
  EXPECT_EQ(late_units.back(), 0u);
}

TEST(LateLanes, LanesThatCannotRunTheWorkNeverJoinAndTheJobSucceeds) {
  SleepJob job(300, 2, microseconds(500), microseconds(10));
  std::atomic<LateVerdict> verdict{LateVerdict::untried};
  LateLanes late = job.late_lanes(2, 1, 0.001, &verdict, WC_ERR_BACKEND_UNAVAILABLE);
  JobMonitor monitor(nullptr, job.units * kUnitBytes);
  ASSERT_EQ(job.run(&late, monitor), WC_OK);
  job.expect_every_unit_once();
  EXPECT_EQ(job.starts.load(), 1);
  EXPECT_EQ(job.late_units.load(), 0u);
}

TEST(LateLanes, AFailingStartFailsTheJob) {
  SleepJob job(300, 2, microseconds(500), microseconds(10));
  std::atomic<LateVerdict> verdict{LateVerdict::untried};
  LateLanes late = job.late_lanes(2, 1, 0.001, &verdict, WC_ERR_DEVICE);
  JobMonitor monitor(nullptr, job.units * kUnitBytes);
  EXPECT_EQ(job.run(&late, monitor), WC_ERR_DEVICE);
  EXPECT_EQ(job.late_units.load(), 0u);
}

TEST(LateLanes, AJobOfUnknownSizeStartsThemOnceItHasRunAsLongAsTheirStart) {
  // A stream: no total. It runs some 150 ms, so lanes that start in 20 ms
  // start and, being faster, stay.
  std::atomic<size_t> next{0};
  constexpr size_t kUnits = 300;
  std::atomic<int> starts{0};
  std::atomic<size_t> late_units{0};
  std::atomic<LateVerdict> verdict{LateVerdict::untried};
  LateLanes late;
  late.first = 1;
  late.count = 2;
  late.start_seconds = 0.02;
  late.verdict = &verdict;
  late.lane_clock = wall_seconds;
  late.start = [&] {
    starts.fetch_add(1);
    return WC_OK;
  };
  JobMonitor monitor(nullptr, 0);
  run_lanes(1, monitor, [&](size_t lane, bool *finished) {
    const size_t unit = next.fetch_add(1);
    *finished = unit >= kUnits;
    if (*finished) return WC_OK;
    std::this_thread::sleep_for(lane >= late.first ? microseconds(50) : microseconds(1000));
    if (lane >= late.first) late_units.fetch_add(1);
    monitor.advance(WC_BACKEND_CPU, kUnitBytes);
    return WC_OK;
  }, &late);
  EXPECT_EQ(monitor.status(), WC_OK);
  EXPECT_EQ(starts.load(), 1);
  EXPECT_EQ(verdict.load(), LateVerdict::stay);
  EXPECT_GT(late_units.load(), 0u);
}

// LateLanes::counted for a job whose late lanes' devices are counted beside
// it: false until `delay` has passed, then `on_count` (which sets the count,
// or fails the job as a check that finds no device does), then true. Notes
// the job's progress at the count.
struct CountBeside {
  std::chrono::steady_clock::time_point at;
  std::function<void()> on_count;
  JobMonitor *monitor;
  uint64_t bytes_before = 0;
  bool counted = false;

  CountBeside(microseconds delay, JobMonitor &job_monitor, std::function<void()> count)
      : at(std::chrono::steady_clock::now() + delay), on_count(std::move(count)), monitor(&job_monitor) {}

  bool operator()() {
    if (!counted && std::chrono::steady_clock::now() >= at) {
      bytes_before = monitor->bytes_done();
      on_count();
      counted = true;
    }
    return counted;
  }
};

TEST(LateLanes, WhileTheirDevicesAreCountedTheOtherLanesRunAlone) {
  // The count takes 100 ms, some 50 of the other lane's units (at least
  // 20, on a loaded machine that wakes the sleeping lane late); then two
  // late lanes, far faster, join and stay.
  SleepJob job(400, 1, microseconds(2000), microseconds(50));
  std::atomic<LateVerdict> verdict{LateVerdict::stay};
  LateLanes late = job.late_lanes(0, 0, 0.0, &verdict);
  JobMonitor monitor(nullptr, job.units * kUnitBytes);
  auto count = std::make_shared<CountBeside>(microseconds(100000), monitor, [&late] { late.count = 2; });
  late.counted = [count] { return (*count)(); };
  ASSERT_EQ(job.run(&late, monitor), WC_OK);
  job.expect_every_unit_once();
  EXPECT_GE(count->bytes_before, 20 * kUnitBytes) << "the other lane waited for the count";
  EXPECT_EQ(job.starts.load(), 1);
  EXPECT_GT(job.late_units.load(), job.units / 2);
}

TEST(LateLanes, ACountThatFindsNoDeviceStopsTheJob) {
  // Two lanes of 1 ms units would take 200 ms; the count fails the job at
  // 20 ms, as check_devices does where there is no device.
  SleepJob job(400, 2, microseconds(1000), microseconds(50));
  std::atomic<LateVerdict> verdict{LateVerdict::untried};
  LateLanes late = job.late_lanes(0, 0, 0.0, &verdict);
  JobMonitor monitor(nullptr, job.units * kUnitBytes);
  auto count =
      std::make_shared<CountBeside>(microseconds(20000), monitor, [&monitor] { monitor.fail(WC_ERR_NO_DEVICE); });
  late.counted = [count] { return (*count)(); };
  EXPECT_EQ(job.run(&late, monitor), WC_ERR_NO_DEVICE);
  EXPECT_EQ(job.starts.load(), 0);
  EXPECT_EQ(job.late_units.load(), 0u);
  EXPECT_LT(monitor.bytes_done(), job.units * kUnitBytes / 2) << "the job ran on after the count failed it";
}

TEST(LateLanes, AJobThatEndsBeforeTheCountNeverWaitsForIt) {
  SleepJob job(40, 2, microseconds(1000), microseconds(50));
  std::atomic<LateVerdict> verdict{LateVerdict::stay};
  LateLanes late = job.late_lanes(0, 0, 0.0, &verdict);
  late.counted = [] { return false; };
  JobMonitor monitor(nullptr, job.units * kUnitBytes);
  const auto began = std::chrono::steady_clock::now();
  ASSERT_EQ(job.run(&late, monitor), WC_OK);
  job.expect_every_unit_once();
  EXPECT_EQ(job.starts.load(), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(2));
}

}  // namespace
}  // namespace warpcrypt::engine
