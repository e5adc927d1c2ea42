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
#pragma once

#include <cstddef>
#include <functional>

#include "engine/job_monitor.h"

namespace warpcrypt::engine {

// One step of lane `lane`: claims a unit and runs it, or sets *finished
// when there is none left.
using LaneStep = std::function<wc_status(size_t lane, bool *finished)>;
// Runs unit `unit` on lane `lane`.
using IndexedUnit = std::function<wc_status(size_t lane, size_t unit)>;

// Each of `lanes` lanes, on its own thread, calls step(lane, &finished)
// until a call sets `finished`, `monitor` stops, or a call fails, which
// stops the job through `monitor` (a std::bad_alloc as
// WC_ERR_OUT_OF_MEMORY). Returns when every lane has stopped.
void run_lanes(size_t lanes, JobMonitor &monitor, const LaneStep &step);

// run_lanes over the units [0, count), each claimed once. Only the first
// min(lanes, count) lanes start: the others would find nothing to claim,
// and a call of one unit runs on the caller's thread.
void run_lanes_indexed(size_t lanes, size_t count, JobMonitor &monitor, const IndexedUnit &work);

}  // namespace warpcrypt::engine
