// HPKE (RFC 9180) in base mode, with HKDF-SHA256 and ChaCha20-Poly1305 and
// the KEMs of HpkeKem: DHKEM(P-256, HKDF-SHA256) and draft-ietf-hpke-pq's
// MLKEM768-P256, with which age's tagged recipients seal the file key, and
// MLKEM768-X25519 (X-Wing's combiner), with which its age1pq recipients
// seal it and its AGE-SECRET-KEY-PQ identities open it. The tagged
// recipients' private keys live in hardware, behind a plugin, so only
// MLKEM768-X25519 has a receiver here.
#pragma once

#include <cstdint>
#include <span>

#include "core/host_crypto.h"

namespace warpcrypt::cpu {

// The public key of `private_key` (kHpkePrivateKeyLen bytes), for
// MLKEM768-X25519: the draft's DeriveKeyPair expands the seed with SHAKE256
// into ML-KEM's d || z, then the X25519 scalar. WC_ERR_UNSUPPORTED for the
// other KEMs.
wc_status hpke_public_key(HpkeKem kem, std::span<const uint8_t> private_key, std::span<uint8_t> public_key);

// The encapsulated key `enc` (hpke_encapsulation_len(kem) bytes) and the KEM
// shared secret for `public_key` (hpke_public_key_len(kem) bytes: an
// uncompressed point, or ML-KEM-768's key and the classical one). The
// ephemeral key comes from `random`: for DHKEM, DeriveKeyPair of 32 random
// bytes (RFC 9180 7.1.3, so that the RFC's ikmE reproduces its vectors);
// for the hybrid KEMs, ML-KEM's 32 bytes of randomness, then for P-256
// scalars of 32 bytes until one is valid, for X25519 one scalar (the
// draft's EncapsDerand). WC_ERR_FORMAT for a public key that is no point,
// or whose ML-KEM key fails FIPS 203's modulus check; WC_ERR_INVALID_ARGUMENT
// for an X25519 key of low order.
wc_status hpke_encapsulate(HpkeKem kem, std::span<const uint8_t> public_key, RandomSource &random,
                           std::span<uint8_t> enc, std::span<uint8_t, 32> shared_secret);

// SealBase(pkR, info, aad, message) of RFC 9180 5.1.1 and 5.2: `enc` as
// above, and `sealed`, the message then its 16-byte tag.
// WC_ERR_INVALID_ARGUMENT for lengths that do not fit the KEM or the message.
wc_status hpke_seal_base(HpkeKem kem, std::span<const uint8_t> public_key, std::span<const uint8_t> info,
                         std::span<const uint8_t> aad, std::span<const uint8_t> message, RandomSource &random,
                         std::span<uint8_t> enc, std::span<uint8_t> sealed);

// OpenBase(enc, skR, info, aad, sealed) of RFC 9180 5.1.1 and 5.2, with the
// private key of hpke_public_key: `message`, 16 bytes shorter than `sealed`.
// ML-KEM rejects implicitly, so an `enc` sealed to another key is
// WC_ERR_AUTH, as is a damaged `sealed`; WC_ERR_FORMAT only where the
// X25519 share is of low order. WC_ERR_UNSUPPORTED for the KEMs without a
// receiver, WC_ERR_INVALID_ARGUMENT for lengths that do not fit.
wc_status hpke_open_base(HpkeKem kem, std::span<const uint8_t> private_key, std::span<const uint8_t> enc,
                         std::span<const uint8_t> info, std::span<const uint8_t> aad, std::span<const uint8_t> sealed,
                         std::span<uint8_t> message);

}  // namespace warpcrypt::cpu
