#include "age/age_pq.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "age/key.h"
#include "core/secret_bytes.h"

namespace warpcrypt::age {
namespace {

// draft-ietf-hpke-pq's label for MLKEM768-X25519, X-Wing's "\.//^\".
constexpr std::string_view kCombinerLabel = "\\.//^\\";
constexpr uint16_t kKemId = 0x647a;
constexpr uint16_t kKdfId = 0x0001;   // HKDF-SHA256
constexpr uint16_t kAeadId = 0x0003;  // ChaCha20-Poly1305
constexpr size_t kX25519Len = 32;
constexpr std::string_view kHpkeInfo = "age-encryption.org/mlkem768x25519";

// The private key's expansion, wiped on destruction.
struct ExpandedKey {
  std::array<uint8_t, kMlkem768EncapsulationKeyLen> mlkem_public{};
  std::array<uint8_t, kMlkem768DecapsulationKeyLen> mlkem_private{};
  std::array<uint8_t, kX25519Len> x25519_private{};
  std::array<uint8_t, kX25519Len> x25519_public{};
  ExpandedKey() = default;
  ExpandedKey(const ExpandedKey &) = delete;
  ExpandedKey &operator=(const ExpandedKey &) = delete;
  ~ExpandedKey() {
    secure_wipe(mlkem_private.data(), mlkem_private.size());
    secure_wipe(x25519_private.data(), x25519_private.size());
  }
};

// SHAKE256(seed) gives 64 bytes of ML-KEM seed, then the X25519 scalar.
// (draft-ietf-hpke-pq reads further while the scalar is invalid, which no
// 32-byte X25519 scalar is.)
wc_status expand(const HostCrypto &crypto, std::span<const uint8_t, kHybridSeedLen> seed, ExpandedKey *key) {
  std::array<uint8_t, kMlkem768SeedLen + kX25519Len> expanded{};
  crypto.shake256(expanded, seed);
  crypto.mlkem768_keygen(key->mlkem_public, key->mlkem_private,
                         std::span<const uint8_t>(expanded).first<kMlkem768SeedLen>());
  std::copy_n(expanded.begin() + kMlkem768SeedLen, kX25519Len, key->x25519_private.begin());
  secure_wipe(expanded.data(), expanded.size());
  return crypto.x25519(key->x25519_public, key->x25519_private, {});
}

// SHA3-256(ss_ML-KEM || ss_X25519 || ct_X25519 || pk_X25519 || label).
void combine(const HostCrypto &crypto, std::span<const uint8_t, 32> mlkem_secret,
             std::span<const uint8_t, 32> x25519_secret, std::span<const uint8_t> x25519_share,
             std::span<const uint8_t> x25519_public, std::span<uint8_t, 32> shared_secret) {
  std::array<uint8_t, 4 * 32 + kCombinerLabel.size()> input{};
  auto at = std::copy(mlkem_secret.begin(), mlkem_secret.end(), input.begin());
  at = std::copy(x25519_secret.begin(), x25519_secret.end(), at);
  at = std::copy(x25519_share.begin(), x25519_share.end(), at);
  at = std::copy(x25519_public.begin(), x25519_public.end(), at);
  std::copy(kCombinerLabel.begin(), kCombinerLabel.end(), at);
  crypto.sha3_256(shared_secret, input);
  secure_wipe(input.data(), input.size());
}

// "HPKE-v1" || suite_id || label || tail, where suite_id is "HPKE" and the
// three algorithm identifiers, two bytes each, big-endian (RFC 9180 5.1).
std::vector<uint8_t> hpke_labeled(std::string_view label, std::span<const uint8_t> tail) {
  constexpr std::string_view kVersion = "HPKE-v1";
  constexpr std::string_view kSuitePrefix = "HPKE";
  std::vector<uint8_t> out(kVersion.begin(), kVersion.end());
  out.insert(out.end(), kSuitePrefix.begin(), kSuitePrefix.end());
  for (uint16_t id : {kKemId, kKdfId, kAeadId}) {
    out.push_back(static_cast<uint8_t>(id >> 8));
    out.push_back(static_cast<uint8_t>(id));
  }
  out.insert(out.end(), label.begin(), label.end());
  out.insert(out.end(), tail.begin(), tail.end());
  return out;
}

// LabeledExtract: HKDF-Extract(salt, "HPKE-v1" || suite_id || label || ikm);
// an empty salt is HashLen zero bytes (RFC 5869 section 2.2).
wc_status labeled_extract(const HostCrypto &crypto, std::span<const uint8_t> salt, std::string_view label,
                          std::span<const uint8_t> ikm, std::span<uint8_t, 32> prk) {
  const std::array<uint8_t, 32> zero_salt{};
  std::vector<uint8_t> message = hpke_labeled(label, ikm);
  const wc_status status = crypto.hmac(prk, "sha256", salt.empty() ? zero_salt : salt, message);
  secure_wipe(message.data(), message.size());
  return status;
}

// LabeledExpand for L <= 32: HKDF-Expand's first block,
// HMAC(prk, I2OSP(L, 2) || "HPKE-v1" || suite_id || label || info || 0x01).
wc_status labeled_expand(const HostCrypto &crypto, std::span<const uint8_t, 32> prk, std::string_view label,
                         std::span<const uint8_t> info, std::span<uint8_t> out) {
  std::vector<uint8_t> message = {0, static_cast<uint8_t>(out.size())};
  const std::vector<uint8_t> labeled = hpke_labeled(label, info);
  message.insert(message.end(), labeled.begin(), labeled.end());
  message.push_back(1);
  std::array<uint8_t, 32> block{};
  const wc_status status = crypto.hmac(block, "sha256", prk, message);
  std::copy_n(block.begin(), out.size(), out.begin());
  secure_wipe(block.data(), block.size());
  return status;
}

}  // namespace

wc_status hybrid_public_key(const HostCrypto &crypto, std::span<const uint8_t, kHybridSeedLen> seed,
                            std::span<uint8_t, kHybridPublicKeyLen> public_key) {
  ExpandedKey key;
  const wc_status status = expand(crypto, seed, &key);
  if (status != WC_OK) return status;
  std::copy(key.mlkem_public.begin(), key.mlkem_public.end(), public_key.begin());
  std::copy(key.x25519_public.begin(), key.x25519_public.end(), public_key.begin() + kMlkem768EncapsulationKeyLen);
  return WC_OK;
}

wc_status hybrid_encapsulate(const HostCrypto &crypto, std::span<const uint8_t, kHybridPublicKeyLen> public_key,
                             std::span<uint8_t, kHybridEncapsulationLen> encapsulation,
                             std::span<uint8_t, 32> shared_secret, const char **detail) {
  const auto mlkem_public = public_key.first<kMlkem768EncapsulationKeyLen>();
  const auto x25519_public = public_key.last<kX25519Len>();
  std::array<uint8_t, 32> mlkem_secret{};
  std::array<uint8_t, 32> x25519_secret{};
  std::array<uint8_t, kX25519Len> ephemeral{};
  wc_status status =
      crypto.mlkem768_encaps(encapsulation.first<kMlkem768CiphertextLen>(), mlkem_secret, mlkem_public, *crypto.random);
  if (status == WC_ERR_FORMAT) *detail = "the ML-KEM-768 half of an age1pq1 recipient is not a valid key";
  if (status == WC_OK) status = crypto.random->fill(ephemeral);
  const auto share = encapsulation.last<kX25519Len>();
  if (status == WC_OK) status = crypto.x25519(share, ephemeral, {});
  if (status == WC_OK && crypto.x25519(x25519_secret, ephemeral, x25519_public) != WC_OK) {
    *detail = "the X25519 half of an age1pq1 recipient is a low-order point";
    status = WC_ERR_FORMAT;
  }
  if (status == WC_OK) combine(crypto, mlkem_secret, x25519_secret, share, x25519_public, shared_secret);
  secure_wipe(mlkem_secret.data(), mlkem_secret.size());
  secure_wipe(x25519_secret.data(), x25519_secret.size());
  secure_wipe(ephemeral.data(), ephemeral.size());
  return status;
}

wc_status hybrid_decapsulate(const HostCrypto &crypto, std::span<const uint8_t, kHybridSeedLen> seed,
                             std::span<const uint8_t, kHybridEncapsulationLen> encapsulation,
                             std::span<uint8_t, 32> shared_secret) {
  ExpandedKey key;
  wc_status status = expand(crypto, seed, &key);
  std::array<uint8_t, 32> mlkem_secret{};
  std::array<uint8_t, 32> x25519_secret{};
  const auto share = encapsulation.last<kX25519Len>();
  // The key was expanded just now, so ML-KEM's key check cannot fail; a
  // failure here is the provider's, not the stanza's.
  if (status == WC_OK &&
      crypto.mlkem768_decaps(mlkem_secret, key.mlkem_private, encapsulation.first<kMlkem768CiphertextLen>()) != WC_OK) {
    status = WC_ERR_CRYPTO_LIBRARY;
  }
  if (status == WC_OK && crypto.x25519(x25519_secret, key.x25519_private, share) != WC_OK) status = WC_ERR_FORMAT;
  if (status == WC_OK) combine(crypto, mlkem_secret, x25519_secret, share, key.x25519_public, shared_secret);
  secure_wipe(mlkem_secret.data(), mlkem_secret.size());
  secure_wipe(x25519_secret.data(), x25519_secret.size());
  return status;
}

wc_status hpke_key_schedule(const HostCrypto &crypto, std::span<const uint8_t, 32> shared_secret,
                            std::span<const uint8_t> info, std::span<uint8_t, 32> key,
                            std::span<uint8_t, 12> base_nonce) {
  // key_schedule_context = mode (0, base) || psk_id_hash || info_hash.
  std::array<uint8_t, 1 + 32 + 32> context{};
  wc_status status = labeled_extract(crypto, {}, "psk_id_hash", {}, std::span<uint8_t>(context).subspan<1, 32>());
  if (status == WC_OK) status = labeled_extract(crypto, {}, "info_hash", info, std::span<uint8_t>(context).last<32>());
  DerivedKey secret;
  if (status == WC_OK) status = labeled_extract(crypto, shared_secret, "secret", {}, secret.bytes);
  if (status == WC_OK) status = labeled_expand(crypto, secret.bytes, "key", context, key);
  if (status == WC_OK) status = labeled_expand(crypto, secret.bytes, "base_nonce", context, base_nonce);
  return status;
}

wc_status hybrid_wrap(const HostCrypto &crypto, std::span<const uint8_t> public_key, const FileKey &file_key,
                      Stanza *stanza, const char **detail) {
  if (public_key.size() != kHybridPublicKeyLen) return WC_ERR_INVALID_ARGUMENT;
  std::array<uint8_t, kHybridEncapsulationLen> encapsulation{};
  std::array<uint8_t, 32> shared_secret{};
  DerivedKey key;
  std::array<uint8_t, 12> nonce{};
  std::array<uint8_t, kWrappedKeyLen> wrapped{};
  wc_status status =
      hybrid_encapsulate(crypto, public_key.first<kHybridPublicKeyLen>(), encapsulation, shared_secret, detail);
  if (status == WC_OK) status = hpke_key_schedule(crypto, shared_secret, bytes_of(kHpkeInfo), key.bytes, nonce);
  secure_wipe(shared_secret.data(), shared_secret.size());
  if (status == WC_OK) status = seal_file_key(crypto, key.bytes, nonce, file_key, &wrapped);
  if (status != WC_OK) return status;
  stanza->type = kHybridStanzaType;
  stanza->args = {encode_base64(encapsulation)};
  stanza->body.assign(wrapped.begin(), wrapped.end());
  return WC_OK;
}

wc_status hybrid_unwrap(const HostCrypto &crypto, std::span<const uint8_t, kHybridSeedLen> seed, const Stanza &stanza,
                        FileKey *file_key, const char **detail) {
  if (stanza.type != kHybridStanzaType) return WC_ERR_NO_IDENTITY;
  auto bad = [detail](const char *why) {
    *detail = why;
    return WC_ERR_FORMAT;
  };
  if (stanza.args.size() != 1) return bad("malformed mlkem768x25519 stanza: it takes exactly one argument");
  const auto encapsulation = decode_base64(stanza.args[0]);
  if (!encapsulation || encapsulation->size() != kHybridEncapsulationLen) {
    return bad("malformed mlkem768x25519 stanza: the encapsulation is not 1120 bytes of canonical base64");
  }
  if (stanza.body.size() != kWrappedKeyLen) return bad("malformed mlkem768x25519 stanza: the body is not 32 bytes");
  std::array<uint8_t, 32> shared_secret{};
  wc_status status = hybrid_decapsulate(
      crypto, seed, std::span<const uint8_t, kHybridEncapsulationLen>(encapsulation->data(), kHybridEncapsulationLen),
      shared_secret);
  if (status == WC_ERR_FORMAT) {
    return bad("malformed mlkem768x25519 stanza: its X25519 share is a low-order point (all-zero shared secret)");
  }
  DerivedKey key;
  std::array<uint8_t, 12> nonce{};
  if (status == WC_OK) status = hpke_key_schedule(crypto, shared_secret, bytes_of(kHpkeInfo), key.bytes, nonce);
  secure_wipe(shared_secret.data(), shared_secret.size());
  if (status == WC_OK) status = open_file_key(crypto, key.bytes, nonce, stanza.body, file_key);
  // ML-KEM's implicit rejection makes another recipient's stanza fail here.
  return status == WC_ERR_AUTH ? WC_ERR_NO_IDENTITY : status;
}

}  // namespace warpcrypt::age
