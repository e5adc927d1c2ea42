// Fuzzes the VAES/VPCLMULQDQ AES-GCM (src/backends/cpu/aes_gcm_vaes.cpp)
// against OpenSSL's EVP AES-GCM. The input's first byte picks the key size
// and the second how much of the data after the key, nonce and tag is
// AAD; the rest is the plaintext. Sealing must give OpenSSL's ciphertext
// and tag, in place too; opening the result must give the plaintext back;
// opening with the input's own 16 tag bytes must succeed exactly when they
// are the right tag. Under ASan this also checks that the masked tail
// loads and stores stay inside the buffers. On a CPU without the
// instructions there is nothing to compare, and every input passes.

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "backends/cpu/aes_gcm_vaes.h"
#include "fuzz_support.h"
#include "openssl_aead_reference.h"

namespace {

using warpcrypt::cpu::VaesGcmKey;
using warpcrypt::fuzz::openssl_aead_seal;
using warpcrypt::fuzz::require;
using Bytes = std::vector<uint8_t>;

constexpr size_t kTagLen = 16;

struct Input {
  const uint8_t *key;
  size_t key_len;
  const uint8_t *nonce;
  const uint8_t *tag;
  Bytes aad;
  Bytes plaintext;
};

// OpenSSL's names by key length.
constexpr const char *kNames[] = {"AES-128-GCM", "AES-192-GCM", "AES-256-GCM"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!warpcrypt::cpu::vaes_gcm_supported() || size < 2) return 0;
  Input in{};
  in.key_len = 16 + 8 * static_cast<size_t>(data[0] % 3);
  const size_t aad_share = data[1];
  data += 2, size -= 2;
  if (size < in.key_len + warpcrypt::cpu::kVaesGcmNonceLen + kTagLen) return 0;
  in.key = data;
  in.nonce = data + in.key_len;
  in.tag = in.nonce + warpcrypt::cpu::kVaesGcmNonceLen;
  const uint8_t *rest = in.tag + kTagLen;
  const size_t rest_len = size - static_cast<size_t>(rest - data);
  const size_t aad_len = rest_len * aad_share / 255;
  // Copies of exactly their length, so ASan sees any read past the end.
  in.aad.assign(rest, rest + aad_len);
  in.plaintext.assign(rest + aad_len, rest + rest_len);
  const size_t len = in.plaintext.size();

  const std::unique_ptr<VaesGcmKey> key = VaesGcmKey::make({in.key, in.key_len});
  require(key != nullptr, "VaesGcmKey::make refused an AES key");
  const Bytes expected =
      openssl_aead_seal(kNames[(in.key_len - 16) / 8], in.key, in.nonce, in.aad, in.plaintext, kTagLen);

  Bytes sealed(len + kTagLen);
  key->seal(in.nonce, in.aad.data(), in.aad.size(), in.plaintext.data(), sealed.data(), len, sealed.data() + len,
            kTagLen);
  require(sealed == expected, "sealing differs from OpenSSL");

  Bytes in_place = in.plaintext;
  in_place.resize(len + kTagLen);
  key->seal(in.nonce, in.aad.data(), in.aad.size(), in_place.data(), in_place.data(), len, in_place.data() + len,
            kTagLen);
  require(in_place == expected, "sealing in place differs from OpenSSL");

  Bytes opened(len);
  require(key->open(in.nonce, in.aad.data(), in.aad.size(), sealed.data(), opened.data(), len, sealed.data() + len,
                    kTagLen) == WC_OK,
          "its own seal does not open");
  require(opened == in.plaintext, "opening does not give the plaintext back");

  const bool right_tag = std::memcmp(in.tag, expected.data() + len, kTagLen) == 0;
  const wc_status forged =
      key->open(in.nonce, in.aad.data(), in.aad.size(), sealed.data(), opened.data(), len, in.tag, kTagLen);
  require(forged == (right_tag ? WC_OK : WC_ERR_AUTH), "a tag's verdict is wrong");
  return 0;
}
