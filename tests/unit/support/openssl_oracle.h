// OpenSSL EVP used directly, as the oracle the library must match byte for
// byte (and its base64, for building key files the parsers read). The whole buffer goes through ONE EVP_CipherUpdate and one
// EVP_CipherFinal_ex, so it never shares the library's chunking decisions.
#ifndef WARPCRYPT_TESTS_UNIT_SUPPORT_OPENSSL_ORACLE_H
#define WARPCRYPT_TESTS_UNIT_SUPPORT_OPENSSL_ORACLE_H

#include <optional>
#include <string>

#include <warpcrypt/warpcrypt.h>

#include "support/bytes.h"

namespace wctest {

// `cipher_name` is an OpenSSL name (ours coincide for every AES mode and
// chacha20). `padding` matters for ECB and CBC only. Returns std::nullopt
// when OpenSSL rejects the input (bad padding, or a partial block without
// padding); throws std::runtime_error if OpenSSL lacks the cipher.
std::optional<Bytes> openssl_crypt(const std::string &cipher_name, wc_direction direction,
                                   const Bytes &key, const Bytes &iv, const Bytes &in,
                                   bool padding);

// Standard padded base64 by OpenSSL's EVP_EncodeBlock, independent of the
// library's own coder.
std::string openssl_base64(const Bytes &bytes);

}  // namespace wctest

#endif
