#include "core/aead_registry.h"

#include <strings.h>

#include <array>

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

std::span<const wc_aead> all_aeads() { return kAeads; }

}  // namespace warpcrypt
