#include "support/gpu_modes.h"

#include "support/cipher_table.h"
#include "support/warpcrypt_calls.h"

namespace wctest {

bool gpu_available() {
  int count = 0;
  return wc_device_count(&count) == WC_OK && count > 0;
}

bool gpu_runs(const std::string &cipher, wc_direction direction) {
  auto ends_with = [&](const char *suffix) {
    const std::string s(suffix);
    return cipher.size() >= s.size() && cipher.compare(cipher.size() - s.size(), s.size(), s) == 0;
  };
  if (ends_with("-ecb") || ends_with("-ctr") || cipher == "chacha20" || cipher.rfind("salsa20", 0) == 0) return true;
  if (ends_with("-cbc") || ends_with("-cfb")) return direction == WC_DECRYPT;
  return false;
}

std::vector<GpuMode> gpu_modes() {
  std::vector<GpuMode> modes;
  for (const char *bits : {"128", "192", "256"}) {
    const std::string prefix = std::string("aes-") + bits + "-";
    modes.push_back({prefix + "ecb", WC_ENCRYPT});
    modes.push_back({prefix + "ecb", WC_DECRYPT});
    modes.push_back({prefix + "ctr", WC_ENCRYPT});
    modes.push_back({prefix + "cbc", WC_DECRYPT});
    modes.push_back({prefix + "cfb", WC_DECRYPT});
  }
  modes.push_back({"chacha20", WC_ENCRYPT});
  modes.push_back({"salsa20", WC_ENCRYPT});
  modes.push_back({"salsa20-128", WC_ENCRYPT});
  return modes;
}

void PrintTo(const GpuMode &mode, std::ostream *os) { *os << mode.cipher << " " << direction_name(mode.direction); }

std::string gpu_mode_name(const ::testing::TestParamInfo<GpuMode> &info) {
  return identifier_from(info.param.cipher) + (info.param.direction == WC_ENCRYPT ? "_encrypt" : "_decrypt");
}

}  // namespace wctest
