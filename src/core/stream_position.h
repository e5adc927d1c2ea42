// Where a byte of a stream sits for each counter-driven mode. Chunked, threaded
// and random-access work all start mid-stream, and must land on exactly the
// counter a single sequential pass would have reached.
#pragma once

#include <cstdint>

namespace warpcrypt {

// AES-CTR: OpenSSL increments the whole 16-byte IV as one big-endian 128-bit
// integer, so the carry crosses the 2^32 and 2^64 boundaries.
void aes_ctr_counter_at(uint8_t counter[16], const uint8_t iv[16], uint64_t block_index);

// ChaCha20 in OpenSSL's layout: IV = 32-bit little-endian block counter ||
// 96-bit nonce. When the counter wraps, OpenSSL carries into the first nonce
// word, so words 12 and 13 act as one 64-bit little-endian counter; the last
// two nonce words never change.
void chacha20_iv_at(uint8_t out_iv[16], const uint8_t iv[16], uint64_t block_index);

}  // namespace warpcrypt
