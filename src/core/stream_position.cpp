#include "core/stream_position.h"

namespace warpcrypt {

void aes_ctr_counter_at(uint8_t counter[16], const uint8_t iv[16], uint64_t block_index) {
  unsigned carry = 0;
  for (int i = 15; i >= 0; --i) {
    const unsigned addend = i >= 8 ? static_cast<unsigned>((block_index >> (8 * (15 - i))) & 0xff) : 0;
    const unsigned sum = iv[i] + addend + carry;
    counter[i] = static_cast<uint8_t>(sum);
    carry = sum >> 8;
  }
}

void chacha20_iv_at(uint8_t out_iv[16], const uint8_t iv[16], uint64_t block_index) {
  uint64_t counter = 0;
  for (int i = 7; i >= 0; --i) counter = counter << 8 | iv[i];
  counter += block_index;  // wraps mod 2^64 exactly as OpenSSL's two words do
  for (int i = 0; i < 8; ++i) out_iv[i] = static_cast<uint8_t>(counter >> (8 * i));
  for (int i = 8; i < 16; ++i) out_iv[i] = iv[i];
}

}  // namespace warpcrypt
