#include "core/random_access.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/secret_bytes.h"
#include "core/padding.h"

namespace warpcrypt {

wc_status plan_range(RangePlan *plan, const wc_cipher &cipher, uint64_t ciphertext_len, uint64_t offset,
                     uint64_t length) {
  if (!has_random_access(cipher)) return WC_ERR_UNSUPPORTED;
  const bool padded = is_padded(cipher);
  if (needs_whole_blocks(cipher) && ciphertext_len % kAesBlock != 0) return WC_ERR_NOT_BLOCK_ALIGNED;
  if (padded && ciphertext_len == 0) return WC_ERR_BAD_DECRYPT;

  RangePlan p;
  p.range_begin = std::min(offset, ciphertext_len);
  p.range_end = p.range_begin + std::min(length, ciphertext_len - p.range_begin);
  if (p.range_begin == p.range_end) {
    p.window_begin = p.window_end = p.decrypt_begin = p.range_begin;
    *plan = p;
    return WC_OK;
  }
  // Every block that holds the range, whole, from its first byte.
  const uint64_t unit = segment_granularity(cipher, WC_DECRYPT);
  p.decrypt_begin = p.range_begin / unit * unit;
  p.window_end = std::min((p.range_end + unit - 1) / unit * unit, ciphertext_len);
  // Padding lives in the last block: a range that reaches into it needs the
  // whole tail to find where the plaintext ends.
  if (padded && p.range_end > ciphertext_len - kAesBlock) {
    p.window_end = ciphertext_len;
    p.checks_padding = true;
  }
  // CBC and CFB need the 16 ciphertext bytes before the first block.
  p.window_begin = chains_on_ciphertext(cipher) ? p.decrypt_begin - std::min<uint64_t>(p.decrypt_begin, 16)
                                                : p.decrypt_begin;
  *plan = p;
  return WC_OK;
}

wc_status decrypt_planned_range(RandomAccessCipher &backend, const wc_cipher &cipher,
                                const RangePlan &plan, uint8_t *out, size_t out_cap,
                                size_t *out_len, const uint8_t *iv, const uint8_t *window) {
  *out_len = 0;
  const size_t chain_bytes = plan.decrypt_begin - plan.window_begin;
  const size_t decrypt_len = plan.window_end - plan.decrypt_begin;
  if (decrypt_len == 0) return WC_OK;

  // chain = the last 16 bytes of IV || ciphertext before decrypt_begin.
  uint8_t chain[16] = {};
  if (chains_on_ciphertext(cipher)) {
    std::memcpy(chain, iv + chain_bytes, 16 - chain_bytes);
    std::memcpy(chain + 16 - chain_bytes, window, chain_bytes);
  }
  std::vector<uint8_t> plain(decrypt_len);
  wc_status status =
      backend.transform_at(plan.decrypt_begin, chain, window + chain_bytes, plain.data(), decrypt_len);

  uint64_t plain_end = plan.window_end;
  if (status == WC_OK && plan.checks_padding) {
    size_t last_block_data = 0;
    if (pkcs7_unpad(plain.data() + decrypt_len - kAesBlock, &last_block_data)) {
      plain_end = plan.window_end - kAesBlock + last_block_data;
    } else {
      status = WC_ERR_BAD_DECRYPT;
    }
  }
  const uint64_t end = std::min(plan.range_end, plain_end);
  const size_t produced = end > plan.range_begin ? end - plan.range_begin : 0;
  if (status == WC_OK && produced > out_cap) status = WC_ERR_OUTPUT_TOO_SMALL;
  if (status == WC_OK) {
    std::memcpy(out, plain.data() + (plan.range_begin - plan.decrypt_begin), produced);
    *out_len = produced;
  }
  secure_wipe(plain.data(), plain.size());
  return status;
}

}  // namespace warpcrypt
