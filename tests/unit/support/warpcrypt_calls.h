// Thin wrappers over the public C API that the test files share: options,
// cipher look-up, one-shot and streaming calls returning owned buffers.
#ifndef WARPCRYPT_TESTS_UNIT_SUPPORT_WARPCRYPT_CALLS_H
#define WARPCRYPT_TESTS_UNIT_SUPPORT_WARPCRYPT_CALLS_H

#include <ostream>
#include <string>
#include <vector>

#include <warpcrypt/warpcrypt.h>

#include "support/bytes.h"

// gtest prints a wc_status by name (found by argument-dependent lookup, so it
// lives in the global namespace beside the C enum).
void PrintTo(wc_status status, std::ostream *os);

namespace wctest {

wc_options make_options(unsigned threads = 0, wc_backend backend = WC_BACKEND_AUTO);

// A sealed file's parameters for a raw key (its HKDF: no passphrase KDF's
// cost): `aead` by name, chunks of `chunk_bytes`.
wc_seal_params key_seal_params(const char *aead, uint64_t chunk_bytes = WC_SEAL_DEFAULT_CHUNK_BYTES);

// `cipher` as named (padded where its mode pads) or, without padding, its
// unpadded twin (`openssl enc -nopad`).
const wc_cipher *with_padding(const wc_cipher *cipher, bool padding);

// wc_cipher_by_name, as a std::string convenience.
const wc_cipher *lookup(const std::string &name);

// A non-null pointer for a possibly empty buffer: the tests exercise NULL
// handling on purpose in api_errors_test.cpp and nowhere else.
const uint8_t *data_or_dummy(const Bytes &bytes);

struct LibResult {
  wc_status status = WC_OK;
  Bytes out;           // trimmed to *out_len
  size_t max_lag = 0;  // lib_stream only: most input not yet answered by output after an update
};

// wc_encrypt with out_cap = wc_encrypt_bound, or wc_decrypt with
// out_cap = in.size() (decryption never writes more than its input).
LibResult lib_crypt(wc_direction direction, const wc_cipher *cipher, const Bytes &key,
                    const Bytes &iv, const Bytes &in, const wc_options &options);

// Streams `in` through one context: one wc_ctx_update per piece (the pieces'
// lengths must add up to in.size(); zero-length pieces are allowed), then
// wc_ctx_final. Each update gets exactly wc_ctx_update_bound bytes of room;
// the result fails with WC_ERR_OUTPUT_TOO_SMALL if the library writes more
// than it promised. Returns the first failing status.
LibResult lib_stream(wc_direction direction, const wc_cipher *cipher, const Bytes &key,
                     const Bytes &iv, const Bytes &in, const std::vector<size_t> &pieces,
                     const wc_options &options);

struct RangeWindow {
  wc_status status = WC_OK;
  uint64_t offset = 0;
  uint64_t length = 0;
};

// wc_range_window: the ciphertext bytes that plaintext [offset, offset +
// length) of a `ciphertext_len`-byte ciphertext needs.
RangeWindow lib_range_window(const wc_cipher *cipher,
                             uint64_t ciphertext_len, uint64_t offset, uint64_t length);

// wc_decrypt_range with out_cap = length. `window` must hold exactly the
// bytes lib_range_window named (its own allocation, so a read outside it is
// a heap overflow the sanitizers can see).
LibResult lib_decrypt_range(const wc_options &options, const wc_cipher *cipher, const Bytes &key,
                            const Bytes &iv, const Bytes &window, uint64_t ciphertext_len,
                            uint64_t offset, uint64_t length);

const char *direction_name(wc_direction direction);

}  // namespace wctest

#endif
