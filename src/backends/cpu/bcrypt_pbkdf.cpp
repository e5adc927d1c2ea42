#include "backends/cpu/bcrypt_pbkdf.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <algorithm>
#include <array>
#include <vector>

#include "backends/cpu/blowfish_tables.h"

namespace warpcrypt::cpu {
namespace {

constexpr size_t kHashLen = 32;  // bcrypt_hash's output
constexpr size_t kMaxOut = 1024;

// Blowfish's key-dependent state; wiped on destruction, as it is a function
// of the passphrase.
class Eksblowfish {
 public:
  Eksblowfish() {
    std::copy(std::begin(kBlowfishInitialP), std::end(kBlowfishInitialP), p_.begin());
    for (size_t box = 0; box < 4; ++box) std::copy_n(kBlowfishInitialS[box], 256, s_[box].begin());
  }
  ~Eksblowfish() {
    OPENSSL_cleanse(p_.data(), sizeof p_);
    OPENSSL_cleanse(s_.data(), sizeof s_);
  }
  Eksblowfish(const Eksblowfish &) = delete;
  Eksblowfish &operator=(const Eksblowfish &) = delete;

  // The salted key schedule: the key XORed into P, then P and the S-boxes
  // replaced by the encryption of a running block that the salt (when
  // there is one) is XORed into before each step.
  void expand(std::span<const uint8_t> salt, std::span<const uint8_t> key) {
    size_t key_at = 0;
    for (uint32_t &word : p_) word ^= next_word(key, &key_at);
    size_t salt_at = 0;
    uint32_t left = 0, right = 0;
    const auto step = [&](uint32_t *out) {
      if (!salt.empty()) {
        left ^= next_word(salt, &salt_at);
        right ^= next_word(salt, &salt_at);
      }
      encipher(&left, &right);
      out[0] = left;
      out[1] = right;
    };
    for (size_t i = 0; i < p_.size(); i += 2) step(&p_[i]);
    for (auto &box : s_) {
      for (size_t i = 0; i < box.size(); i += 2) step(&box[i]);
    }
  }

  void encipher(uint32_t *left, uint32_t *right) const {
    uint32_t l = *left ^ p_[0], r = *right;
    for (size_t i = 1; i <= 16; i += 2) {
      r ^= f(l) ^ p_[i];
      l ^= f(r) ^ p_[i + 1];
    }
    *left = r ^ p_[17];
    *right = l;
  }

 private:
  uint32_t f(uint32_t x) const {
    return ((s_[0][x >> 24] + s_[1][(x >> 16) & 0xff]) ^ s_[2][(x >> 8) & 0xff]) + s_[3][x & 0xff];
  }
  // Four bytes of `bytes` as a big-endian word, wrapping round its end.
  static uint32_t next_word(std::span<const uint8_t> bytes, size_t *at) {
    uint32_t word = 0;
    for (int i = 0; i < 4; ++i) {
      word = word << 8 | bytes[*at];
      *at = (*at + 1) % bytes.size();
    }
    return word;
  }

  std::array<uint32_t, 18> p_{};
  std::array<std::array<uint32_t, 256>, 4> s_{};
};

using Sha512 = std::array<uint8_t, SHA512_DIGEST_LENGTH>;

// OpenBSD's bcrypt_hash: eksblowfish keyed by the hashed passphrase and
// salt, 64 times encrypting a fixed 32-byte text; its words come out
// little-endian.
void bcrypt_hash(const Sha512 &passphrase_hash, const Sha512 &salt_hash, std::array<uint8_t, kHashLen> *out) {
  static constexpr char kText[] = "OxychromaticBlowfishSwatDynamite";
  Eksblowfish state;
  state.expand(salt_hash, passphrase_hash);
  for (int i = 0; i < 64; ++i) {
    state.expand({}, salt_hash);
    state.expand({}, passphrase_hash);
  }
  std::array<uint32_t, kHashLen / 4> words{};
  for (size_t i = 0; i < words.size(); ++i) {
    for (size_t b = 0; b < 4; ++b) words[i] = words[i] << 8 | static_cast<uint8_t>(kText[4 * i + b]);
  }
  for (int i = 0; i < 64; ++i) {
    for (size_t w = 0; w < words.size(); w += 2) state.encipher(&words[w], &words[w + 1]);
  }
  for (size_t i = 0; i < words.size(); ++i) {
    for (size_t b = 0; b < 4; ++b) (*out)[4 * i + b] = static_cast<uint8_t>(words[i] >> (8 * b));
  }
  OPENSSL_cleanse(words.data(), sizeof words);
}

}  // namespace

wc_status bcrypt_pbkdf(std::span<uint8_t> out, std::span<const uint8_t> passphrase, std::span<const uint8_t> salt,
                       uint32_t rounds) {
  if (out.empty() || out.size() > kMaxOut || rounds < 1) return WC_ERR_INVALID_ARGUMENT;
  // The output is spread: block `count` supplies bytes count-1,
  // count-1+stride, ..., so every byte depends on the last block computed.
  const size_t stride = (out.size() + kHashLen - 1) / kHashLen;
  const size_t per_block = (out.size() + stride - 1) / stride;
  Sha512 passphrase_hash{}, salt_hash{};
  SHA512(passphrase.data(), passphrase.size(), passphrase_hash.data());
  std::vector<uint8_t> counted_salt(salt.begin(), salt.end());
  counted_salt.resize(salt.size() + 4);
  std::array<uint8_t, kHashLen> block{}, accumulated{};
  for (uint32_t count = 1; (count - 1) < stride; ++count) {
    for (size_t b = 0; b < 4; ++b) counted_salt[salt.size() + b] = static_cast<uint8_t>(count >> (24 - 8 * b));
    SHA512(counted_salt.data(), counted_salt.size(), salt_hash.data());
    bcrypt_hash(passphrase_hash, salt_hash, &block);
    accumulated = block;
    for (uint32_t round = 1; round < rounds; ++round) {
      SHA512(block.data(), block.size(), salt_hash.data());
      bcrypt_hash(passphrase_hash, salt_hash, &block);
      for (size_t i = 0; i < kHashLen; ++i) accumulated[i] ^= block[i];
    }
    for (size_t i = 0; i < per_block; ++i) {
      const size_t at = i * stride + (count - 1);
      if (at >= out.size()) break;
      out[at] = accumulated[i];
    }
  }
  OPENSSL_cleanse(passphrase_hash.data(), passphrase_hash.size());
  OPENSSL_cleanse(salt_hash.data(), salt_hash.size());
  OPENSSL_cleanse(block.data(), block.size());
  OPENSSL_cleanse(accumulated.data(), accumulated.size());
  return WC_OK;
}

}  // namespace warpcrypt::cpu
