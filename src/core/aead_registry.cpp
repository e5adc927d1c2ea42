#include "core/aead_registry.h"

#include <strings.h>

#include <array>
#include <cstdint>

#include "core/memory_ranges.h"

namespace warpcrypt {
namespace {

constexpr std::array kAeads{
    wc_aead{"aes-128-gcm", AeadKind::gcm, 16, "AES-128-GCM"},
    wc_aead{"aes-192-gcm", AeadKind::gcm, 24, "AES-192-GCM"},
    wc_aead{"aes-256-gcm", AeadKind::gcm, 32, "AES-256-GCM"},
    wc_aead{"chacha20-poly1305", AeadKind::chacha20_poly1305, 32, "ChaCha20-Poly1305"},
};

}  // namespace

const wc_aead *find_aead(const char *name) {
  if (name == nullptr) return nullptr;
  for (const wc_aead &aead : kAeads) {
    if (strcasecmp(name, aead.name) == 0) return &aead;
  }
  return nullptr;
}

wc_status check_aead_key(const wc_aead &aead, const uint8_t *key, size_t key_len) {
  if (key_len != aead.key_len) return WC_ERR_KEY_LEN;
  return key == nullptr ? WC_ERR_INVALID_ARGUMENT : WC_OK;
}

wc_status check_aead_message(const wc_aead &aead, const wc_aead_message &m, size_t tag_len) {
  if (!aead_nonce_len_valid(aead, m.nonce_len)) return WC_ERR_IV_LEN;
  const bool missing = m.nonce == nullptr || m.tag == nullptr || (m.aad == nullptr && m.aad_len != 0) ||
                       ((m.in == nullptr || m.out == nullptr) && m.len != 0);
  if (missing || !aead_tag_len_valid(tag_len) || overlaps_partially(m.out, m.len, m.in, m.len)) {
    return WC_ERR_INVALID_ARGUMENT;
  }
  return m.len > aead_max_message_len(aead) ? WC_ERR_RANGE : WC_OK;
}

wc_status check_strided_batch(const wc_aead &aead, const wc_aead_strided &b, size_t tag_len, bool seal,
                              const int32_t *verified) {
  if (!aead_tag_len_valid(tag_len)) return WC_ERR_INVALID_ARGUMENT;
  if (b.count == 0) return WC_OK;
  const bool missing = b.nonces == nullptr || b.tags == nullptr || (!seal && verified == nullptr) ||
                       ((b.in == nullptr || b.out == nullptr) && b.len != 0);
  // A message count the kernels' grids hold; strides that step past what
  // they step over, so that no two messages share a byte.
  const bool short_strides = b.count > 1 && (b.stride < b.len || b.nonce_stride < kAeadNonceLen ||
                                             b.tag_stride < tag_len);
  if (missing || b.count > static_cast<size_t>(INT32_MAX) || short_strides) return WC_ERR_INVALID_ARGUMENT;
  // Every buffer's last byte must be addressable: start + (count - 1) *
  // stride + len without wrapping.
  auto fits = [&](const void *start, uint64_t stride, uint64_t len) {
    uint64_t span = 0;
    return !__builtin_mul_overflow(uint64_t{b.count - 1}, stride, &span) && !__builtin_add_overflow(span, len, &span) &&
           !__builtin_add_overflow(reinterpret_cast<uintptr_t>(start), span, &span);
  };
  if ((b.len != 0 && (!fits(b.in, b.stride, b.len) || !fits(b.out, b.stride, b.len))) ||
      !fits(b.nonces, b.nonce_stride, kAeadNonceLen) || !fits(b.tags, b.tag_stride, tag_len) ||
      (verified != nullptr && !fits(verified, sizeof(int32_t), sizeof(int32_t)))) {
    return WC_ERR_INVALID_ARGUMENT;
  }
  if (b.len > aead_max_message_len(aead)) return WC_ERR_RANGE;
  return strided_batch_overlaps(b, tag_len, seal, verified) ? WC_ERR_INVALID_ARGUMENT : WC_OK;
}

std::span<const wc_aead> all_aeads() { return kAeads; }

}  // namespace warpcrypt
