// AEAD helpers shared by the unit and GPU tests: the library's one-shot,
// streaming and batch calls returning owned buffers, and OpenSSL's EVP AEAD
// called directly as the oracle.
#ifndef WARPCRYPT_TESTS_UNIT_AEAD_SUPPORT_H
#define WARPCRYPT_TESTS_UNIT_AEAD_SUPPORT_H

#include <optional>
#include <string>
#include <vector>

#include <warpcrypt/warpcrypt.h>

#include "support/bytes.h"
#include "support/test_rng.h"

namespace wctest {

// aes-128-gcm, aes-192-gcm, aes-256-gcm, chacha20-poly1305.
const std::vector<std::string> &aead_names();
bool is_gcm(const std::string &aead_name);

struct AeadInput {
  Bytes key;
  Bytes nonce;
  Bytes aad;
  Bytes plaintext;
  size_t tag_len = 16;
};

// A random message for `aead_name`: a random key, a nonce of `nonce_len`
// bytes (0: the recommended 12), AAD and plaintext of the given lengths.
AeadInput random_aead_input(TestRng &rng, const std::string &aead_name, size_t plaintext_len, size_t aad_len,
                            size_t nonce_len = 0, size_t tag_len = 16);

struct AeadSealed {
  wc_status status = WC_OK;
  Bytes ciphertext;
  Bytes tag;
};

struct AeadOpened {
  wc_status status = WC_OK;
  Bytes out;  // the whole output buffer as the call left it, also on failure
};

AeadSealed lib_aead_seal(const std::string &aead_name, const AeadInput &input, const wc_options &options);
AeadOpened lib_aead_open(const std::string &aead_name, const AeadInput &input, const Bytes &ciphertext,
                         const Bytes &tag, const wc_options &options);

// OpenSSL EVP, the whole message in one update.
AeadSealed openssl_aead_seal(const std::string &aead_name, const AeadInput &input);
// nullopt when OpenSSL rejects the tag.
std::optional<Bytes> openssl_aead_open(const std::string &aead_name, const AeadInput &input, const Bytes &ciphertext,
                                       const Bytes &tag);

// One bit of `bytes` flipped (bit `bit` counted from byte 0's lowest bit).
Bytes with_bit_flipped(Bytes bytes, size_t bit);

}  // namespace wctest

#endif
