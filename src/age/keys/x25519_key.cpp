// age's native X25519 keys: "age1..." recipients, "AGE-SECRET-KEY-1..."
// identities and the X25519 stanza, the file key sealed under
// HKDF-SHA-256 of an ephemeral exchange.
#include <algorithm>

#include "age/key.h"
#include "core/secret_bytes.h"

namespace warpcrypt::age {
namespace {

constexpr std::string_view kRecipientHrp = "age";
constexpr std::string_view kIdentityHrp = "AGE-SECRET-KEY-";
constexpr std::string_view kStanzaType = "X25519";
constexpr std::string_view kLabel = "age-encryption.org/v1/X25519";

wc_status parse_recipient(std::string_view text, Recipient *recipient, const char **detail) {
  const auto decoded = decode_bech32(text);
  if (!decoded || decoded->hrp != kRecipientHrp || decoded->data.size() != 32) {
    return fail(WC_ERR_FORMAT, detail, "not an age recipient: expected age1 and 58 Bech32 characters");
  }
  recipient->type = KeyType::x25519;
  std::copy(decoded->data.begin(), decoded->data.end(), recipient->public_key.begin());
  return WC_OK;
}

wc_status parse_identity(std::string_view text, Identity *identity, const char **detail) {
  auto decoded = decode_bech32(text);
  const bool valid = decoded && decoded->hrp == kIdentityHrp && decoded->data.size() == 32;
  if (valid) {
    identity->type = KeyType::x25519;
    std::copy(decoded->data.begin(), decoded->data.end(), identity->secret_key.begin());
  }
  if (decoded) secure_wipe(decoded->data.data(), decoded->data.size());
  if (!valid) {
    return fail(WC_ERR_FORMAT, detail, "not an age identity: expected AGE-SECRET-KEY-1 and 58 Bech32 characters");
  }
  return WC_OK;
}

wc_status format_identity(const Identity &identity, std::string *text) {
  *text = encode_bech32(kIdentityHrp, identity.secret_key);
  return WC_OK;
}

wc_status recipient_of(const HostCrypto &crypto, const Identity &identity, Recipient *recipient) {
  recipient->type = KeyType::x25519;
  return crypto.x25519(recipient->public_key, identity.secret_key, {});
}

wc_status format_recipient(const Recipient &recipient, std::string *text) {
  *text = encode_bech32(kRecipientHrp, recipient.public_key);
  return WC_OK;
}

// HKDF-SHA-256(shared secret, salt = share || recipient, the label).
wc_status wrap_key(const HostCrypto &crypto, std::span<const uint8_t, 32> shared, std::span<const uint8_t, 32> share,
                   std::span<const uint8_t, 32> recipient, DerivedKey *key) {
  std::array<uint8_t, 64> salt{};
  std::copy(share.begin(), share.end(), salt.begin());
  std::copy(recipient.begin(), recipient.end(), salt.begin() + 32);
  return crypto.hkdf(key->bytes, "sha256", shared, salt, bytes_of(kLabel));
}

wc_status wrap_one(const HostCrypto &crypto, const Recipient &recipient, const FileKey &file_key, Stanza *stanza,
                   const char **detail) {
  std::array<uint8_t, 32> ephemeral{}, share{}, shared{};
  wc_status status = crypto.random->fill(ephemeral);
  if (status == WC_OK) status = crypto.x25519(share, ephemeral, {});
  // With the share computed, the shared secret fails only where the
  // recipient is a point of small order (libsodium refuses those).
  if (status == WC_OK && crypto.x25519(shared, ephemeral, recipient.public_key) != WC_OK) {
    status = fail(WC_ERR_INVALID_ARGUMENT, detail,
                  "an X25519 recipient is a low-order point, which no identity can open (age refuses it too)");
  }
  DerivedKey key;
  if (status == WC_OK) status = wrap_key(crypto, shared, share, recipient.public_key, &key);
  secure_wipe(ephemeral.data(), ephemeral.size());
  secure_wipe(shared.data(), shared.size());
  if (status != WC_OK) return status;
  return seal_stanza(crypto, key.bytes, file_key, kStanzaType, {encode_base64(share)}, stanza);
}

wc_status wrap(const HostCrypto &crypto, std::span<const Recipient *const> recipients, const FileKey &file_key,
               std::vector<Stanza> *stanzas, const char **detail) {
  return wrap_each(recipients, stanzas, [&](const Recipient &recipient, Stanza *stanza) {
    return wrap_one(crypto, recipient, file_key, stanza, detail);
  });
}

// `own_public` is the identity's public key, computed once for all the
// stanzas it tries.
wc_status open(const HostCrypto &crypto, const Identity &identity, std::span<const uint8_t, 32> own_public,
               const Stanza &stanza, FileKey *file_key, const char **detail) {
  if (stanza.type != kStanzaType) return WC_ERR_NO_IDENTITY;
  if (stanza.args.size() != 1) {
    return fail(WC_ERR_FORMAT, detail, "malformed X25519 stanza: it takes exactly one argument");
  }
  const auto share = decode_base64(stanza.args[0]);
  if (!share || share->size() != 32) {
    return fail(WC_ERR_FORMAT, detail,
                "malformed X25519 stanza: the ephemeral share is not 32 bytes of canonical base64");
  }
  if (stanza.body.size() != kWrappedKeyLen) {
    return fail(WC_ERR_FORMAT, detail, "malformed X25519 stanza: the body is not 32 bytes");
  }
  std::array<uint8_t, 32> shared{};
  if (crypto.x25519(shared, identity.secret_key, *share) != WC_OK) {
    return fail(WC_ERR_FORMAT, detail,
                "malformed X25519 stanza: the ephemeral share is a low-order point (all-zero shared secret)");
  }
  DerivedKey key;
  wc_status status = wrap_key(crypto, shared, std::span<const uint8_t, 32>(share->data(), 32), own_public, &key);
  secure_wipe(shared.data(), shared.size());
  if (status == WC_OK) status = open_file_key(crypto, key.bytes, stanza.body, file_key);
  return status == WC_ERR_AUTH ? WC_ERR_NO_IDENTITY : status;
}

wc_status unwrap(const HostCrypto &crypto, std::span<const Identity *const> identities, const Header &header,
                 FileKey *file_key, const char **detail) {
  for (const Identity *identity : identities) {
    std::array<uint8_t, 32> own_public{};
    if (const wc_status status = crypto.x25519(own_public, identity->secret_key, {}); status != WC_OK) return status;
    const wc_status status =
        open_first({&identity, 1}, header, detail, [&](const Identity &self, const Stanza &stanza, const char **why) {
          return open(crypto, self, own_public, stanza, file_key, why);
        });
    if (status != WC_ERR_NO_IDENTITY) return status;
  }
  return WC_ERR_NO_IDENTITY;
}

}  // namespace

extern const KeyTypeEntry kX25519Key = {
    .type = KeyType::x25519,
    .name = "x25519",
    .recipient_prefix = kRecipientHrp,
    .identity_prefix = kIdentityHrp,
    .parse_recipient = parse_recipient,
    .parse_identity = parse_identity,
    .format_identity = format_identity,
    .recipient_of = recipient_of,
    .format_recipient = format_recipient,
    .wrap = wrap,
    .unwrap = unwrap,
    .stanza = kStanzaType,
};

}  // namespace warpcrypt::age
