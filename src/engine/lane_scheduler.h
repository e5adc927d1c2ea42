// The engine's one scheduler. A job has lanes, each of which runs one unit
// of work at a time: a cipher lane (engine/lane_set.h) runs chunks of a
// plain cipher, a sealed file's lane runs windows of AEAD chunks. Every lane
// runs on a thread of its own and claims the next unit from one queue, so
// fast lanes do more of the work and no static split has to be right. The
// scheduler knows lanes only by number and units only by what a lane's step
// does: the caller keeps both, and the engine knows no file format.
//
// Units are claimed by index where the input's size is known (a buffer, a
// regular file), or read in order from a stream (OrderedReader,
// engine/endpoint.h) inside a step.
//
// Some lanes join late (LateLanes): the GPU lanes of a hybrid job (placed
// and built by engine/late_gpu_lanes.h, for cipher and AEAD lanes alike), whose
// device takes a quarter of a second to start, longer than many jobs take
// on every core, and which slow the CPU lanes down where the data must be
// staged through host memory (docs/lab-notes/performance-history.md). The other lanes start
// at once. The late ones are started only when the job's work left, at its
// rate so far, outlasts their start and their trial (a job of unknown size
// is expected to last as long again as it has run) and the other lanes are
// busy computing; then they run the trial, and stay only if the job runs
// faster with them than it did without. The verdict, kept for the next job
// of the same kind, spares it the trial. Late lanes add computing power
// only: a job whose lanes mostly wait, on a pipe, a disk or the kernel's
// lock on a file being written, or spend their time in the kernel's copies,
// never starts them.
//
// A job whose late lanes' devices are still being counted when it starts
// (LateLanes::counted) runs on the other lanes alone until the count is in:
// where the driver's list of GPUs need not be CUDA's, counting starts the
// CUDA driver, which takes longer than many jobs.
//
// The calls of one context share their late lanes (LateLanes::calls) and
// are one job of unknown size: a context's later calls are expected to last
// as long again as its earlier ones, so calls too short to pay for the start
// alone start the late lanes once the context has run long enough. A call
// too short to hold a trial is then tried whole: once the late lanes are
// built, the next calls take them from their start, and they stay only if
// those calls run faster than the context's calls without them did.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>

#include "engine/job_monitor.h"

namespace warpcrypt::engine {

// One step of lane `lane`: claims a unit and runs it, or sets *finished
// when there is none left.
using LaneStep = std::function<wc_status(size_t lane, bool *finished)>;
// Runs the units [first, first + count) on lane `lane`, as one piece.
using IndexedUnits = std::function<wc_status(size_t lane, size_t first, size_t count)>;

// The calling thread's time computing in user space so far, in seconds:
// the work late lanes can take over. Its time in the kernel (copies to and
// from the page cache, a contended lock on the file being written) stays
// with the job, whichever lane computes.
double thread_user_seconds();

// What the trial of a kind of work found, kept for the next job of that kind
// so that it need not try again.
enum class LateVerdict : int { untried, stay, leave };

struct LateLanes {
  size_t first = 0;  // the late lanes' numbers: [first, first + count)
  size_t count = 0;
  // The last `displaces` of the other lanes pause while the late lanes take
  // part: they share the cores with the late lanes' threads.
  size_t displaces = 0;
  // Where the late lanes' devices are still being counted when the job
  // starts (a descriptor job counts them beside its first work:
  // DeviceCheck, engine/placement.h): false until count and displaces are
  // set. The other lanes run alone until then. Null where they are known.
  std::function<bool()> counted;
  // Units a late lane claims at once where units are claimed by index.
  size_t claim_units = 1;
  // What `start` is expected to take.
  double start_seconds = 0;
  // The calls these late lanes were offered so far: every call of a context
  // (LaneCipher), one call for a job. The scheduler keeps them.
  struct Calls {
    double seconds = 0;  // how long they ran
    // The fastest of those the late lanes took no part in, in bytes a
    // second: the first calls pay for starting the lanes' threads, and any
    // call may share its cores with something else.
    double best_rate_without = 0;
    // The calls they took whole on trial so far, judged together.
    size_t trial_calls = 0;
    double trial_seconds = 0;
    uint64_t trial_bytes = 0;
  };
  Calls calls;
  // Builds the late lanes. WC_ERR_BACKEND_UNAVAILABLE: they cannot run this
  // work and never join; any other failure fails the job.
  std::function<wc_status()> start;
  // The verdict of the trials of this kind of work: read before the job,
  // written by its trial. Never null.
  std::atomic<LateVerdict> *verdict = nullptr;
  // How the other lanes' work is timed, to see whether they are busy
  // computing: the calling thread's time in user space, in seconds. Tests
  // whose lanes stand for work by sleeping give a wall clock.
  double (*lane_clock)() = thread_user_seconds;
};

// Each of `lanes` lanes, on its own thread, calls step(lane, &finished)
// until a call sets `finished`, `monitor` stops, or a call fails, which
// stops the job through `monitor` (a std::bad_alloc as
// WC_ERR_OUT_OF_MEMORY). `late`, where given, adds its lanes after these as
// the header says, judged by `monitor`'s byte counts. Returns when every
// lane has stopped.
void run_lanes(size_t lanes, JobMonitor &monitor, const LaneStep &step, LateLanes *late = nullptr);

// run_lanes over the units [0, count), each claimed once: one at a time by
// the first lanes, late->claim_units at a time by the late ones. Only the
// first min(lanes, count) lanes start (the others would find nothing to
// claim; a call of one unit runs on the caller's thread), and late lanes
// only where there is more than one unit.
void run_lanes_indexed(size_t lanes, size_t count, JobMonitor &monitor, const IndexedUnits &work,
                       LateLanes *late = nullptr);

}  // namespace warpcrypt::engine
