// Constant-time evidence for ML-KEM-768, run under valgrind memcheck (ctest
// mlkem768_constant_time). The secret inputs are marked undefined; memcheck
// then reports every branch, table index or memory address that depends on
// them ("Conditional jump or move depends on uninitialised value", "Use of
// uninitialised value"), and the ctest fails on any report. mlkem768.cpp is
// compiled into this program with WARPCRYPT_MLKEM_VALGRIND, which declares
// the public seed rho defined once keygen has derived it. Public outputs are
// marked defined before they are compared.
//
// With --control it instead indexes a table with a secret byte, the kind of
// leak the check exists to find; ctest mlkem768_constant_time_control
// expects memcheck to report it, so a check that had stopped seeing anything
// (no valgrind underneath, requests compiled out) would fail there.
#include <valgrind/memcheck.h>

#include <array>
#include <cstdio>
#include <cstring>

#include "backends/cpu/mlkem768.h"

namespace {

template <typename T>
void mark_secret(T &value) {
  VALGRIND_MAKE_MEM_UNDEFINED(&value, sizeof(value));
}

template <typename T>
void mark_public(const T &value) {
  VALGRIND_MAKE_MEM_DEFINED(&value, sizeof(value));
}

}  // namespace

int main(int argc, char **argv) {
  using namespace warpcrypt;
  std::array<uint8_t, kMlkem768SeedLen> seed{};
  for (size_t i = 0; i < seed.size(); ++i) seed[i] = static_cast<uint8_t>(i * 37 + 11);
  if (argc == 2 && std::strcmp(argv[1], "--control") == 0) {
    static std::array<uint8_t, 256> table{};
    mark_secret(seed);
    volatile uint8_t looked_up = table[seed[0]];
    (void)looked_up;
    return 0;
  }
  std::array<uint8_t, kMlkem768EncapsulationKeyLen> ek{};
  std::array<uint8_t, kMlkem768DecapsulationKeyLen> dk{};
  mark_secret(seed);
  cpu::mlkem768_keygen(ek, dk, seed);
  mark_public(ek);

  std::array<uint8_t, kMlkemRandomnessLen> message{};
  message.fill(0x5A);
  std::array<uint8_t, kMlkem768CiphertextLen> ct{};
  std::array<uint8_t, kMlkemSharedSecretLen> sent{};
  mark_secret(message);
  const wc_status encaps_status = cpu::mlkem768_encaps(ct, sent, ek, message);
  mark_public(ct);

  // In dk only dk_PKE (the first 1152 bytes) and z (the last 32) are secret;
  // ek and H(ek) between them are public.
  mark_public(dk);
  VALGRIND_MAKE_MEM_UNDEFINED(dk.data(), 1152);
  VALGRIND_MAKE_MEM_UNDEFINED(dk.data() + dk.size() - 32, 32);
  std::array<uint8_t, kMlkemSharedSecretLen> received{};
  const wc_status good_status = cpu::mlkem768_decaps(received, dk, ct);

  // A damaged ciphertext takes the rejection path; it must be no different.
  std::array<uint8_t, kMlkem768CiphertextLen> damaged = ct;
  damaged[100] ^= 0x04;
  std::array<uint8_t, kMlkemSharedSecretLen> rejected{};
  const wc_status bad_status = cpu::mlkem768_decaps(rejected, dk, damaged);

  mark_public(sent);
  mark_public(received);
  mark_public(rejected);
  if (encaps_status != WC_OK || good_status != WC_OK || bad_status != WC_OK ||
      std::memcmp(sent.data(), received.data(), sent.size()) != 0 ||
      std::memcmp(sent.data(), rejected.data(), sent.size()) == 0) {
    std::fprintf(stderr, "mlkem_ct_check: ML-KEM round trip failed\n");
    return 1;
  }
  std::printf(
      "mlkem_ct_check: keygen, encaps and decaps (accepting and "
      "rejecting) ran\n");
  return 0;
}
