// How many threads "every core" (threads = 0) means for this process. A
// container or a batch system hands a process a share of a machine in two
// ways, and hardware_concurrency() sees neither: an affinity mask (taskset,
// cpusets) and a CPU quota of its cgroup (docker --cpus, Kubernetes limits).
// Running more threads than that share only makes them wait for each other.
#pragma once

#include <optional>
#include <string>

namespace warpcrypt {

// The CPUs this process may run on, capped by its cgroup's CPU quota
// (rounded up); at least 1. Read once: the answer is a process-wide default.
unsigned usable_cpus();

// The CPU quota of the cgroup this process is in, in whole CPUs rounded up,
// or nothing where none is set. cgroup v2 (cpu.max) and v1
// (cpu.cfs_quota_us / cpu.cfs_period_us); the tightest limit on the way from
// the process's cgroup up to the hierarchy's root counts. Every path is read
// under `root` ("/" for the running system), so that tests can hand it a
// tree of their own.
std::optional<unsigned> cgroup_cpu_limit(const std::string &root);

}  // namespace warpcrypt
