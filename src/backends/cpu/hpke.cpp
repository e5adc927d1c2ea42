#include "backends/cpu/hpke.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "backends/cpu/kdf.h"
#include "backends/cpu/keccak.h"
#include "backends/cpu/mlkem768.h"
#include "backends/cpu/p256.h"
#include "backends/cpu/sodium_init.h"
#include "core/secret_bytes.h"

namespace warpcrypt::cpu {
namespace {

constexpr uint16_t kHkdfSha256 = 0x0001;
constexpr uint16_t kChaCha20Poly1305 = 0x0003;
constexpr size_t kHashLen = 32;
constexpr size_t kKeyLen = 32;
constexpr size_t kNonceLen = 12;
constexpr size_t kTagLen = crypto_aead_chacha20poly1305_ietf_ABYTES;
// draft-ietf-hpke-pq's labels, the combiner's last input: MLKEM768-P256's,
// and MLKEM768-X25519's, which is X-Wing's.
constexpr std::string_view kMlkem768P256Label = "MLKEM768-P256";
constexpr std::string_view kMlkem768X25519Label = "\\.//^\\";
// The draft's Group.Nseed for P-256: room for four scalar candidates, of
// which the first is out of range with probability below 2^-32.
constexpr int kScalarCandidates = 4;

using SuiteId = std::vector<uint8_t>;

void wipe(std::initializer_list<std::span<uint8_t>> secrets) {
  for (std::span<uint8_t> secret : secrets) secure_wipe(secret.data(), secret.size());
}

void append_u16(std::vector<uint8_t> *out, uint16_t value) {
  out->push_back(static_cast<uint8_t>(value >> 8));
  out->push_back(static_cast<uint8_t>(value));
}

// The KEM's own derivations take "KEM" || kem_id; the key schedule's
// "HPKE" || kem_id || kdf_id || aead_id (RFC 9180 4.1 and 5.1).
SuiteId kem_suite(HpkeKem kem) {
  SuiteId id = {'K', 'E', 'M'};
  append_u16(&id, static_cast<uint16_t>(kem));
  return id;
}
SuiteId hpke_suite(HpkeKem kem) {
  SuiteId id = {'H', 'P', 'K', 'E'};
  for (uint16_t part : {static_cast<uint16_t>(kem), kHkdfSha256, kChaCha20Poly1305}) append_u16(&id, part);
  return id;
}

// "HPKE-v1" || suite_id || label, the prefix of every labeled input.
std::vector<uint8_t> labeled(const SuiteId &suite, std::string_view label) {
  constexpr std::string_view kVersion = "HPKE-v1";
  std::vector<uint8_t> out(kVersion.size() + suite.size() + label.size());
  auto at = std::copy(kVersion.begin(), kVersion.end(), out.begin());
  at = std::copy(suite.begin(), suite.end(), at);
  std::copy(label.begin(), label.end(), at);
  return out;
}

// LabeledExtract: HKDF-Extract(salt, labeled(label) || ikm), HMAC-SHA256
// keyed by the salt, an empty one standing for HashLen zero bytes.
wc_status labeled_extract(const SuiteId &suite, std::span<const uint8_t> salt, std::string_view label,
                          std::span<const uint8_t> ikm, std::span<uint8_t, kHashLen> prk) {
  const std::array<uint8_t, kHashLen> zero_salt{};
  std::vector<uint8_t> message = labeled(suite, label);
  message.insert(message.end(), ikm.begin(), ikm.end());
  const wc_status status = hmac(prk, "sha256", salt.empty() ? std::span<const uint8_t>(zero_salt) : salt, message);
  secure_wipe(message.data(), message.size());
  return status;
}

// LabeledExpand to at most HashLen bytes: HKDF-Expand's first block,
// HMAC(prk, I2OSP(L, 2) || labeled(label) || info || 0x01).
wc_status labeled_expand(const SuiteId &suite, std::span<const uint8_t, kHashLen> prk, std::string_view label,
                         std::span<const uint8_t> info, std::span<uint8_t> out) {
  if (out.size() > kHashLen) return WC_ERR_INVALID_ARGUMENT;
  std::vector<uint8_t> message;
  append_u16(&message, static_cast<uint16_t>(out.size()));
  const std::vector<uint8_t> prefix = labeled(suite, label);
  message.insert(message.end(), prefix.begin(), prefix.end());
  message.insert(message.end(), info.begin(), info.end());
  message.push_back(0x01);
  std::array<uint8_t, kHashLen> block{};
  const wc_status status = hmac(block, "sha256", prk, message);
  std::copy_n(block.begin(), out.size(), out.begin());
  secure_wipe(block.data(), block.size());
  secure_wipe(message.data(), message.size());
  return status;
}

// DHKEM(P-256)'s DeriveKeyPair (RFC 9180 7.1.3): the first candidate
// LabeledExpand(dkp_prk, "candidate", counter) that is a valid scalar, and
// its public key.
wc_status derive_p256_key_pair(const SuiteId &suite, std::span<const uint8_t> ikm,
                               std::span<uint8_t, kP256ScalarLen> scalar,
                               std::span<uint8_t, kP256PointLen> public_key) {
  std::array<uint8_t, kHashLen> dkp_prk{};
  wc_status status = labeled_extract(suite, {}, "dkp_prk", ikm, dkp_prk);
  bool derived = false;
  for (unsigned counter = 0; status == WC_OK && !derived && counter < 256; ++counter) {
    const std::array<uint8_t, 1> counter_byte = {static_cast<uint8_t>(counter)};
    status = labeled_expand(suite, dkp_prk, "candidate", counter_byte, scalar);
    if (status == WC_OK) status = p256_multiply(public_key, scalar, {});
    derived = status == WC_OK;
    if (status == WC_ERR_INVALID_ARGUMENT) status = WC_OK;  // out of range: the next candidate
  }
  secure_wipe(dkp_prk.data(), dkp_prk.size());
  // Every candidate out of range: the RFC's DeriveKeyPairError, of
  // negligible probability.
  return status == WC_OK && !derived ? WC_ERR_CRYPTO_LIBRARY : status;
}

// The draft's Group.RandomScalar over candidates drawn from `random`, and
// the scalar's public point.
wc_status draw_p256_key_pair(RandomSource &random, std::span<uint8_t, kP256ScalarLen> scalar,
                             std::span<uint8_t, kP256PointLen> public_key) {
  for (int candidate = 0; candidate < kScalarCandidates; ++candidate) {
    wc_status status = random.fill(scalar);
    if (status == WC_OK) status = p256_multiply(public_key, scalar, {});
    if (status != WC_ERR_INVALID_ARGUMENT) return status;
  }
  return WC_ERR_CRYPTO_LIBRARY;  // the draft's rejection-sampling failure, of negligible probability
}

// DHKEM's Encap: ExtractAndExpand(x(skE * pkR), enc || pkR).
wc_status dhkem_p256_encapsulate(std::span<const uint8_t, kP256PointLen> recipient, RandomSource &random,
                                 std::span<uint8_t, kP256PointLen> enc, std::span<uint8_t, 32> shared_secret) {
  const SuiteId suite = kem_suite(HpkeKem::dhkem_p256);
  std::array<uint8_t, kP256ScalarLen> ikm{}, ephemeral{};
  std::array<uint8_t, kP256PointLen> shared_point{};
  std::array<uint8_t, kHashLen> eae_prk{};
  wc_status status = random.fill(ikm);
  if (status == WC_OK) status = derive_p256_key_pair(suite, ikm, ephemeral, enc);
  if (status == WC_OK) status = p256_multiply(shared_point, ephemeral, recipient);
  const auto dh = std::span<const uint8_t>(shared_point).subspan(1, kP256ScalarLen);
  if (status == WC_OK) status = labeled_extract(suite, {}, "eae_prk", dh, eae_prk);
  std::array<uint8_t, 2 * kP256PointLen> kem_context{};
  std::copy(enc.begin(), enc.end(), kem_context.begin());
  std::copy(recipient.begin(), recipient.end(), kem_context.begin() + kP256PointLen);
  if (status == WC_OK) status = labeled_expand(suite, eae_prk, "shared_secret", kem_context, shared_secret);
  wipe({ikm, ephemeral, shared_point, eae_prk});
  return status;
}

// The hybrid KEMs' combiner: SHA3-256(ss_PQ || ss_T || ct_T || ek_T ||
// label), where ss_T is the classical shared secret, ct_T the ephemeral
// share and ek_T the recipient's classical key.
void combine(std::span<const uint8_t, kMlkemSharedSecretLen> mlkem_secret, std::span<const uint8_t> classical_secret,
             std::span<const uint8_t> share, std::span<const uint8_t> classical_public, std::string_view label,
             std::span<uint8_t, 32> shared_secret) {
  std::vector<uint8_t> input(mlkem_secret.begin(), mlkem_secret.end());
  for (std::span<const uint8_t> part : {classical_secret, share, classical_public}) {
    input.insert(input.end(), part.begin(), part.end());
  }
  input.insert(input.end(), label.begin(), label.end());
  sha3_256(shared_secret, input);
  secure_wipe(input.data(), input.size());
}

// MLKEM768-P256's Encaps, ss_T being the x coordinate of skE * ek_T.
wc_status mlkem768_p256_encapsulate(std::span<const uint8_t> public_key, RandomSource &random,
                                    std::span<uint8_t> enc, std::span<uint8_t, 32> shared_secret) {
  const auto mlkem_key = public_key.first<kMlkem768EncapsulationKeyLen>();
  const auto point = public_key.subspan<kMlkem768EncapsulationKeyLen, kP256PointLen>();
  const auto mlkem_ciphertext = enc.first<kMlkem768CiphertextLen>();
  const auto share = enc.subspan<kMlkem768CiphertextLen, kP256PointLen>();
  std::array<uint8_t, kMlkemRandomnessLen> randomness{};
  std::array<uint8_t, kMlkemSharedSecretLen> mlkem_secret{};
  std::array<uint8_t, kP256ScalarLen> ephemeral{};
  std::array<uint8_t, kP256PointLen> shared_point{};
  wc_status status = random.fill(randomness);
  if (status == WC_OK) status = mlkem768_encaps(mlkem_ciphertext, mlkem_secret, mlkem_key, randomness);
  if (status == WC_OK) status = draw_p256_key_pair(random, ephemeral, share);
  if (status == WC_OK) status = p256_multiply(shared_point, ephemeral, point);
  if (status == WC_OK) {
    const auto x = std::span<const uint8_t>(shared_point).subspan(1, kP256ScalarLen);
    combine(mlkem_secret, x, share, point, kMlkem768P256Label, shared_secret);
  }
  wipe({randomness, mlkem_secret, ephemeral, shared_point});
  return status;
}

// MLKEM768-X25519's Encaps.
wc_status mlkem768_x25519_encapsulate(std::span<const uint8_t> public_key, RandomSource &random,
                                      std::span<uint8_t> enc, std::span<uint8_t, 32> shared_secret) {
  const auto mlkem_key = public_key.first<kMlkem768EncapsulationKeyLen>();
  const auto x25519_key = public_key.subspan<kMlkem768EncapsulationKeyLen, kX25519Len>();
  const auto mlkem_ciphertext = enc.first<kMlkem768CiphertextLen>();
  const auto share = enc.subspan<kMlkem768CiphertextLen, kX25519Len>();
  std::array<uint8_t, kMlkemRandomnessLen> randomness{};
  std::array<uint8_t, kMlkemSharedSecretLen> mlkem_secret{};
  std::array<uint8_t, kX25519Len> ephemeral{}, x25519_secret{};
  wc_status status = random.fill(randomness);
  if (status == WC_OK) status = mlkem768_encaps(mlkem_ciphertext, mlkem_secret, mlkem_key, randomness);
  if (status == WC_OK) status = random.fill(ephemeral);
  if (status == WC_OK) status = x25519(share, ephemeral, {});
  // With the share computed, the shared secret fails only where the
  // recipient's key is of low order: no one could open what is sealed to it.
  if (status == WC_OK && x25519(x25519_secret, ephemeral, x25519_key) != WC_OK) status = WC_ERR_INVALID_ARGUMENT;
  if (status == WC_OK) combine(mlkem_secret, x25519_secret, share, x25519_key, kMlkem768X25519Label, shared_secret);
  wipe({randomness, mlkem_secret, ephemeral, x25519_secret});
  return status;
}

// An MLKEM768-X25519 private key's expansion, wiped on destruction.
struct Mlkem768X25519KeyPair {
  std::array<uint8_t, kMlkem768EncapsulationKeyLen> mlkem_public{};
  std::array<uint8_t, kMlkem768DecapsulationKeyLen> mlkem_private{};
  std::array<uint8_t, kX25519Len> x25519_private{};
  std::array<uint8_t, kX25519Len> x25519_public{};
  Mlkem768X25519KeyPair() = default;
  Mlkem768X25519KeyPair(const Mlkem768X25519KeyPair &) = delete;
  Mlkem768X25519KeyPair &operator=(const Mlkem768X25519KeyPair &) = delete;
  ~Mlkem768X25519KeyPair() { wipe({mlkem_private, x25519_private}); }
};

// SHAKE256(seed) gives ML-KEM's 64-byte seed, then the X25519 scalar. (The
// draft reads on while the scalar is invalid, which no 32 bytes are for
// X25519.)
wc_status expand_mlkem768_x25519(std::span<const uint8_t, kHpkePrivateKeyLen> seed, Mlkem768X25519KeyPair *pair) {
  std::array<uint8_t, kMlkem768SeedLen + kX25519Len> expanded{};
  shake256(expanded, seed);
  mlkem768_keygen(pair->mlkem_public, pair->mlkem_private, std::span(expanded).first<kMlkem768SeedLen>());
  std::copy_n(expanded.begin() + kMlkem768SeedLen, kX25519Len, pair->x25519_private.begin());
  secure_wipe(expanded.data(), expanded.size());
  return x25519(pair->x25519_public, pair->x25519_private, {});
}

// MLKEM768-X25519's Decaps. WC_ERR_FORMAT where the share is of low order.
wc_status mlkem768_x25519_decapsulate(std::span<const uint8_t, kHpkePrivateKeyLen> seed, std::span<const uint8_t> enc,
                                      std::span<uint8_t, 32> shared_secret) {
  const auto share = enc.subspan<kMlkem768CiphertextLen, kX25519Len>();
  Mlkem768X25519KeyPair pair;
  std::array<uint8_t, kMlkemSharedSecretLen> mlkem_secret{};
  std::array<uint8_t, kX25519Len> x25519_secret{};
  wc_status status = expand_mlkem768_x25519(seed, &pair);
  // The key was expanded just now, so ML-KEM's check of it cannot fail; a
  // failure here is the implementation's, not the encapsulation's.
  if (status == WC_OK &&
      mlkem768_decaps(mlkem_secret, pair.mlkem_private, enc.first<kMlkem768CiphertextLen>()) != WC_OK) {
    status = WC_ERR_CRYPTO_LIBRARY;
  }
  if (status == WC_OK && x25519(x25519_secret, pair.x25519_private, share) != WC_OK) status = WC_ERR_FORMAT;
  if (status == WC_OK) {
    combine(mlkem_secret, x25519_secret, share, pair.x25519_public, kMlkem768X25519Label, shared_secret);
  }
  wipe({mlkem_secret, x25519_secret});
  return status;
}

// The base-mode key schedule (RFC 9180 5.1): the AEAD key and base nonce.
wc_status key_schedule(HpkeKem kem, std::span<const uint8_t, 32> shared_secret, std::span<const uint8_t> info,
                       std::span<uint8_t, kKeyLen> key, std::span<uint8_t, kNonceLen> base_nonce) {
  const SuiteId suite = hpke_suite(kem);
  // key_schedule_context = mode (0, base) || psk_id_hash || info_hash.
  std::array<uint8_t, 1 + 2 * kHashLen> context{};
  const auto psk_id_hash = std::span(context).subspan<1, kHashLen>();
  const auto info_hash = std::span(context).last<kHashLen>();
  std::array<uint8_t, kHashLen> secret{};
  wc_status status = labeled_extract(suite, {}, "psk_id_hash", {}, psk_id_hash);
  if (status == WC_OK) status = labeled_extract(suite, {}, "info_hash", info, info_hash);
  if (status == WC_OK) status = labeled_extract(suite, shared_secret, "secret", {}, secret);
  if (status == WC_OK) status = labeled_expand(suite, secret, "key", context, key);
  if (status == WC_OK) status = labeled_expand(suite, secret, "base_nonce", context, base_nonce);
  secure_wipe(secret.data(), secret.size());
  return status;
}

}  // namespace

wc_status hpke_public_key(HpkeKem kem, std::span<const uint8_t> private_key, std::span<uint8_t> public_key) {
  if (kem != HpkeKem::mlkem768_x25519) return WC_ERR_UNSUPPORTED;
  if (private_key.size() != kHpkePrivateKeyLen || public_key.size() != hpke_public_key_len(kem)) {
    return WC_ERR_INVALID_ARGUMENT;
  }
  Mlkem768X25519KeyPair pair;
  const wc_status status = expand_mlkem768_x25519(private_key.first<kHpkePrivateKeyLen>(), &pair);
  if (status != WC_OK) return status;
  std::copy(pair.x25519_public.begin(), pair.x25519_public.end(),
            std::copy(pair.mlkem_public.begin(), pair.mlkem_public.end(), public_key.begin()));
  return WC_OK;
}

wc_status hpke_encapsulate(HpkeKem kem, std::span<const uint8_t> public_key, RandomSource &random,
                           std::span<uint8_t> enc, std::span<uint8_t, 32> shared_secret) {
  if (public_key.size() != hpke_public_key_len(kem) || enc.size() != hpke_encapsulation_len(kem)) {
    return WC_ERR_INVALID_ARGUMENT;
  }
  switch (kem) {
    case HpkeKem::dhkem_p256:
      return dhkem_p256_encapsulate(public_key.first<kP256PointLen>(), random, enc.first<kP256PointLen>(),
                                    shared_secret);
    case HpkeKem::mlkem768_p256:
      return mlkem768_p256_encapsulate(public_key, random, enc, shared_secret);
    case HpkeKem::mlkem768_x25519:
      return mlkem768_x25519_encapsulate(public_key, random, enc, shared_secret);
  }
  return WC_ERR_INVALID_ARGUMENT;
}

wc_status hpke_seal_base(HpkeKem kem, std::span<const uint8_t> public_key, std::span<const uint8_t> info,
                         std::span<const uint8_t> aad, std::span<const uint8_t> message, RandomSource &random,
                         std::span<uint8_t> enc, std::span<uint8_t> sealed) {
  if (sealed.size() != message.size() + kTagLen) return WC_ERR_INVALID_ARGUMENT;
  if (!sodium_ready()) return WC_ERR_CRYPTO_LIBRARY;
  std::array<uint8_t, 32> shared_secret{};
  std::array<uint8_t, kKeyLen> key{};
  std::array<uint8_t, kNonceLen> base_nonce{};
  wc_status status = hpke_encapsulate(kem, public_key, random, enc, shared_secret);
  if (status == WC_OK) status = key_schedule(kem, shared_secret, info, key, base_nonce);
  // The context's first message: sequence number 0, so the nonce is the
  // base nonce itself.
  if (status == WC_OK) {
    crypto_aead_chacha20poly1305_ietf_encrypt(sealed.data(), nullptr, message.data(), message.size(), aad.data(),
                                              aad.size(), nullptr, base_nonce.data(), key.data());
  }
  wipe({shared_secret, key});
  return status;
}

wc_status hpke_open_base(HpkeKem kem, std::span<const uint8_t> private_key, std::span<const uint8_t> enc,
                         std::span<const uint8_t> info, std::span<const uint8_t> aad, std::span<const uint8_t> sealed,
                         std::span<uint8_t> message) {
  if (kem != HpkeKem::mlkem768_x25519) return WC_ERR_UNSUPPORTED;
  if (private_key.size() != kHpkePrivateKeyLen || enc.size() != hpke_encapsulation_len(kem) ||
      sealed.size() != message.size() + kTagLen) {
    return WC_ERR_INVALID_ARGUMENT;
  }
  if (!sodium_ready()) return WC_ERR_CRYPTO_LIBRARY;
  std::array<uint8_t, 32> shared_secret{};
  std::array<uint8_t, kKeyLen> key{};
  std::array<uint8_t, kNonceLen> base_nonce{};
  wc_status status = mlkem768_x25519_decapsulate(private_key.first<kHpkePrivateKeyLen>(), enc, shared_secret);
  if (status == WC_OK) status = key_schedule(kem, shared_secret, info, key, base_nonce);
  if (status == WC_OK &&
      crypto_aead_chacha20poly1305_ietf_decrypt(message.data(), nullptr, nullptr, sealed.data(), sealed.size(),
                                                aad.data(), aad.size(), base_nonce.data(), key.data()) != 0) {
    status = WC_ERR_AUTH;
  }
  wipe({shared_secret, key});
  return status;
}

}  // namespace warpcrypt::cpu
