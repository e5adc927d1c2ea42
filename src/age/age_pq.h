// age's post-quantum hybrid recipient (age 1.3): "age1pq1..." recipients,
// "AGE-SECRET-KEY-PQ-1..." identities and the "mlkem768x25519" stanza. The
// stanza is HPKE (RFC 9180, base mode) with the KEM MLKEM768-X25519 of
// draft-ietf-hpke-pq (X-Wing's combiner), HKDF-SHA256 and ChaCha20-Poly1305,
// info "age-encryption.org/mlkem768x25519"; its argument is the KEM's
// encapsulation and its body the sealed file key.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "age/age_format.h"

namespace warpcrypt::age {

inline constexpr size_t kHybridSeedLen = 32;             // the identity: the KEM's private key
inline constexpr size_t kHybridPublicKeyLen = 1216;      // ML-KEM-768 ek || X25519 public key
inline constexpr size_t kHybridEncapsulationLen = 1120;  // ML-KEM-768 ciphertext || X25519 share
inline constexpr std::string_view kHybridStanzaType = "mlkem768x25519";
inline constexpr std::string_view kHybridRecipientHrp = "age1pq";
inline constexpr std::string_view kHybridIdentityHrp = "AGE-SECRET-KEY-PQ-";

// ---- the stanza ---------------------------------------------------------------

// The mlkem768x25519 stanza giving `public_key` the file key. WC_ERR_FORMAT
// (and *detail) for a public key the KEM refuses.
wc_status hybrid_wrap(const HostCrypto &crypto, std::span<const uint8_t> public_key, const FileKey &file_key,
                      Stanza *stanza, const char **detail);
// The file key from one stanza with the identity's seed: WC_ERR_NO_IDENTITY
// for a stanza of another type or one this key does not open; WC_ERR_FORMAT
// (and *detail) for a malformed mlkem768x25519 stanza.
wc_status hybrid_unwrap(const HostCrypto &crypto, std::span<const uint8_t, kHybridSeedLen> seed, const Stanza &stanza,
                        FileKey *file_key, const char **detail);

// ---- the KEM, MLKEM768-X25519 ------------------------------------------------

// The public key of a 32-byte private key, which SHAKE256 expands into the
// ML-KEM seed d || z and the X25519 scalar.
wc_status hybrid_public_key(const HostCrypto &crypto, std::span<const uint8_t, kHybridSeedLen> seed,
                            std::span<uint8_t, kHybridPublicKeyLen> public_key);
// A shared secret and its encapsulation, with ML-KEM's 32 random bytes and
// then the X25519 ephemeral scalar drawn from crypto.random. WC_ERR_FORMAT
// (and *detail) for a public key whose ML-KEM half is not reduced or whose
// X25519 half is a low-order point.
wc_status hybrid_encapsulate(const HostCrypto &crypto, std::span<const uint8_t, kHybridPublicKeyLen> public_key,
                             std::span<uint8_t, kHybridEncapsulationLen> encapsulation,
                             std::span<uint8_t, 32> shared_secret, const char **detail);
// The shared secret of an encapsulation. ML-KEM rejects implicitly, so a
// wrong key yields a different secret, no error; WC_ERR_FORMAT only where
// the X25519 share is a low-order point.
wc_status hybrid_decapsulate(const HostCrypto &crypto, std::span<const uint8_t, kHybridSeedLen> seed,
                             std::span<const uint8_t, kHybridEncapsulationLen> encapsulation,
                             std::span<uint8_t, 32> shared_secret);

// ---- HPKE -------------------------------------------------------------------

// RFC 9180's base-mode key schedule for the suite (MLKEM768-X25519,
// HKDF-SHA256, ChaCha20-Poly1305): the AEAD key and base nonce.
wc_status hpke_key_schedule(const HostCrypto &crypto, std::span<const uint8_t, 32> shared_secret,
                            std::span<const uint8_t> info, std::span<uint8_t, 32> key,
                            std::span<uint8_t, 12> base_nonce);

}  // namespace warpcrypt::age
