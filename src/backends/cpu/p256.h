// P-256 points and scalar multiplication (SEC 1, SP 800-186) on OpenSSL's
// EC_POINT, for HPKE's DHKEM(P-256) and the MLKEM768-P256 hybrid KEM
// (backends/cpu/hpke.h). OpenSSL 3.0's EVP keys cannot give the public key
// of a bare scalar, which both KEMs need for their ephemeral share.
#pragma once

#include <cstdint>
#include <span>

#include "core/host_crypto.h"

namespace warpcrypt::cpu {

// The uncompressed encoding of the point `encoded` holds, compressed (33
// bytes, 0x02 or 0x03 first) or uncompressed (65 bytes, 0x04 first).
// WC_ERR_FORMAT for any other length or leading byte (the one-byte point at
// infinity and SEC 1's hybrid forms included) and for a point off the curve.
wc_status p256_decode_point(std::span<uint8_t, kP256PointLen> uncompressed, std::span<const uint8_t> encoded);

// scalar * point, uncompressed, where `point` is uncompressed or compressed,
// or scalar * the base point where it is empty. The scalar is big-endian;
// WC_ERR_INVALID_ARGUMENT where it is 0 or not below the group order (a
// caller drawing scalars draws another), WC_ERR_FORMAT where `point` is none.
wc_status p256_multiply(std::span<uint8_t, kP256PointLen> out, std::span<const uint8_t, kP256ScalarLen> scalar,
                        std::span<const uint8_t> point);

}  // namespace warpcrypt::cpu
