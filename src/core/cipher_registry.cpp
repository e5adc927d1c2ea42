#include "core/cipher_registry.h"

#include <strings.h>

#include <array>
#include <string_view>

namespace warpcrypt {
namespace {

constexpr wc_cipher aes(const char *name, Mode mode, uint8_t key_len, const char *openssl_name) {
  const bool takes_iv = mode != Mode::ecb;
  const bool whole_blocks = mode == Mode::ecb || mode == Mode::cbc;
  return wc_cipher{name, Primitive::aes, mode, key_len,
                   static_cast<uint8_t>(takes_iv ? 16 : 0),
                   static_cast<uint8_t>(whole_blocks ? 16 : 1), openssl_name, whole_blocks};
}

// Order is the order `warpcrypt enc -list` prints.
constexpr std::array kCiphers{
    aes("aes-128-ecb", Mode::ecb, 16, "AES-128-ECB"),
    aes("aes-192-ecb", Mode::ecb, 24, "AES-192-ECB"),
    aes("aes-256-ecb", Mode::ecb, 32, "AES-256-ECB"),
    aes("aes-128-cbc", Mode::cbc, 16, "AES-128-CBC"),
    aes("aes-192-cbc", Mode::cbc, 24, "AES-192-CBC"),
    aes("aes-256-cbc", Mode::cbc, 32, "AES-256-CBC"),
    aes("aes-128-cfb", Mode::cfb128, 16, "AES-128-CFB"),
    aes("aes-192-cfb", Mode::cfb128, 24, "AES-192-CFB"),
    aes("aes-256-cfb", Mode::cfb128, 32, "AES-256-CFB"),
    aes("aes-128-cfb8", Mode::cfb8, 16, "AES-128-CFB8"),
    aes("aes-192-cfb8", Mode::cfb8, 24, "AES-192-CFB8"),
    aes("aes-256-cfb8", Mode::cfb8, 32, "AES-256-CFB8"),
    aes("aes-128-ofb", Mode::ofb, 16, "AES-128-OFB"),
    aes("aes-192-ofb", Mode::ofb, 24, "AES-192-OFB"),
    aes("aes-256-ofb", Mode::ofb, 32, "AES-256-OFB"),
    aes("aes-128-ctr", Mode::ctr, 16, "AES-128-CTR"),
    aes("aes-192-ctr", Mode::ctr, 24, "AES-192-CTR"),
    aes("aes-256-ctr", Mode::ctr, 32, "AES-256-CTR"),
    // OpenSSL's IV layout: 4-byte little-endian block counter, 12-byte nonce.
    wc_cipher{"chacha20", Primitive::chacha20, Mode::keystream, 32, 16, 1, "ChaCha20", false},
    // djb's Salsa20/20 with an 8-byte nonce; libsodium runs it.
    wc_cipher{"salsa20", Primitive::salsa20, Mode::keystream, 32, 8, 1, nullptr, false},
    wc_cipher{"salsa20-128", Primitive::salsa20, Mode::keystream, 16, 8, 1, nullptr, false},
};

constexpr size_t kPaddedCount = 6;  // ECB and CBC, the first entries of kCiphers

// The padded ciphers' twins without padding, in kCiphers' order.
constexpr std::array<wc_cipher, kPaddedCount> unpadded_twins() {
  std::array<wc_cipher, kPaddedCount> twins{};
  for (size_t i = 0; i < kPaddedCount; ++i) {
    twins[i] = kCiphers[i];
    twins[i].pads = false;
  }
  return twins;
}
constexpr std::array kUnpaddedCiphers = unpadded_twins();
static_assert(kCiphers[kPaddedCount - 1].pads && !kCiphers[kPaddedCount].pads,
              "the padded ciphers come first in kCiphers");

struct Alias {
  std::string_view alias;
  std::string_view target;
};
// `openssl enc` accepts these short forms for CBC.
constexpr std::array kAliases{
    Alias{"aes128", "aes-128-cbc"},
    Alias{"aes192", "aes-192-cbc"},
    Alias{"aes256", "aes-256-cbc"},
};

}  // namespace

const wc_cipher *find_cipher(const char *name) {
  if (name == nullptr) return nullptr;
  for (const Alias &a : kAliases) {
    if (strcasecmp(name, a.alias.data()) == 0) return find_cipher(a.target.data());
  }
  for (const wc_cipher &c : kCiphers) {
    if (strcasecmp(name, c.name) == 0) return &c;
  }
  return nullptr;
}

std::span<const wc_cipher> all_ciphers() { return kCiphers; }

const wc_cipher &unpadded(const wc_cipher &cipher) {
  for (size_t i = 0; i < kPaddedCount; ++i) {
    if (&cipher == &kCiphers[i]) return kUnpaddedCiphers[i];
  }
  return cipher;
}

}  // namespace warpcrypt
