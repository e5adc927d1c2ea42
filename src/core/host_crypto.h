// Host crypto: the primitives the formats and the API run on the host, a
// few bytes at a time (random bytes, the KDFs, HMAC, digests, X25519,
// Ed25519, P-256 and HPKE, RSA-OAEP, the sealing of a file key, an SSH key
// file's decryption and its DER), apart from the compute backends' bulk
// ciphers (core/backend_tables.h). The formats take a HostCrypto from
// their caller and never reach kHostCrypto themselves, so a test or a
// fuzzer hands them a seeded RandomSource and gets the same file every run;
// the API layer hands them kHostCrypto.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/secret_bytes.h"
#include "warpcrypt/warpcrypt.h"

namespace warpcrypt {

// Where keys, nonces, salts and identities come from.
class RandomSource {
 public:
  virtual ~RandomSource() = default;
  virtual wc_status fill(std::span<uint8_t> out) = 0;
};

// A text coding that takes its input in pieces: `openssl enc -a`'s base64.
class TextCoder {
 public:
  virtual ~TextCoder() = default;
  // The most bytes one update of `in_len` bytes writes, and final.
  virtual size_t update_bound(size_t in_len) const = 0;
  static constexpr size_t kFinalBound = 80;
  // WC_ERR_FORMAT where decoding meets what is not base64.
  virtual wc_status update(std::span<const uint8_t> in, uint8_t *out, size_t *out_len) = 0;
  // WC_ERR_FORMAT where decoded text ends inside a group of four characters.
  virtual wc_status final(uint8_t *out, size_t *out_len) = 0;
};

// ML-KEM-768's sizes (FIPS 203 table 3).
inline constexpr size_t kMlkem768EncapsulationKeyLen = 1184;
inline constexpr size_t kMlkem768DecapsulationKeyLen = 2400;
inline constexpr size_t kMlkem768CiphertextLen = 1088;
inline constexpr size_t kMlkem768SeedLen = 64;  // d || z
inline constexpr size_t kMlkemSharedSecretLen = 32;
inline constexpr size_t kMlkemRandomnessLen = 32;  // Encaps' message m

// P-256's sizes (SEC 1): a point uncompressed (0x04 || x || y) and
// compressed (0x02 or 0x03 || x), and a scalar.
inline constexpr size_t kP256PointLen = 65;
inline constexpr size_t kP256CompressedPointLen = 33;
inline constexpr size_t kP256ScalarLen = 32;

// An X25519 scalar or point (RFC 7748).
inline constexpr size_t kX25519Len = 32;

// HPKE's KEMs here, by their identifiers in RFC 9180 and draft-ietf-hpke-pq:
// DHKEM(P-256, HKDF-SHA256) and MLKEM768-P256 for age's tagged recipients,
// MLKEM768-X25519 for its age1pq recipients.
enum class HpkeKem : uint16_t { dhkem_p256 = 0x0010, mlkem768_p256 = 0x0050, mlkem768_x25519 = 0x647a };
// A KEM's public key: an uncompressed point, or ML-KEM-768's key then the
// classical one.
constexpr size_t hpke_public_key_len(HpkeKem kem) {
  switch (kem) {
    case HpkeKem::dhkem_p256: return kP256PointLen;
    case HpkeKem::mlkem768_p256: return kMlkem768EncapsulationKeyLen + kP256PointLen;
    case HpkeKem::mlkem768_x25519: return kMlkem768EncapsulationKeyLen + kX25519Len;
  }
  return 0;
}
// A KEM's encapsulated key: the ephemeral share, after ML-KEM's ciphertext.
constexpr size_t hpke_encapsulation_len(HpkeKem kem) {
  switch (kem) {
    case HpkeKem::dhkem_p256: return kP256PointLen;
    case HpkeKem::mlkem768_p256: return kMlkem768CiphertextLen + kP256PointLen;
    case HpkeKem::mlkem768_x25519: return kMlkem768CiphertextLen + kX25519Len;
  }
  return 0;
}
// A receiver's private key: for the hybrid KEMs the draft's seed, which key
// generation expands (every KEM here has 32 bytes).
inline constexpr size_t kHpkePrivateKeyLen = 32;

// An RSA key as an SSH key holds it: big-endian integers. The private
// parts are wiped on destruction.
struct RsaPublicKey {
  std::vector<uint8_t> n, e;
};
struct RsaPrivateKey {
  RsaPublicKey public_key;
  std::vector<uint8_t> d, p, q, iqmp;
  ~RsaPrivateKey() {
    for (std::vector<uint8_t> *part : {&d, &p, &q, &iqmp}) secure_wipe(part->data(), part->size());
  }
};

// The DER syntaxes a private key comes in: PKCS#1's RSAPrivateKey (PEM's
// "RSA PRIVATE KEY") and PKCS#8's PrivateKeyInfo (PEM's "PRIVATE KEY").
enum class PrivateKeyDer { pkcs1_rsa, pkcs8 };

// A private key read from DER: an RSA key's integers or an Ed25519 key's
// seed; wiped on destruction.
struct DerPrivateKey {
  enum class Type { rsa, ed25519 };
  Type type = Type::rsa;
  RsaPrivateKey rsa;
  std::array<uint8_t, 32> ed25519_seed{};
  ~DerPrivateKey() { secure_wipe(ed25519_seed.data(), ed25519_seed.size()); }
};

struct HostCrypto {
  // Every random byte a format or the API draws.
  RandomSource *random;
  // `openssl enc`'s key and IV from a passphrase.
  wc_status (*derive_key_iv)(std::span<uint8_t> key_and_iv, wc_kdf kdf, const char *digest, uint32_t iterations,
                             std::span<const uint8_t> passphrase, std::span<const uint8_t> salt);
  // PBKDF2-HMAC and HKDF (RFC 5869) with a named digest, for the formats.
  wc_status (*pbkdf2)(std::span<uint8_t> out, const char *digest, uint32_t iterations,
                      std::span<const uint8_t> passphrase, std::span<const uint8_t> salt);
  wc_status (*hkdf)(std::span<uint8_t> out, const char *digest, std::span<const uint8_t> secret,
                    std::span<const uint8_t> salt, std::span<const uint8_t> info);
  // Argon2id (libsodium's crypto_pwhash, one lane): `ops` passes over
  // `memory` bytes, a multiple of 1 KiB.
  wc_status (*argon2id)(std::span<uint8_t> out, uint32_t ops, uint64_t memory, std::span<const uint8_t> passphrase,
                        std::span<const uint8_t> salt);
  // HMAC with a named digest; `out` is the digest's length.
  wc_status (*hmac)(std::span<uint8_t> out, const char *digest, std::span<const uint8_t> key,
                    std::span<const uint8_t> message);
  // scrypt (RFC 7914) with N = 2^log2_n, r = 8 and p = 1, as age uses it;
  // WC_ERR_OUT_OF_MEMORY where its 2^log2_n KiB cannot be allocated.
  wc_status (*scrypt)(std::span<uint8_t> out, std::span<const uint8_t> passphrase, std::span<const uint8_t> salt,
                      unsigned log2_n);
  // X25519 (RFC 7748): scalar * point, or scalar * the base point when
  // `point` is empty. WC_ERR_CRYPTO_LIBRARY for an all-zero result (a
  // low-order point), which RFC 7748 tells a protocol to refuse.
  wc_status (*x25519)(std::span<uint8_t, 32> out, std::span<const uint8_t, 32> scalar, std::span<const uint8_t> point);
  // Ed25519 (RFC 8032) from a 32-byte seed: its public key, a signature,
  // and the check of one (WC_ERR_AUTH for a signature that does not verify,
  // non-canonical encodings and small-order keys included).
  wc_status (*ed25519_public_key)(std::span<uint8_t, 32> public_key, std::span<const uint8_t, 32> seed);
  wc_status (*ed25519_sign)(std::span<uint8_t, 64> signature, std::span<const uint8_t> message,
                            std::span<const uint8_t, 32> seed);
  wc_status (*ed25519_verify)(std::span<const uint8_t, 64> signature, std::span<const uint8_t> message,
                              std::span<const uint8_t, 32> public_key);
  // ML-KEM-768 (FIPS 203): the key pair of a 64-byte seed d || z; Encaps
  // with the 32 bytes of randomness drawn from `random` (WC_ERR_FORMAT for an
  // encapsulation key that fails section 7.2's modulus check); Decaps with
  // implicit rejection (WC_ERR_FORMAT only for a decapsulation key whose
  // stored hash is wrong: a bad ciphertext yields a pseudorandom secret).
  void (*mlkem768_keygen)(std::span<uint8_t, kMlkem768EncapsulationKeyLen> encapsulation_key,
                          std::span<uint8_t, kMlkem768DecapsulationKeyLen> decapsulation_key,
                          std::span<const uint8_t, kMlkem768SeedLen> seed);
  wc_status (*mlkem768_encaps)(std::span<uint8_t, kMlkem768CiphertextLen> ciphertext,
                               std::span<uint8_t, kMlkemSharedSecretLen> shared_secret,
                               std::span<const uint8_t, kMlkem768EncapsulationKeyLen> encapsulation_key,
                               RandomSource &random);
  wc_status (*mlkem768_decaps)(std::span<uint8_t, kMlkemSharedSecretLen> shared_secret,
                               std::span<const uint8_t, kMlkem768DecapsulationKeyLen> decapsulation_key,
                               std::span<const uint8_t, kMlkem768CiphertextLen> ciphertext);
  // A P-256 point's uncompressed encoding from its compressed or
  // uncompressed one: WC_ERR_FORMAT for any other length or leading byte,
  // the point at infinity, or a point off the curve.
  wc_status (*p256_decode_point)(std::span<uint8_t, kP256PointLen> uncompressed, std::span<const uint8_t> encoded);
  // HPKE (RFC 9180) in base mode with `kem`, HKDF-SHA256 and
  // ChaCha20-Poly1305 (backends/cpu/hpke.h says more). SealBase: `enc` of
  // hpke_encapsulation_len(kem) bytes, `sealed` the message then its tag,
  // the ephemeral key drawn from `random` so that a seeded source reproduces
  // the RFC's and the draft's vectors; WC_ERR_FORMAT for a public key the
  // KEM refuses as no key, WC_ERR_INVALID_ARGUMENT for an X25519 key of low
  // order (no one could open what is sealed to it) or lengths that do not
  // fit. OpenBase: the message; WC_ERR_AUTH where this private key does not
  // open it, WC_ERR_FORMAT for an `enc` whose X25519 share is of low order.
  // Only MLKEM768-X25519 opens, and gives a private key's public key: the
  // other KEMs' private keys live in hardware (WC_ERR_UNSUPPORTED).
  wc_status (*hpke_seal_base)(HpkeKem kem, std::span<const uint8_t> public_key, std::span<const uint8_t> info,
                              std::span<const uint8_t> aad, std::span<const uint8_t> message, RandomSource &random,
                              std::span<uint8_t> enc, std::span<uint8_t> sealed);
  wc_status (*hpke_open_base)(HpkeKem kem, std::span<const uint8_t> private_key, std::span<const uint8_t> enc,
                              std::span<const uint8_t> info, std::span<const uint8_t> aad,
                              std::span<const uint8_t> sealed, std::span<uint8_t> message);
  wc_status (*hpke_public_key)(HpkeKem kem, std::span<const uint8_t> private_key, std::span<uint8_t> public_key);
  // OpenBSD's bcrypt-pbkdf, which OpenSSH encrypts key files with; `out` of
  // 1 to 1024 bytes, `rounds` at least 1 (each costs milliseconds: the
  // caller caps it).
  wc_status (*bcrypt_pbkdf)(std::span<uint8_t> out, std::span<const uint8_t> passphrase,
                            std::span<const uint8_t> salt, uint32_t rounds);
  // A message digest by name ("sha256", "sha512"); `out` is its length.
  wc_status (*digest)(std::span<uint8_t> out, const char *digest, std::span<const uint8_t> message);
  // An Ed25519 public key's point on Curve25519 (the birational map RFC 7748
  // gives), as age's ssh-ed25519 recipients use it; WC_ERR_FORMAT for a
  // key that is no valid point or of small order.
  wc_status (*ed25519_to_x25519)(std::span<uint8_t, 32> out, std::span<const uint8_t, 32> ed25519_public_key);
  // RSA-OAEP with `digest` for the hash and MGF1, and `label` (age's
  // ssh-rsa stanzas). Encryption draws its seed from OpenSSL's CSPRNG, not
  // from `random`. Decryption is WC_ERR_AUTH for a ciphertext that does not
  // open, or a plaintext longer than `out`; WC_ERR_INVALID_ARGUMENT for a
  // key OpenSSL refuses.
  wc_status (*rsa_oaep_encrypt)(std::vector<uint8_t> *out, const RsaPublicKey &key, const char *digest,
                                std::span<const uint8_t> label, std::span<const uint8_t> message);
  wc_status (*rsa_oaep_decrypt)(std::span<uint8_t> out, size_t *out_len, const RsaPrivateKey &key,
                                const char *digest, std::span<const uint8_t> label,
                                std::span<const uint8_t> ciphertext);
  // ChaCha20-Poly1305 (RFC 8439) of one short message without associated
  // data, as age wraps a file key: `sealed` is the ciphertext, then the
  // 16-byte tag. Opening is WC_ERR_AUTH, writing nothing, where the tag does
  // not match; both are WC_ERR_INVALID_ARGUMENT where the lengths differ by
  // other than the tag.
  wc_status (*chacha20_poly1305_seal)(std::span<uint8_t> sealed, std::span<const uint8_t, 32> key,
                                      std::span<const uint8_t, 12> nonce, std::span<const uint8_t> message);
  wc_status (*chacha20_poly1305_open)(std::span<uint8_t> message, std::span<const uint8_t, 32> key,
                                      std::span<const uint8_t, 12> nonce, std::span<const uint8_t> sealed);
  // Decrypts a short buffer (an OpenSSH key file's private section) with a
  // cipher by OpenSSL's name ("aes-256-ctr", "aes-256-cbc"), no padding;
  // `out` is as long as `in`. WC_ERR_INVALID_ARGUMENT for a cipher, key or
  // IV length it refuses, or CBC over a part of a block.
  wc_status (*decrypt)(std::span<uint8_t> out, const char *cipher, std::span<const uint8_t> key,
                       std::span<const uint8_t> iv, std::span<const uint8_t> in);
  // A private key in `der`, all of it in `syntax`: a two-prime RSA key
  // (PKCS#1 or PKCS#8) or an Ed25519 key (PKCS#8). WC_ERR_FORMAT for bytes
  // that are no such DER, or that go on past it; WC_ERR_UNSUPPORTED for a
  // PKCS#8 key of another algorithm, or an RSA key of more than two primes.
  // An RSA key must be consistent as Go's Validate has it (p q = n, d e = 1
  // mod p - 1 and q - 1), else WC_ERR_FORMAT; its size is the caller's to
  // check.
  wc_status (*parse_private_key_der)(std::span<const uint8_t> der, PrivateKeyDer syntax, DerPrivateKey *key);
  // `openssl enc -a`'s base64, byte for byte: encoding writes lines of 64
  // characters, each ending in LF, or with `one_line` (-A) one line and no
  // LF; decoding ignores line breaks and spaces. Null when out of memory.
  std::unique_ptr<TextCoder> (*base64)(bool encode, bool one_line);
};

// The operating system's CSPRNG (through OpenSSL), OpenSSL's KDFs, HMAC,
// digests, RSA and base64, libsodium's Argon2id, X25519 and Ed25519, and,
// written here, bcrypt-pbkdf (on OpenSSL's SHA-512), Keccak, ML-KEM-768 and
// HPKE (on OpenSSL's HMAC and P-256, libsodium's X25519 and
// ChaCha20-Poly1305) (backends/cpu/host_crypto.cpp).
extern const HostCrypto kHostCrypto;

}  // namespace warpcrypt
