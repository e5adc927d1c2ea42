// A test-only command line to ML-KEM-768 through the host-crypto provider,
// for tests/python/test_mlkem768_interop.py to check it against pyca/
// cryptography. All values are hex, one per line on stdout:
//   mlkem768_tool keygen SEED64          -> ek, dk
//   mlkem768_tool encaps EK RANDOMNESS32 -> ct, ss
//   mlkem768_tool decaps DK CT           -> ss
// Exits 1 with a message on a bad argument or a refused key.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/host_crypto.h"
#include "support/fixed_random.h"

namespace {

using warpcrypt::kHostCrypto;

bool from_hex(const char *text, std::span<uint8_t> out) {
  if (std::strlen(text) != 2 * out.size()) return false;
  for (size_t i = 0; i < out.size(); ++i) {
    unsigned value = 0;
    if (std::sscanf(text + 2 * i, "%2x", &value) != 1) return false;
    out[i] = static_cast<uint8_t>(value);
  }
  return true;
}

void print_hex(std::span<const uint8_t> bytes) {
  for (uint8_t byte : bytes) std::printf("%02x", byte);
  std::printf("\n");
}

int fail(const char *message) {
  std::fprintf(stderr, "mlkem768_tool: %s\n", message);
  return 1;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 3 && argc != 4) return fail("usage: keygen SEED | encaps EK M | decaps DK CT");
  const std::string command = argv[1];
  if (command == "keygen" && argc == 3) {
    std::array<uint8_t, warpcrypt::kMlkem768SeedLen> seed{};
    if (!from_hex(argv[2], seed)) return fail("bad seed");
    std::array<uint8_t, warpcrypt::kMlkem768EncapsulationKeyLen> ek{};
    std::array<uint8_t, warpcrypt::kMlkem768DecapsulationKeyLen> dk{};
    kHostCrypto.mlkem768_keygen(ek, dk, seed);
    print_hex(ek);
    print_hex(dk);
    return 0;
  }
  if (command == "encaps" && argc == 4) {
    std::array<uint8_t, warpcrypt::kMlkem768EncapsulationKeyLen> ek{};
    std::array<uint8_t, warpcrypt::kMlkemRandomnessLen> randomness{};
    if (!from_hex(argv[2], ek) || !from_hex(argv[3], randomness)) return fail("bad key or randomness");
    wctest::FixedRandom random({randomness.begin(), randomness.end()});
    std::array<uint8_t, warpcrypt::kMlkem768CiphertextLen> ct{};
    std::array<uint8_t, warpcrypt::kMlkemSharedSecretLen> ss{};
    if (kHostCrypto.mlkem768_encaps(ct, ss, ek, random) != WC_OK) return fail("encapsulation key refused");
    print_hex(ct);
    print_hex(ss);
    return 0;
  }
  if (command == "decaps" && argc == 4) {
    std::array<uint8_t, warpcrypt::kMlkem768DecapsulationKeyLen> dk{};
    std::array<uint8_t, warpcrypt::kMlkem768CiphertextLen> ct{};
    if (!from_hex(argv[2], dk) || !from_hex(argv[3], ct)) return fail("bad key or ciphertext");
    std::array<uint8_t, warpcrypt::kMlkemSharedSecretLen> ss{};
    if (kHostCrypto.mlkem768_decaps(ss, dk, ct) != WC_OK) return fail("decapsulation key refused");
    print_hex(ss);
    return 0;
  }
  return fail("usage: keygen SEED | encaps EK M | decaps DK CT");
}
