#include "backends/cpu/p256.h"

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/obj_mac.h>

#include <memory>

namespace warpcrypt::cpu {
namespace {

using Group = std::unique_ptr<EC_GROUP, decltype(&EC_GROUP_free)>;
using Point = std::unique_ptr<EC_POINT, decltype(&EC_POINT_free)>;
using Number = std::unique_ptr<BIGNUM, decltype(&BN_clear_free)>;
using Context = std::unique_ptr<BN_CTX, decltype(&BN_CTX_free)>;

Group p256_group() { return Group(EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1), EC_GROUP_free); }

// SEC 1's octet string of a point other than the identity: its length
// and leading byte must agree, which OpenSSL's decoder alone does not ask
// (it takes the one-byte identity and the hybrid forms 0x06 and 0x07).
bool well_formed(std::span<const uint8_t> encoded) {
  if (encoded.size() == kP256CompressedPointLen) return encoded[0] == 0x02 || encoded[0] == 0x03;
  return encoded.size() == kP256PointLen && encoded[0] == 0x04;
}

// `encoded` as a point of `group`, or null where it is none.
Point decode(const EC_GROUP *group, std::span<const uint8_t> encoded, BN_CTX *ctx) {
  Point point(EC_POINT_new(group), EC_POINT_free);
  if (!point || !well_formed(encoded) ||
      EC_POINT_oct2point(group, point.get(), encoded.data(), encoded.size(), ctx) != 1 ||
      EC_POINT_is_on_curve(group, point.get(), ctx) != 1 || EC_POINT_is_at_infinity(group, point.get()) == 1) {
    // A refused point leaves OpenSSL's error queue full, which no later
    // call should read as its own.
    ERR_clear_error();
    return Point(nullptr, EC_POINT_free);
  }
  return point;
}

bool encode_uncompressed(const EC_GROUP *group, const EC_POINT *point, std::span<uint8_t, kP256PointLen> out,
                         BN_CTX *ctx) {
  return EC_POINT_point2oct(group, point, POINT_CONVERSION_UNCOMPRESSED, out.data(), out.size(), ctx) == out.size();
}

}  // namespace

wc_status p256_decode_point(std::span<uint8_t, kP256PointLen> uncompressed, std::span<const uint8_t> encoded) {
  const Group group = p256_group();
  const Context ctx(BN_CTX_new(), BN_CTX_free);
  if (!group || !ctx) return WC_ERR_CRYPTO_LIBRARY;
  const Point point = decode(group.get(), encoded, ctx.get());
  if (!point) return WC_ERR_FORMAT;
  return encode_uncompressed(group.get(), point.get(), uncompressed, ctx.get()) ? WC_OK : WC_ERR_CRYPTO_LIBRARY;
}

wc_status p256_multiply(std::span<uint8_t, kP256PointLen> out, std::span<const uint8_t, kP256ScalarLen> scalar,
                        std::span<const uint8_t> point) {
  const Group group = p256_group();
  const Context ctx(BN_CTX_secure_new(), BN_CTX_free);
  const Number k(BN_secure_new(), BN_clear_free);
  if (!group || !ctx || !k) return WC_ERR_CRYPTO_LIBRARY;
  // The scalar is secret: OpenSSL's ladder runs in constant time for it.
  BN_set_flags(k.get(), BN_FLG_CONSTTIME);
  if (BN_bin2bn(scalar.data(), static_cast<int>(scalar.size()), k.get()) == nullptr) return WC_ERR_CRYPTO_LIBRARY;
  if (BN_is_zero(k.get()) || BN_cmp(k.get(), EC_GROUP_get0_order(group.get())) >= 0) return WC_ERR_INVALID_ARGUMENT;
  Point peer(nullptr, EC_POINT_free);
  if (!point.empty()) {
    peer = decode(group.get(), point, ctx.get());
    if (!peer) return WC_ERR_FORMAT;
  }
  const Point product(EC_POINT_new(group.get()), EC_POINT_free);
  const bool multiplied =
      product &&
      (peer ? EC_POINT_mul(group.get(), product.get(), nullptr, peer.get(), k.get(), ctx.get())
            : EC_POINT_mul(group.get(), product.get(), k.get(), nullptr, nullptr, ctx.get())) == 1;
  // A prime-order group: a nonzero scalar below the order never sends a
  // point of the curve to the identity.
  return multiplied && encode_uncompressed(group.get(), product.get(), out, ctx.get()) ? WC_OK
                                                                                      : WC_ERR_CRYPTO_LIBRARY;
}

}  // namespace warpcrypt::cpu
