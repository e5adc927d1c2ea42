// What the tests expect of every cipher, written down independently of the
// library's registry (registry_test.cpp checks the registry against it).
#ifndef WARPCRYPT_TESTS_UNIT_SUPPORT_CIPHER_TABLE_H
#define WARPCRYPT_TESTS_UNIT_SUPPORT_CIPHER_TABLE_H

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace wctest {

struct CipherSpec {
  std::string name;       // canonical `openssl enc` name, lower case
  size_t key_len;
  size_t iv_len;
  size_t block_len;       // 16 for ECB/CBC, 1 for everything stream-like
  bool padded;            // ECB and CBC pad with PKCS#7 unless padding is off
  bool random_access;     // every mode but OFB
  bool in_openssl;        // OpenSSL EVP knows it under the same name
};

// gtest prints a CipherSpec parameter by its name, not as raw bytes.
void PrintTo(const CipherSpec &spec, std::ostream *os);

// aes-{128,192,256}-{ecb,cbc,cfb,cfb8,ofb,ctr}, chacha20, salsa20, salsa20-128.
const std::vector<CipherSpec> &all_cipher_specs();
// The subset OpenSSL can serve as an oracle for: all but the Salsa20 family.
std::vector<CipherSpec> openssl_cipher_specs();
const CipherSpec &cipher_spec(const std::string &name);

// For gtest parameter names: "aes-128-cfb8" -> "aes_128_cfb8".
std::string identifier_from(std::string text);

}  // namespace wctest

#endif
