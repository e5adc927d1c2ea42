// age 1.3's post-quantum hybrid keys: "age1pq1..." recipients,
// "AGE-SECRET-KEY-PQ-1..." identities and the mlkem768x25519 stanza. The
// stanza is HPKE's SealBase of the file key (HostCrypto's hpke_seal_base)
// with the KEM MLKEM768-X25519 and the info "age-encryption.org/mlkem768x25519";
// its argument is the encapsulated key and its body the sealed file key. An
// identity is the KEM's private key, a 32-byte seed.
#include <algorithm>

#include "age/key.h"
#include "core/secret_bytes.h"

namespace warpcrypt::age {
namespace {

constexpr HpkeKem kKem = HpkeKem::mlkem768_x25519;
constexpr size_t kPublicKeyLen = hpke_public_key_len(kKem);
constexpr size_t kEncapsulationLen = hpke_encapsulation_len(kKem);
constexpr std::string_view kStanzaType = "mlkem768x25519";
constexpr std::string_view kHpkeInfo = "age-encryption.org/mlkem768x25519";
constexpr std::string_view kRecipientHrp = "age1pq";
constexpr std::string_view kIdentityHrp = "AGE-SECRET-KEY-PQ-";
static_assert(kHpkePrivateKeyLen == sizeof(Identity::secret_key));

// WC_AGE_KEY_MAX_LEN holds the recipient, the longest Bech32 key.
constexpr size_t kRecipientLen = kRecipientHrp.size() + 1 + (kPublicKeyLen * 8 + 4) / 5 + 6;
static_assert(kRecipientLen < WC_AGE_KEY_MAX_LEN);

wc_status parse_recipient(std::string_view text, Recipient *recipient, const char **detail) {
  const auto decoded = decode_bech32(text);
  if (!decoded || decoded->hrp != kRecipientHrp || decoded->data.size() != kPublicKeyLen) {
    return fail(WC_ERR_FORMAT, detail,
                "not an age recipient: an age1pq1 key is Bech32 of 1216 bytes (ML-KEM-768 and X25519)");
  }
  recipient->type = KeyType::hybrid;
  recipient->hybrid_public_key = decoded->data;
  return WC_OK;
}

wc_status parse_identity(std::string_view text, Identity *identity, const char **detail) {
  auto decoded = decode_bech32(text);
  const bool valid = decoded && decoded->hrp == kIdentityHrp && decoded->data.size() == kHpkePrivateKeyLen;
  if (valid) {
    identity->type = KeyType::hybrid;
    std::copy(decoded->data.begin(), decoded->data.end(), identity->secret_key.begin());
  }
  if (decoded) secure_wipe(decoded->data.data(), decoded->data.size());
  if (!valid) return fail(WC_ERR_FORMAT, detail, "not an age identity: an AGE-SECRET-KEY-PQ-1 key holds 32 bytes");
  return WC_OK;
}

wc_status format_identity(const Identity &identity, std::string *text) {
  *text = encode_bech32(kIdentityHrp, identity.secret_key);
  return WC_OK;
}

wc_status recipient_of(const HostCrypto &crypto, const Identity &identity, Recipient *recipient) {
  recipient->type = KeyType::hybrid;
  recipient->hybrid_public_key.resize(kPublicKeyLen);
  return crypto.hpke_public_key(kKem, identity.secret_key, recipient->hybrid_public_key);
}

wc_status format_recipient(const Recipient &recipient, std::string *text) {
  *text = encode_bech32(kRecipientHrp, recipient.hybrid_public_key);
  return WC_OK;
}

wc_status wrap_one(const HostCrypto &crypto, const Recipient &recipient, const FileKey &file_key, Stanza *stanza,
                   const char **detail) {
  if (recipient.hybrid_public_key.size() != kPublicKeyLen) return WC_ERR_INVALID_ARGUMENT;
  std::array<uint8_t, kEncapsulationLen> enc{};
  std::array<uint8_t, kWrappedKeyLen> wrapped{};
  const wc_status status = crypto.hpke_seal_base(kKem, recipient.hybrid_public_key, bytes_of(kHpkeInfo), {},
                                                 file_key.bytes, *crypto.random, enc, wrapped);
  if (status == WC_ERR_FORMAT) {
    return fail(status, detail, "the ML-KEM-768 half of an age1pq1 recipient is not a valid key");
  }
  // The lengths being right, HPKE refuses an argument only for its X25519 key.
  if (status == WC_ERR_INVALID_ARGUMENT) {
    return fail(WC_ERR_FORMAT, detail, "the X25519 half of an age1pq1 recipient is a low-order point");
  }
  if (status != WC_OK) return status;
  stanza->type = kStanzaType;
  stanza->args = {encode_base64(enc)};
  stanza->body.assign(wrapped.begin(), wrapped.end());
  return WC_OK;
}

wc_status wrap(const HostCrypto &crypto, std::span<const Recipient *const> recipients, const FileKey &file_key,
               std::vector<Stanza> *stanzas, const char **detail) {
  return wrap_each(recipients, stanzas, [&](const Recipient &recipient, Stanza *stanza) {
    return wrap_one(crypto, recipient, file_key, stanza, detail);
  });
}

// The file key from one stanza: WC_ERR_NO_IDENTITY for a stanza of another
// type or one this identity does not open, WC_ERR_FORMAT (and *detail) for
// a malformed mlkem768x25519 stanza.
wc_status open_one(const HostCrypto &crypto, const Identity &identity, const Stanza &stanza, FileKey *file_key,
                   const char **detail) {
  if (stanza.type != kStanzaType) return WC_ERR_NO_IDENTITY;
  if (stanza.args.size() != 1) {
    return fail(WC_ERR_FORMAT, detail, "malformed mlkem768x25519 stanza: it takes exactly one argument");
  }
  const auto enc = decode_base64(stanza.args[0]);
  if (!enc || enc->size() != kEncapsulationLen) {
    return fail(WC_ERR_FORMAT, detail,
                "malformed mlkem768x25519 stanza: the encapsulation is not 1120 bytes of canonical base64");
  }
  if (stanza.body.size() != kWrappedKeyLen) {
    return fail(WC_ERR_FORMAT, detail, "malformed mlkem768x25519 stanza: the body is not 32 bytes");
  }
  const wc_status status = crypto.hpke_open_base(kKem, identity.secret_key, *enc, bytes_of(kHpkeInfo), {},
                                                 stanza.body, file_key->bytes);
  if (status == WC_ERR_FORMAT) {
    return fail(status, detail,
                "malformed mlkem768x25519 stanza: its X25519 share is a low-order point (all-zero shared secret)");
  }
  // ML-KEM's implicit rejection makes another recipient's stanza fail here.
  return status == WC_ERR_AUTH ? WC_ERR_NO_IDENTITY : status;
}

wc_status unwrap(const HostCrypto &crypto, std::span<const Identity *const> identities, const Header &header,
                 FileKey *file_key, const char **detail) {
  return open_first(identities, header, detail, [&](const Identity &identity, const Stanza &stanza, const char **why) {
    return open_one(crypto, identity, stanza, file_key, why);
  });
}

}  // namespace

extern const KeyTypeEntry kHybridKey = {
    .type = KeyType::hybrid,
    .name = "hybrid",
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
    .postquantum = true,
};

}  // namespace warpcrypt::age
