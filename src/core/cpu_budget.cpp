#include "core/cpu_budget.h"

#include <sched.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string_view>
#include <thread>
#include <vector>

namespace warpcrypt {
namespace {

struct Quota {
  long long quota_us;
  long long period_us;
};

std::optional<std::string> read_file(const std::string &path) {
  std::ifstream file(path);
  if (!file) return std::nullopt;
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// A cgroup v2 cpu.max file: "max 100000" (no limit) or "<quota> <period>".
std::optional<Quota> parse_cpu_max(const std::string &text) {
  std::istringstream in(text);
  std::string quota;
  long long period = 0;
  if (!(in >> quota >> period) || quota == "max" || period <= 0) return std::nullopt;
  try {
    const long long value = std::stoll(quota);
    if (value <= 0) return std::nullopt;
    return Quota{value, period};
  } catch (const std::exception &) {
    return std::nullopt;
  }
}

// cgroup v1: cpu.cfs_quota_us is -1 where no limit is set.
std::optional<Quota> read_cfs_quota(const std::string &folder) {
  const auto quota = read_file(folder + "/cpu.cfs_quota_us");
  const auto period = read_file(folder + "/cpu.cfs_period_us");
  if (!quota || !period) return std::nullopt;
  try {
    const long long q = std::stoll(*quota), p = std::stoll(*period);
    if (q <= 0 || p <= 0) return std::nullopt;
    return Quota{q, p};
  } catch (const std::exception &) {
    return std::nullopt;
  }
}

// `path` and each of its ancestors up to "/". Inside a container the cgroup
// named in /proc/self/cgroup is often the host's path to it while the
// container sees its own cgroup mounted as the root, so the leaf may not
// exist and the root holds the limit.
std::vector<std::string> path_and_ancestors(std::string path) {
  std::vector<std::string> paths;
  while (!path.empty() && path != "/") {
    paths.push_back(path);
    path.resize(path.rfind('/'));
  }
  paths.push_back("");
  return paths;
}

unsigned whole_cpus(const Quota &q) {
  return static_cast<unsigned>(std::max<long long>(1, (q.quota_us + q.period_us - 1) / q.period_us));
}

void tighten(std::optional<unsigned> &limit, const std::optional<Quota> &quota) {
  if (quota) limit = std::min(limit.value_or(~0u), whole_cpus(*quota));
}

}  // namespace

std::optional<unsigned> cgroup_cpu_limit(const std::string &root) {
  const auto membership = read_file(root + "/proc/self/cgroup");
  if (!membership) return std::nullopt;
  std::optional<unsigned> limit;
  std::istringstream lines(*membership);
  for (std::string line; std::getline(lines, line);) {
    // "<hierarchy id>:<controllers>:<path>"; v2's line is "0::<path>".
    const size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (controllers.empty()) {
      for (const std::string &p : path_and_ancestors(path))
        if (const auto text = read_file(root + "/sys/fs/cgroup" + p + "/cpu.max")) tighten(limit, parse_cpu_max(*text));
      continue;
    }
    // v1: the cpu controller, mounted under its own name or under the names
    // of the controllers it shares a hierarchy with ("cpu,cpuacct").
    std::vector<std::string> names;
    std::istringstream list(controllers);
    for (std::string name; std::getline(list, name, ',');) names.push_back(name);
    if (std::find(names.begin(), names.end(), "cpu") == names.end()) continue;
    for (const std::string &mount : {std::string("cpu"), controllers})
      for (const std::string &p : path_and_ancestors(path))
        tighten(limit, read_cfs_quota(root + "/sys/fs/cgroup/" + mount + p));
  }
  return limit;
}

unsigned usable_cpus() {
  // glibc and the kernel answer from /sys and /proc, which costs
  // microseconds: ask once.
  static const unsigned cpus = [] {
    unsigned allowed = std::max(1u, std::thread::hardware_concurrency());
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) allowed = std::max(1, CPU_COUNT(&set));
    if (const auto limit = cgroup_cpu_limit("/")) allowed = std::min(allowed, *limit);
    return allowed;
  }();
  return cpus;
}

}  // namespace warpcrypt
