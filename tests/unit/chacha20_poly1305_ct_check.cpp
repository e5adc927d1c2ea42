// Constant-time evidence for the Poly1305 and the segmented ChaCha20-Poly1305
// of src/backends/cpu/chacha20_poly1305_segmented.cpp, run under valgrind
// memcheck (ctest chacha20_poly1305_constant_time), the way mlkem_ct_check
// does for ML-KEM: the key and the message are marked undefined, so memcheck
// reports any branch, table index or address that depends on them, and the
// ctest fails on any report. Only the outputs (tag, ciphertext) are marked
// defined, after the calls, to compare them with the expected values; the
// segmented seal runs on one worker and on three (segments combined with
// powers of r). Lengths cover an empty message, a short last block and
// whole blocks.
//
// With --control it indexes a table with a secret byte instead; ctest
// chacha20_poly1305_constant_time_control expects memcheck to report it.
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <valgrind/memcheck.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "backends/cpu/chacha20_poly1305_segmented.h"

namespace {

using Bytes = std::vector<uint8_t>;

void mark_secret(void *bytes, size_t len) { VALGRIND_MAKE_MEM_UNDEFINED(bytes, len); }
void mark_public(const void *bytes, size_t len) { VALGRIND_MAKE_MEM_DEFINED(bytes, len); }

Bytes pattern(size_t len, unsigned seed) {
  Bytes bytes(len);
  for (size_t i = 0; i < len; ++i) bytes[i] = static_cast<uint8_t>(i * seed + 7);
  return bytes;
}

// OpenSSL's Poly1305 and ChaCha20-Poly1305 on public copies, the expected
// values the checked calls' declassified outputs must equal.
Bytes openssl_poly1305(const Bytes &key, const Bytes &message) {
  EVP_MAC *mac = EVP_MAC_fetch(nullptr, "POLY1305", nullptr);
  EVP_MAC_CTX *ctx = EVP_MAC_CTX_new(mac);
  Bytes tag(16);
  size_t written = 0;
  EVP_MAC_init(ctx, key.data(), key.size(), nullptr);
  EVP_MAC_update(ctx, message.data(), message.size());
  EVP_MAC_final(ctx, tag.data(), &written, tag.size());
  EVP_MAC_CTX_free(ctx);
  EVP_MAC_free(mac);
  return tag;
}

Bytes openssl_seal(const Bytes &key, const Bytes &nonce, const Bytes &aad, const Bytes &plaintext) {
  EVP_CIPHER *cipher = EVP_CIPHER_fetch(nullptr, "ChaCha20-Poly1305", nullptr);
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
  Bytes out(plaintext.size() + 16);
  int n = 0;
  EVP_EncryptInit_ex2(ctx, cipher, key.data(), nonce.data(), nullptr);
  EVP_EncryptUpdate(ctx, nullptr, &n, aad.data(), static_cast<int>(aad.size()));
  EVP_EncryptUpdate(ctx, out.data(), &n, plaintext.data(), static_cast<int>(plaintext.size()));
  EVP_EncryptFinal_ex(ctx, out.data(), &n);
  EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, out.data() + plaintext.size());
  EVP_CIPHER_CTX_free(ctx);
  EVP_CIPHER_free(cipher);
  return out;
}

}  // namespace

int main(int argc, char **argv) {
  using namespace warpcrypt::cpu;
  if (argc == 2 && std::strcmp(argv[1], "--control") == 0) {
    static std::array<uint8_t, 256> table{};
    Bytes key = pattern(32, 3);
    mark_secret(key.data(), key.size());
    volatile uint8_t looked_up = table[key[0]];
    (void)looked_up;
    return 0;
  }
  bool all_match = true;
  for (size_t len : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{300}}) {
    // Extreme keys too: every clamped bit of r set, s all ones.
    for (unsigned seed : {5u, 0u}) {
      Bytes key = seed == 0 ? Bytes(32, 0xff) : pattern(32, seed);
      Bytes message = seed == 0 ? Bytes(len, 0xff) : pattern(len, seed + 2);
      const Bytes expected = openssl_poly1305(key, message);
      std::array<uint8_t, 16> tag{};
      mark_secret(key.data(), key.size());
      mark_secret(message.data(), message.size());
      poly1305(key.data(), message.data(), message.size(), tag.data());
      mark_public(tag.data(), tag.size());
      all_match = all_match && std::memcmp(tag.data(), expected.data(), tag.size()) == 0;
    }
  }
  for (size_t len : {size_t{0}, size_t{200}, size_t{1000}}) {
    for (unsigned workers : {1u, 3u}) {
      Bytes key = pattern(32, 9);
      const Bytes nonce = pattern(12, 4);
      const Bytes aad = pattern(21, 6);
      Bytes plaintext = pattern(len, 11);
      const Bytes expected = openssl_seal(key, nonce, aad, plaintext);
      mark_secret(key.data(), key.size());
      const std::unique_ptr<ChaCha20Poly1305Key> keyed = ChaCha20Poly1305Key::make(key);
      mark_secret(plaintext.data(), plaintext.size());
      Bytes sealed(len + 16);
      const wc_status status = keyed->seal_segmented(nonce.data(), aad.data(), aad.size(), plaintext.data(),
                                                     sealed.data(), len, sealed.data() + len, 16, workers);
      mark_public(sealed.data(), sealed.size());
      all_match = all_match && status == WC_OK && sealed == expected;
    }
  }
  if (!all_match) {
    std::fprintf(stderr, "chacha20_poly1305_ct_check: an output differs from OpenSSL's\n");
    return 1;
  }
  std::printf("chacha20_poly1305_ct_check: Poly1305 and the segmented seal ran\n");
  return 0;
}
