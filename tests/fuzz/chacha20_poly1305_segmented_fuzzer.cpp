// Fuzzes the segmented ChaCha20-Poly1305 (src/backends/cpu/
// chacha20_poly1305_segmented.cpp) against OpenSSL's EVP ChaCha20-Poly1305.
// The input's first byte picks the worker count (1..8), the second how much
// of the data after the key and nonce is AAD, the next two which bit of
// AAD || ciphertext || tag to flip; the rest is the plaintext. Sealing, in
// place too, must give OpenSSL's ciphertext and tag; opening the result
// must give the plaintext back; opening with the flipped bit must fail with
// WC_ERR_AUTH. Short lengths make many 64-byte segments, so the boundaries
// and the combination with powers of r get exercised; under ASan this also
// checks no segment reads or writes past its buffers.

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "backends/cpu/chacha20_poly1305_segmented.h"
#include "fuzz_support.h"
#include "openssl_aead_reference.h"

namespace {

using warpcrypt::cpu::ChaCha20Poly1305Key;
using warpcrypt::fuzz::openssl_aead_seal;
using warpcrypt::fuzz::require;
using Bytes = std::vector<uint8_t>;

constexpr size_t kKeyLen = 32;
constexpr size_t kNonceLen = 12;
constexpr size_t kTagLen = 16;

struct Input {
  const uint8_t *key;
  const uint8_t *nonce;
  Bytes aad;
  Bytes plaintext;
};


}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 4 + kKeyLen + kNonceLen) return 0;
  const unsigned workers = 1 + data[0] % 8;
  const size_t aad_share = data[1];
  const size_t flip_choice = size_t{data[2]} << 8 | data[3];
  data += 4, size -= 4;
  Input in{};
  in.key = data;
  in.nonce = data + kKeyLen;
  const uint8_t *rest = in.nonce + kNonceLen;
  const size_t rest_len = size - kKeyLen - kNonceLen;
  const size_t aad_len = rest_len * aad_share / 255;
  // Copies of exactly their length, so ASan sees any read past the end.
  in.aad.assign(rest, rest + aad_len);
  in.plaintext.assign(rest + aad_len, rest + rest_len);
  const size_t len = in.plaintext.size();

  const std::unique_ptr<ChaCha20Poly1305Key> key = ChaCha20Poly1305Key::make({in.key, kKeyLen});
  require(key != nullptr, "ChaCha20Poly1305Key::make refused a 32-byte key");
  const Bytes expected = openssl_aead_seal("ChaCha20-Poly1305", in.key, in.nonce, in.aad, in.plaintext, kTagLen);

  Bytes sealed(len + kTagLen);
  require(key->seal_segmented(in.nonce, in.aad.data(), in.aad.size(), in.plaintext.data(), sealed.data(), len,
                              sealed.data() + len, kTagLen, workers) == WC_OK,
          "sealing failed");
  require(sealed == expected, "sealing differs from OpenSSL");

  Bytes in_place = in.plaintext;
  in_place.resize(len + kTagLen);
  require(key->seal_segmented(in.nonce, in.aad.data(), in.aad.size(), in_place.data(), in_place.data(), len,
                              in_place.data() + len, kTagLen, workers) == WC_OK,
          "sealing in place failed");
  require(in_place == expected, "sealing in place differs from OpenSSL");

  Bytes opened(len);
  require(key->open_segmented(in.nonce, in.aad.data(), in.aad.size(), sealed.data(), opened.data(), len,
                              sealed.data() + len, kTagLen, workers) == WC_OK,
          "its own seal does not open");
  require(opened == in.plaintext, "opening does not give the plaintext back");

  // One bit flipped somewhere in AAD || ciphertext || tag.
  Bytes aad = in.aad;
  const size_t bit = flip_choice % (8 * (aad.size() + len + kTagLen));
  uint8_t *target = bit / 8 < aad.size() ? aad.data() + bit / 8 : sealed.data() + (bit / 8 - aad.size());
  *target ^= static_cast<uint8_t>(1u << (bit % 8));
  require(key->open_segmented(in.nonce, aad.data(), aad.size(), sealed.data(), opened.data(), len, sealed.data() + len,
                              kTagLen, workers) == WC_ERR_AUTH,
          "a message with a flipped bit opened");
  return 0;
}
