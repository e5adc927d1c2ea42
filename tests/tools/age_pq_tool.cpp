// A test-only command line to HPKE with age's post-quantum suite
// (MLKEM768-X25519, HKDF-SHA256, ChaCha20-Poly1305; HostCrypto's hpke_*
// entries), for tests/cli/test_age_pq_reference.py to check against
// draft-ietf-hpke-pq's vector. All values are hex, one per line on stdout:
//   age_pq_tool public SEED                      -> public key
//   age_pq_tool seal PK RANDOM64 INFO AAD PT     -> enc, sealed
//   age_pq_tool open SEED ENC INFO AAD SEALED    -> plaintext
// RANDOM64 is what the random source hands out: ML-KEM's 32 bytes, then the
// X25519 ephemeral scalar. Exits 1 with a message on failure.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "core/host_crypto.h"
#include "support/fixed_random.h"

namespace {

using namespace warpcrypt;

bool from_hex(const char *text, std::vector<uint8_t> *out) {
  const size_t len = std::strlen(text);
  if (len % 2 != 0) return false;
  out->resize(len / 2);
  for (size_t i = 0; i < out->size(); ++i) {
    unsigned value = 0;
    if (std::sscanf(text + 2 * i, "%2x", &value) != 1) return false;
    (*out)[i] = static_cast<uint8_t>(value);
  }
  return true;
}

void print_hex(std::span<const uint8_t> bytes) {
  for (uint8_t byte : bytes) std::printf("%02x", byte);
  std::printf("\n");
}

int fail(const char *message) {
  std::fprintf(stderr, "age_pq_tool: %s\n", message);
  return 1;
}

}  // namespace

int main(int argc, char **argv) {
  constexpr HpkeKem kKem = HpkeKem::mlkem768_x25519;
  const std::string command = argc > 1 ? argv[1] : "";
  std::vector<std::vector<uint8_t>> args(static_cast<size_t>(std::max(argc - 2, 0)));
  for (size_t i = 0; i < args.size(); ++i) {
    if (!from_hex(argv[i + 2], &args[i])) return fail("arguments are hex");
  }
  if (command == "public" && args.size() == 1) {
    std::vector<uint8_t> public_key(hpke_public_key_len(kKem));
    if (kHostCrypto.hpke_public_key(kKem, args[0], public_key) != WC_OK) return fail("no public key for that seed");
    print_hex(public_key);
    return 0;
  }
  if (command == "seal" && args.size() == 5) {
    const auto &[public_key, randomness, info, aad, message] = std::tie(args[0], args[1], args[2], args[3], args[4]);
    wctest::FixedRandom random(randomness);
    std::vector<uint8_t> enc(hpke_encapsulation_len(kKem));
    std::vector<uint8_t> sealed(message.size() + 16);
    if (kHostCrypto.hpke_seal_base(kKem, public_key, info, aad, message, random, enc, sealed) != WC_OK) {
      return fail("sealing failed");
    }
    print_hex(enc);
    print_hex(sealed);
    return 0;
  }
  if (command == "open" && args.size() == 5 && args[4].size() >= 16) {
    const auto &[seed, enc, info, aad, sealed] = std::tie(args[0], args[1], args[2], args[3], args[4]);
    std::vector<uint8_t> message(sealed.size() - 16);
    if (kHostCrypto.hpke_open_base(kKem, seed, enc, info, aad, sealed, message) != WC_OK) {
      return fail("opening failed");
    }
    print_hex(message);
    return 0;
  }
  return fail("usage: public SEED | seal PK RANDOM64 INFO AAD PT | open SEED ENC INFO AAD SEALED");
}
