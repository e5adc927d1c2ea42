// age 1.3's post-quantum hybrid keys: "age1pq1..." recipients,
// "AGE-SECRET-KEY-PQ-1..." identities and the mlkem768x25519 stanza, whose
// KEM and HPKE are age/age_pq.h's.
#include <algorithm>

#include "age/age_pq.h"
#include "age/key.h"
#include "core/secret_bytes.h"

namespace warpcrypt::age {
namespace {

// WC_AGE_KEY_MAX_LEN holds the recipient, the longest Bech32 key.
constexpr size_t kRecipientLen = kHybridRecipientHrp.size() + 1 + (kHybridPublicKeyLen * 8 + 4) / 5 + 6;
static_assert(kRecipientLen < WC_AGE_KEY_MAX_LEN);

wc_status parse_recipient(std::string_view text, Recipient *recipient, const char **detail) {
  const auto decoded = decode_bech32(text);
  if (!decoded || decoded->hrp != kHybridRecipientHrp || decoded->data.size() != kHybridPublicKeyLen) {
    return fail(WC_ERR_FORMAT, detail,
                "not an age recipient: an age1pq1 key is Bech32 of 1216 bytes (ML-KEM-768 and X25519)");
  }
  recipient->type = KeyType::hybrid;
  recipient->hybrid_public_key = decoded->data;
  return WC_OK;
}

wc_status parse_identity(std::string_view text, Identity *identity, const char **detail) {
  auto decoded = decode_bech32(text);
  const bool valid = decoded && decoded->hrp == kHybridIdentityHrp && decoded->data.size() == kHybridSeedLen;
  if (valid) {
    identity->type = KeyType::hybrid;
    std::copy(decoded->data.begin(), decoded->data.end(), identity->secret_key.begin());
  }
  if (decoded) secure_wipe(decoded->data.data(), decoded->data.size());
  if (!valid) return fail(WC_ERR_FORMAT, detail, "not an age identity: an AGE-SECRET-KEY-PQ-1 key holds 32 bytes");
  return WC_OK;
}

wc_status format_identity(const Identity &identity, std::string *text) {
  *text = encode_bech32(kHybridIdentityHrp, identity.secret_key);
  return WC_OK;
}

wc_status recipient_of(const HostCrypto &crypto, const Identity &identity, Recipient *recipient) {
  recipient->type = KeyType::hybrid;
  recipient->hybrid_public_key.resize(kHybridPublicKeyLen);
  return hybrid_public_key(crypto, identity.secret_key,
                           std::span<uint8_t, kHybridPublicKeyLen>(recipient->hybrid_public_key));
}

wc_status format_recipient(const Recipient &recipient, std::string *text) {
  *text = encode_bech32(kHybridRecipientHrp, recipient.hybrid_public_key);
  return WC_OK;
}

wc_status wrap(const HostCrypto &crypto, std::span<const Recipient *const> recipients, const FileKey &file_key,
               std::vector<Stanza> *stanzas, const char **detail) {
  return wrap_each(recipients, stanzas, [&](const Recipient &recipient, Stanza *stanza) {
    return hybrid_wrap(crypto, recipient.hybrid_public_key, file_key, stanza, detail);
  });
}

wc_status unwrap(const HostCrypto &crypto, std::span<const Identity *const> identities, const Header &header,
                 FileKey *file_key, const char **detail) {
  return open_first(identities, header, detail, [&](const Identity &identity, const Stanza &stanza, const char **why) {
    return hybrid_unwrap(crypto, identity.secret_key, stanza, file_key, why);
  });
}

}  // namespace

extern const KeyTypeEntry kHybridKey = {
    .type = KeyType::hybrid,
    .name = "hybrid",
    .recipient_prefix = kHybridRecipientHrp,
    .identity_prefix = kHybridIdentityHrp,
    .parse_recipient = parse_recipient,
    .parse_identity = parse_identity,
    .format_identity = format_identity,
    .recipient_of = recipient_of,
    .format_recipient = format_recipient,
    .wrap = wrap,
    .unwrap = unwrap,
    .stanza = kHybridStanzaType,
    .postquantum = true,
};

}  // namespace warpcrypt::age
