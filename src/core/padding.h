// PKCS#7 padding for ECB and CBC, as `openssl enc` applies it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace warpcrypt {

// Fills block[filled..16) with the pad byte 16 - filled (a whole block of 16s
// when filled is 0).
void pkcs7_pad(uint8_t block[16], size_t filled);

// Checks the padding of a decrypted last block without branching on its
// bytes, so timing reveals no more than the final verdict. On success returns
// true and sets *data_len to the bytes that precede the padding.
bool pkcs7_unpad(const uint8_t block[16], size_t *data_len);

}  // namespace warpcrypt
