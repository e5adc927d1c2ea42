// The driver's version file, as the proprietary and the open kernel modules
// write it, and the oldest driver of each CUDA major version.
#include "backends/cuda/driver_version.h"

#include <gtest/gtest.h>

#include <string>

namespace warpcrypt::cuda {
namespace {

constexpr char kProprietary[] =
    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 19:39:15 UTC 2024\n"
    "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n";
constexpr char kOpen[] =
    "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  "
    "(dvs-builder@U16-I3-B16-4-3)  Thu Sep 25 19:21:37 UTC 2025\n"
    "GCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)\n";
constexpr char kOpenArm[] = "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.159.04  Release Build\n";

TEST(DriverVersion, ReadFromEitherKernelModule) {
  EXPECT_EQ(kernel_driver_version(kProprietary), (DriverVersion{535, 183, 1}));
  EXPECT_EQ(kernel_driver_version(kOpen), (DriverVersion{580, 95, 5}));
  EXPECT_EQ(kernel_driver_version(kOpenArm), (DriverVersion{580, 159, 4}));
  EXPECT_EQ(kernel_driver_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.42\n"),
            (DriverVersion{470, 42, 0}));
}

TEST(DriverVersion, OnlyTheFirstLineCounts) {
  // The compiler's version on the second line is not the driver's.
  EXPECT_FALSE(kernel_driver_version("NVRM version: unknown\nGCC version:  gcc version 12.2.0\n"));
}

TEST(DriverVersion, AnythingElseIsNoVersion) {
  for (const std::string text : {"", "\n", "   ", "NVRM version: NVIDIA UNIX x86_64 Kernel Module",
                                 "Kernel Module 580", "Kernel Module 580.", "Kernel Module .580",
                                 "Kernel Module 580..95", "Kernel Module 580.95.05.1", "Kernel Module 580.95x",
                                 "Kernel Module -580.95", "Kernel Module 99999999999999999999.1"}) {
    EXPECT_FALSE(kernel_driver_version(text)) << '"' << text << '"';
  }
}

TEST(DriverVersion, OldestDriverOfEachCudaMajor) {
  EXPECT_EQ(oldest_driver(11), (DriverVersion{450, 80, 2}));
  EXPECT_EQ(oldest_driver(12), (DriverVersion{525, 60, 13}));
  EXPECT_EQ(oldest_driver(13), (DriverVersion{580, 0, 0}));
  EXPECT_FALSE(oldest_driver(10));
  EXPECT_FALSE(oldest_driver(14));  // unknown: CUDA itself must be asked
}

TEST(DriverVersion, RunsTheRuntimeFromItsMajorsOldestDriverOn) {
  EXPECT_TRUE(driver_runs_runtime(kOpen, 13000));
  EXPECT_TRUE(driver_runs_runtime(kOpen, 13010));  // minor version compatibility
  EXPECT_TRUE(driver_runs_runtime(kOpen, 12080));
  EXPECT_FALSE(driver_runs_runtime(kProprietary, 13000));
  EXPECT_TRUE(driver_runs_runtime(kProprietary, 12090));
  EXPECT_FALSE(driver_runs_runtime("Kernel Module  525.60.11\n", 12000));
  EXPECT_TRUE(driver_runs_runtime("Kernel Module  525.60.13\n", 12000));
  EXPECT_FALSE(driver_runs_runtime(kOpen, 14000));
  EXPECT_FALSE(driver_runs_runtime("", 13000));
}

}  // namespace
}  // namespace warpcrypt::cuda
