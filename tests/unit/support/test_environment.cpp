#include "support/test_environment.h"

#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "support/test_rng.h"

namespace wctest {
namespace {

struct VectorTally {
  std::mutex mutex;
  std::vector<std::pair<std::string, size_t>> sets;
  size_t total = 0;
};

VectorTally &tally() {
  static VectorTally instance;
  return instance;
}

// Prints the random seed up front and the vector totals at the end. Under
// ctest each test runs in its own process, so the total printed there covers
// that test only; run the binary directly for the grand total.
class WarpcryptTestEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    std::cout << "[warpcrypt] random base seed " << base_seed()
              << " (set WARPCRYPT_TEST_SEED to replay)\n";
  }
  void TearDown() override {
    std::lock_guard<std::mutex> lock(tally().mutex);
    if (tally().sets.empty()) return;
    std::cout << "[warpcrypt] known-answer vectors run: " << tally().total << " in "
              << tally().sets.size() << " sets\n";
  }
};

// gtest_main runs RUN_ALL_TESTS after static initialisation, so registering
// here is enough; this file is compiled into the test executable directly.
[[maybe_unused]] ::testing::Environment *const kEnvironment =
    ::testing::AddGlobalTestEnvironment(new WarpcryptTestEnvironment);

bool env_flag_set(const char *name) {
  const char *value = std::getenv(name);
  return value != nullptr && std::string_view(value) == "1";
}

}  // namespace

void locate_vectors_dir(std::filesystem::path *dir) {
  const char *value = std::getenv("WARPCRYPT_VECTORS_DIR");
  std::error_code error;
  const bool usable =
      value != nullptr && *value != '\0' && std::filesystem::is_directory(value, error);
  if (usable) {
    *dir = value;
    return;
  }
  const std::string why =
      value == nullptr || *value == '\0'
          ? std::string("WARPCRYPT_VECTORS_DIR is not set")
          : "WARPCRYPT_VECTORS_DIR=" + std::string(value) + " is not a directory";
  const std::string hint =
      "; point it at the `cryptography_vectors` package directory of the PyPI "
      "package cryptography-vectors";
  if (env_flag_set("WARPCRYPT_REQUIRE_VECTORS")) {
    FAIL() << why << hint << " (WARPCRYPT_REQUIRE_VECTORS=1 makes this a failure)";
  }
  GTEST_SKIP() << why << hint;
}

void report_vectors_run(const std::string &set, size_t count) {
  std::cout << "[warpcrypt] " << set << ": " << count << " vectors\n";
  ::testing::Test::RecordProperty("vectors_run", std::to_string(count));
  std::lock_guard<std::mutex> lock(tally().mutex);
  tally().sets.emplace_back(set, count);
  tally().total += count;
}

}  // namespace wctest
