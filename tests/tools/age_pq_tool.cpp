// A test-only command line to age's hybrid KEM (MLKEM768-X25519) and its
// HPKE key schedule (src/age/age_pq.h), for tests/cli/test_age_pq_reference.py
// to check against draft-ietf-hpke-pq's vectors and a Python reference. All
// values are hex, one per line on stdout:
//   age_pq_tool public SEED               -> public key
//   age_pq_tool encaps PK RANDOM64 INFO   -> enc, shared secret, key, base nonce
//   age_pq_tool decaps SEED ENC INFO      -> shared secret, key, base nonce
// RANDOM64 is what the random source hands out: ML-KEM's 32 bytes, then the
// X25519 ephemeral scalar. Exits 1 with a message on failure.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "age/age_pq.h"
#include "core/host_crypto.h"

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

class FixedRandom final : public RandomSource {
 public:
  explicit FixedRandom(std::vector<uint8_t> bytes) : bytes_(std::move(bytes)) {}
  wc_status fill(std::span<uint8_t> out) override {
    if (out.size() > bytes_.size() - used_) return WC_ERR_INVALID_ARGUMENT;
    std::copy_n(bytes_.begin() + used_, out.size(), out.begin());
    used_ += out.size();
    return WC_OK;
  }

 private:
  std::vector<uint8_t> bytes_;
  size_t used_ = 0;
};

int fail(const char *message) {
  std::fprintf(stderr, "age_pq_tool: %s\n", message);
  return 1;
}

int print_schedule(const HostCrypto &crypto, std::span<const uint8_t, 32> shared, const std::vector<uint8_t> &info) {
  std::array<uint8_t, 32> key{};
  std::array<uint8_t, 12> nonce{};
  if (age::hpke_key_schedule(crypto, shared, info, key, nonce) != WC_OK) return fail("key schedule failed");
  print_hex(shared);
  print_hex(key);
  print_hex(nonce);
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  const std::string command = argc > 1 ? argv[1] : "";
  std::vector<uint8_t> a, b, info;
  if (command == "public" && argc == 3 && from_hex(argv[2], &a) && a.size() == age::kHybridSeedLen) {
    std::array<uint8_t, age::kHybridPublicKeyLen> public_key{};
    if (age::hybrid_public_key(kHostCrypto, std::span<const uint8_t, 32>(a.data(), 32), public_key) != WC_OK) {
      return fail("key expansion failed");
    }
    print_hex(public_key);
    return 0;
  }
  if (argc != 5 || !from_hex(argv[2], &a) || !from_hex(argv[3], &b) || !from_hex(argv[4], &info)) {
    return fail("usage: public SEED | encaps PK RANDOM64 INFO | decaps SEED ENC INFO");
  }
  if (command == "encaps" && a.size() == age::kHybridPublicKeyLen && b.size() == 64) {
    FixedRandom random(b);
    HostCrypto crypto = kHostCrypto;
    crypto.random = &random;
    std::array<uint8_t, age::kHybridEncapsulationLen> enc{};
    std::array<uint8_t, 32> shared{};
    const char *detail = "";
    if (age::hybrid_encapsulate(crypto, std::span<const uint8_t, age::kHybridPublicKeyLen>(a.data(), a.size()), enc,
                                shared, &detail) != WC_OK) {
      return fail(detail);
    }
    print_hex(enc);
    return print_schedule(kHostCrypto, shared, info);
  }
  if (command == "decaps" && a.size() == age::kHybridSeedLen && b.size() == age::kHybridEncapsulationLen) {
    std::array<uint8_t, 32> shared{};
    if (age::hybrid_decapsulate(kHostCrypto, std::span<const uint8_t, 32>(a.data(), 32),
                                std::span<const uint8_t, age::kHybridEncapsulationLen>(b.data(), b.size()),
                                shared) != WC_OK) {
      return fail("decapsulation failed");
    }
    return print_schedule(kHostCrypto, shared, info);
  }
  return fail("usage: public SEED | encaps PK RANDOM64 INFO | decaps SEED ENC INFO");
}
