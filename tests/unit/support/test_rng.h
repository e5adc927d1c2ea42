// Reproducible pseudo-random test data. Every test draws from its own stream,
// seeded from a base seed and the test's full name, so a failure reproduces
// when the test runs alone and does not depend on test order. The base seed
// is fixed unless WARPCRYPT_TEST_SEED overrides it; failures print it.
#ifndef WARPCRYPT_TESTS_UNIT_SUPPORT_TEST_RNG_H
#define WARPCRYPT_TESTS_UNIT_SUPPORT_TEST_RNG_H

#include <cstddef>
#include <cstdint>
#include <random>

#include "support/bytes.h"

namespace wctest {

// WARPCRYPT_TEST_SEED (decimal or 0x-hex) or a fixed default.
uint64_t base_seed();

class TestRng {
 public:
  explicit TestRng(uint64_t seed) : engine_(seed), seed_(seed) {}

  // A generator private to the running gtest test. The base seed is printed
  // at start-up and recorded as a test property, so a failure can be replayed.
  static TestRng for_current_test();

  uint64_t seed() const { return seed_; }
  uint64_t next() { return engine_(); }
  // Uniform in [low, high], both inclusive.
  size_t uniform(size_t low, size_t high);
  void fill(uint8_t *out, size_t len);
  Bytes bytes(size_t len);

 private:
  std::mt19937_64 engine_;
  uint64_t seed_;
};

}  // namespace wctest

#endif
