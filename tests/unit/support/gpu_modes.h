// Which work the GPU backend runs, written down independently of the
// library, and the skip every GPU test starts with. No CUDA headers here: the
// unit tests use it too, to run the known-answer vectors on the GPU.
#ifndef WARPCRYPT_TESTS_UNIT_SUPPORT_GPU_MODES_H
#define WARPCRYPT_TESTS_UNIT_SUPPORT_GPU_MODES_H

#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <warpcrypt/warpcrypt.h>

namespace wctest {

bool gpu_available();

// Without a device the test is skipped with the message the GPU issue asks
// for, and CI stays green.
#define WCTEST_REQUIRE_GPU()                                                               \
  do {                                                                                     \
    if (!::wctest::gpu_available()) GTEST_SKIP() << "no CUDA device: GPU tests skipped"; \
  } while (0)

// ECB both ways, CTR, ChaCha20 and Salsa20 both ways, CBC and CFB128
// decryption; never CFB8 or OFB, nor CBC/CFB encryption outside batches.
bool gpu_runs(const std::string &cipher, wc_direction direction);

struct GpuMode {
  std::string cipher;
  wc_direction direction;
};
// One (cipher, direction) per thing the GPU runs, every AES key size and
// both Salsa20 key sizes. Encryption stands for both directions of the
// keystream modes, whose decryption is the same XOR.
std::vector<GpuMode> gpu_modes();
void PrintTo(const GpuMode &mode, std::ostream *os);
std::string gpu_mode_name(const ::testing::TestParamInfo<GpuMode> &info);

}  // namespace wctest

#endif
