// The CPUs threads = 0 stands for: cgroup CPU quotas read from fake trees
// (v2, v1, nested, container-rooted), and the running process's affinity.
#include <sched.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <warpcrypt/warpcrypt.h>

#include "core/cpu_budget.h"
#include "support/scratch_files.h"

namespace wctest {
namespace {

class FakeCgroupTree {
 public:
  std::string root() const { return (dir_ / "root").string(); }
  void write(const std::string &path, const std::string &text) const {
    const std::filesystem::path file = dir_ / "root" / path;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text;
  }

 private:
  ScratchDir dir_;
};

TEST(CgroupCpuLimit, V2QuotaRoundsUp) {
  FakeCgroupTree tree;
  tree.write("proc/self/cgroup", "0::/job.slice/run.scope\n");
  tree.write("sys/fs/cgroup/job.slice/run.scope/cpu.max", "150000 100000\n");
  EXPECT_EQ(warpcrypt::cgroup_cpu_limit(tree.root()), 2u);
}

TEST(CgroupCpuLimit, V2MaxMeansNoLimitAndAnAncestorsLimitCounts) {
  FakeCgroupTree tree;
  tree.write("proc/self/cgroup", "0::/outer/inner\n");
  tree.write("sys/fs/cgroup/outer/inner/cpu.max", "max 100000\n");
  EXPECT_EQ(warpcrypt::cgroup_cpu_limit(tree.root()), std::nullopt);
  tree.write("sys/fs/cgroup/outer/cpu.max", "300000 100000\n");
  EXPECT_EQ(warpcrypt::cgroup_cpu_limit(tree.root()), 3u);
}

TEST(CgroupCpuLimit, V2InsideAContainerTheRootHoldsTheLimit) {
  // The host's path to the cgroup does not exist in the container's view.
  FakeCgroupTree tree;
  tree.write("proc/self/cgroup", "0::/kubepods/pod1/abc\n");
  tree.write("sys/fs/cgroup/cpu.max", "50000 100000\n");
  EXPECT_EQ(warpcrypt::cgroup_cpu_limit(tree.root()), 1u);
}

TEST(CgroupCpuLimit, V1QuotaUnderASharedMount) {
  FakeCgroupTree tree;
  tree.write("proc/self/cgroup", "4:memory:/x\n3:cpu,cpuacct:/docker/c1\n");
  tree.write("sys/fs/cgroup/cpu,cpuacct/docker/c1/cpu.cfs_quota_us", "400000\n");
  tree.write("sys/fs/cgroup/cpu,cpuacct/docker/c1/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(warpcrypt::cgroup_cpu_limit(tree.root()), 4u);
}

TEST(CgroupCpuLimit, V1MinusOneIsNoLimit) {
  FakeCgroupTree tree;
  tree.write("proc/self/cgroup", "1:cpu:/\n");
  tree.write("sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n");
  tree.write("sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(warpcrypt::cgroup_cpu_limit(tree.root()), std::nullopt);
}

TEST(CgroupCpuLimit, MissingOrGarbledFilesSetNoLimit) {
  FakeCgroupTree tree;
  EXPECT_EQ(warpcrypt::cgroup_cpu_limit(tree.root()), std::nullopt);
  tree.write("proc/self/cgroup", "garbage\n0::/a\n");
  tree.write("sys/fs/cgroup/a/cpu.max", "lots 0\n");
  EXPECT_EQ(warpcrypt::cgroup_cpu_limit(tree.root()), std::nullopt);
}

TEST(DefaultThreads, NeverMoreThanTheAffinityMaskAllows) {
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  const unsigned threads = wc_default_threads();
  EXPECT_GE(threads, 1u);
  EXPECT_LE(threads, static_cast<unsigned>(CPU_COUNT(&set)));
  const auto limit = warpcrypt::cgroup_cpu_limit("/");
  if (limit) {
    EXPECT_LE(threads, *limit);
  }
}

}  // namespace
}  // namespace wctest
