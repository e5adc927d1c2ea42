#include "support/test_rng.h"

#include <cstdlib>
#include <string>
#include <string_view>

namespace wctest {
namespace {

// FNV-1a: a stable hash, so a test's stream is the same on every platform.
uint64_t fnv1a(std::string_view text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : text) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

}  // namespace

uint64_t base_seed() {
  static const uint64_t seed = [] {
    const char *text = std::getenv("WARPCRYPT_TEST_SEED");
    if (text != nullptr && *text != '\0') return std::strtoull(text, nullptr, 0);
    return 0x5eed'2024'c0ffee01ull;
  }();
  return seed;
}

TestRng TestRng::for_current_test() {
  std::string name = "no-test";
  if (const auto *info = ::testing::UnitTest::GetInstance()->current_test_info()) {
    name = std::string(info->test_suite_name()) + "." + info->name();
  }
  ::testing::Test::RecordProperty("warpcrypt_test_seed", std::to_string(base_seed()));
  return TestRng(base_seed() ^ fnv1a(name));
}

size_t TestRng::uniform(size_t low, size_t high) {
  return std::uniform_int_distribution<size_t>(low, high)(engine_);
}

void TestRng::fill(uint8_t *out, size_t len) {
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t word = engine_();
    for (int b = 0; b < 8; ++b) out[i + b] = static_cast<uint8_t>(word >> (8 * b));
  }
  if (i < len) {
    uint64_t word = engine_();
    for (; i < len; ++i, word >>= 8) out[i] = static_cast<uint8_t>(word);
  }
}

Bytes TestRng::bytes(size_t len) {
  Bytes out(len);
  fill(out.data(), len);
  return out;
}

}  // namespace wctest
