// The cipher table: what each name means and which properties follow from
// its mode. Everything above the backends asks these predicates instead of
// switching on names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "warpcrypt/warpcrypt.h"

namespace warpcrypt {

enum class Primitive : uint8_t { aes, chacha20, salsa20 };

enum class Mode : uint8_t {
  ecb,
  cbc,
  cfb128,
  cfb8,
  ofb,
  ctr,
  keystream,  // Salsa20 and ChaCha20: a counter-addressed 64-byte keystream
};

}  // namespace warpcrypt

// The public opaque type, defined here so the table can be static.
struct wc_cipher {
  const char *name;
  warpcrypt::Primitive primitive;
  warpcrypt::Mode mode;
  uint8_t key_len;
  uint8_t iv_len;
  uint8_t block_len;
  const char *openssl_name;  // for EVP_CIPHER_fetch; nullptr where OpenSSL lacks it
  // PKCS#7 padding, part of the output's layout: ECB and CBC as named pad,
  // their wc_cipher_unpadded twins (openssl enc -nopad) do not.
  bool pads;
};

namespace warpcrypt {

inline constexpr size_t kAesBlock = 16;
inline constexpr size_t kStreamBlock = 64;  // Salsa20 and ChaCha20 block

inline bool is_padded(const wc_cipher &c) { return c.pads; }

// ECB and CBC take whole blocks, padded or not.
inline bool needs_whole_blocks(const wc_cipher &c) { return c.mode == Mode::ecb || c.mode == Mode::cbc; }

// Modes whose output at any position is computable from the key, the IV and
// at most the 16 ciphertext bytes before it. These decrypt in parallel and in
// random order.
inline bool has_random_access(const wc_cipher &c) { return c.mode != Mode::ofb; }

// CBC and CFB chain through the previous ciphertext block, so only their
// decryption is parallel; OFB's keystream is sequential in both directions.
inline bool is_parallel(const wc_cipher &c, wc_direction direction) {
  switch (c.mode) {
    case Mode::ecb:
    case Mode::ctr:
    case Mode::keystream:
      return true;
    case Mode::cbc:
    case Mode::cfb128:
    case Mode::cfb8:
      return direction == WC_DECRYPT;
    case Mode::ofb:
      return false;
  }
  return false;
}

// Modes whose parallel form needs the ciphertext bytes just before a position.
inline bool chains_on_ciphertext(const wc_cipher &c) {
  return c.mode == Mode::cbc || c.mode == Mode::cfb128 || c.mode == Mode::cfb8;
}

// The unit the backends must be handed: whole cipher blocks for ECB and CBC,
// and for parallel CFB128 decryption (a block's keystream needs the whole
// previous ciphertext block). The last piece of a CFB128 stream may be short.
inline size_t segment_granularity(const wc_cipher &c, wc_direction direction) {
  if (c.mode == Mode::ecb || c.mode == Mode::cbc) return kAesBlock;
  if (c.mode == Mode::cfb128 && direction == WC_DECRYPT) return kAesBlock;
  return 1;
}

const wc_cipher *find_cipher(const char *name);

// Every cipher by name, in the order `warpcrypt enc -list` prints them.
std::span<const wc_cipher> all_ciphers();

// `cipher` without its padding: the unpadded twin of a padded cipher, else
// the cipher itself.
const wc_cipher &unpadded(const wc_cipher &cipher);

}  // namespace warpcrypt
