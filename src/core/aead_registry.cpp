#include "core/aead_registry.h"

#include <strings.h>

#include <array>

#include "core/api_args.h"

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

}  // namespace warpcrypt

using warpcrypt::kAeads;

extern "C" {

const wc_aead *wc_aead_by_name(const char *name) { return warpcrypt::find_aead(name); }
size_t wc_aead_count(void) { return kAeads.size(); }
const wc_aead *wc_aead_at(size_t index) { return index < kAeads.size() ? &kAeads[index] : nullptr; }
const char *wc_aead_name(const wc_aead *aead) { return aead != nullptr ? aead->name : nullptr; }
size_t wc_aead_key_len(const wc_aead *aead) { return aead != nullptr ? aead->key_len : 0; }
size_t wc_aead_nonce_len(const wc_aead *aead) { return aead != nullptr ? warpcrypt::kAeadNonceLen : 0; }
int wc_aead_nonce_len_valid(const wc_aead *aead, size_t nonce_len) {
  return aead != nullptr && warpcrypt::aead_nonce_len_valid(*aead, nonce_len);
}
uint64_t wc_aead_max_message_len(const wc_aead *aead) {
  return aead != nullptr ? warpcrypt::aead_max_message_len(*aead) : 0;
}

}  // extern "C"
