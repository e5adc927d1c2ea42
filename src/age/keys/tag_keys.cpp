// age 1.3's tagged recipients, the public side of keys held in hardware:
// "age1tag1..." (a compressed P-256 point; the p256tag stanza) and
// "age1tagpq1..." (an ML-KEM-768 key and an uncompressed P-256 point; the
// mlkem768p256tag stanza). A stanza is HPKE's SealBase of the file key to
// the recipient (HostCrypto's hpke_seal_base), its arguments a 4-byte tag,
// by which the hardware's plugin knows its own stanzas before it asks for
// the user's touch, and the encapsulated key. Only the recipients are
// native, as in age 1.3: the identities are plugins' (AGE-PLUGIN-...), and
// plugin_key.cpp hands a plugin every stanza of a file, these included.
#include <array>
#include <vector>

#include "age/key.h"

namespace warpcrypt::age {
namespace {

// What tells the two types apart.
struct TagType {
  KeyType type;
  std::string_view hrp;
  std::string_view stanza;
  // HPKE's info, and the salt of the tag's HKDF-Extract.
  std::string_view label;
  HpkeKem kem;
  size_t key_len;  // the recipient's bytes
  // The recipient's P-256 point, at its end: what the key is checked
  // against the curve by, and what the tag names it by.
  size_t point_len;
  const char *not_a_recipient;  // a text with the hrp that is not such a key
  const char *not_a_point;      // a key whose point is not on P-256
  const char *bad_key;          // a key the KEM refuses otherwise
};

constexpr TagType kP256Tag = {
    .type = KeyType::p256tag,
    .hrp = "age1tag",
    .stanza = "p256tag",
    .label = "age-encryption.org/p256tag",
    .kem = HpkeKem::dhkem_p256,
    .key_len = kP256CompressedPointLen,
    .point_len = kP256CompressedPointLen,
    .not_a_recipient = "not an age recipient: a p256tag recipient (age1tag1...) is Bech32 of a 33-byte compressed "
                       "P-256 point",
    .not_a_point = "a p256tag recipient (age1tag1...) is not a point of P-256: it is off the curve or not a "
                   "compressed point",
    .bad_key = "a p256tag recipient (age1tag1...) is not a valid P-256 key",
};

constexpr TagType kMlkem768P256Tag = {
    .type = KeyType::mlkem768p256tag,
    .hrp = "age1tagpq",
    .stanza = "mlkem768p256tag",
    .label = "age-encryption.org/mlkem768p256tag",
    .kem = HpkeKem::mlkem768_p256,
    .key_len = hpke_public_key_len(HpkeKem::mlkem768_p256),
    .point_len = kP256PointLen,
    .not_a_recipient = "not an age recipient: an mlkem768p256tag recipient (age1tagpq1...) is Bech32 of 1249 bytes "
                       "(ML-KEM-768 and an uncompressed P-256 point)",
    .not_a_point = "an mlkem768p256tag recipient (age1tagpq1...) ends in no point of P-256: it is off the curve or "
                   "not an uncompressed point",
    .bad_key = "the ML-KEM-768 key of an mlkem768p256tag recipient (age1tagpq1...) fails FIPS 203's modulus check",
};

constexpr size_t kTagLen = 4;

// WC_AGE_KEY_MAX_LEN holds the longer recipient.
static_assert(kMlkem768P256Tag.hrp.size() + 1 + (kMlkem768P256Tag.key_len * 8 + 4) / 5 + 6 < WC_AGE_KEY_MAX_LEN);

template <const TagType &kType>
wc_status parse_recipient(std::string_view text, Recipient *recipient, const char **detail) {
  const auto decoded = decode_bech32(text);
  if (!decoded || decoded->hrp != kType.hrp || decoded->data.size() != kType.key_len) {
    return fail(WC_ERR_FORMAT, detail, kType.not_a_recipient);
  }
  recipient->type = kType.type;
  recipient->tag_public_key = decoded->data;
  return WC_OK;
}

template <const TagType &kType>
wc_status format_recipient(const Recipient &recipient, std::string *text) {
  *text = encode_bech32(kType.hrp, recipient.tag_public_key);
  return WC_OK;
}

// HKDF-Extract-SHA-256(salt = the label, ikm = enc || SHA-256(the point as
// the recipient holds it)[:4]), cut to 4 bytes. p256tag hashes the point
// compressed, which keeps the tag age-plugin-yubikey's identities already
// look for; mlkem768p256tag hashes it alone, without the ML-KEM key, which
// the hardware may give only on a touch.
wc_status compute_tag(const HostCrypto &crypto, std::string_view label, std::span<const uint8_t> point,
                      std::span<const uint8_t> enc, std::array<uint8_t, kTagLen> *tag) {
  std::array<uint8_t, 32> point_hash{};
  wc_status status = crypto.digest(point_hash, "sha256", point);
  std::vector<uint8_t> ikm(enc.begin(), enc.end());
  ikm.insert(ikm.end(), point_hash.begin(), point_hash.begin() + kTagLen);
  std::array<uint8_t, 32> prk{};
  if (status == WC_OK) status = crypto.hmac(prk, "sha256", bytes_of(label), ikm);
  std::copy_n(prk.begin(), kTagLen, tag->begin());
  return status;
}

template <const TagType &kType>
wc_status wrap_one(const HostCrypto &crypto, const Recipient &recipient, const FileKey &file_key, Stanza *stanza,
                   const char **detail) {
  const std::span<const uint8_t> key = recipient.tag_public_key;
  if (key.size() != kType.key_len) return WC_ERR_INVALID_ARGUMENT;
  const std::span<const uint8_t> point = key.last(kType.point_len);
  // HPKE takes the point uncompressed, after the ML-KEM key if any.
  std::array<uint8_t, kP256PointLen> uncompressed{};
  if (crypto.p256_decode_point(uncompressed, point) != WC_OK) return fail(WC_ERR_FORMAT, detail, kType.not_a_point);
  std::vector<uint8_t> hpke_key(key.begin(), key.end() - static_cast<ptrdiff_t>(kType.point_len));
  hpke_key.insert(hpke_key.end(), uncompressed.begin(), uncompressed.end());

  std::vector<uint8_t> enc(hpke_encapsulation_len(kType.kem));
  std::array<uint8_t, kWrappedKeyLen> wrapped{};
  wc_status status = crypto.hpke_seal_base(kType.kem, hpke_key, bytes_of(kType.label), {}, file_key.bytes,
                                           *crypto.random, enc, wrapped);
  if (status == WC_ERR_FORMAT) return fail(status, detail, kType.bad_key);
  std::array<uint8_t, kTagLen> tag{};
  if (status == WC_OK) status = compute_tag(crypto, kType.label, point, enc, &tag);
  if (status != WC_OK) return status;
  stanza->type = kType.stanza;
  stanza->args = {encode_base64(tag), encode_base64(enc)};
  stanza->body.assign(wrapped.begin(), wrapped.end());
  return WC_OK;
}

template <const TagType &kType>
wc_status wrap(const HostCrypto &crypto, std::span<const Recipient *const> recipients, const FileKey &file_key,
               std::vector<Stanza> *stanzas, const char **detail) {
  return wrap_each(recipients, stanzas, [&](const Recipient &recipient, Stanza *stanza) {
    return wrap_one<kType>(crypto, recipient, file_key, stanza, detail);
  });
}

// No identity is of these types (they have no identity text), so none
// opens a stanza here: a plugin's identity opens it, in plugin_key.cpp.
wc_status unwrap(const HostCrypto &, std::span<const Identity *const>, const Header &, FileKey *, const char **) {
  return WC_ERR_NO_IDENTITY;
}

}  // namespace

extern const KeyTypeEntry kP256TagKey = {
    .type = kP256Tag.type,
    .name = "p256tag",
    .recipient_prefix = kP256Tag.hrp,
    .parse_recipient = parse_recipient<kP256Tag>,
    .cannot_format_identity = "a p256tag identity has no age secret key: it is held in hardware, behind a plugin "
                              "identity (AGE-PLUGIN-...)",
    .cannot_derive_recipient = "a p256tag identity is held in hardware: its age1tag1 recipient is the plugin's to give",
    .format_recipient = format_recipient<kP256Tag>,
    .wrap = wrap<kP256Tag>,
    .unwrap = unwrap,
};

extern const KeyTypeEntry kMlkem768P256TagKey = {
    .type = kMlkem768P256Tag.type,
    .name = "mlkem768p256tag",
    .recipient_prefix = kMlkem768P256Tag.hrp,
    .parse_recipient = parse_recipient<kMlkem768P256Tag>,
    .cannot_format_identity = "an mlkem768p256tag identity has no age secret key: it is held in hardware, behind a "
                              "plugin identity (AGE-PLUGIN-...)",
    .cannot_derive_recipient = "an mlkem768p256tag identity is held in hardware: its age1tagpq1 recipient is the "
                               "plugin's to give",
    .format_recipient = format_recipient<kMlkem768P256Tag>,
    .wrap = wrap<kMlkem768P256Tag>,
    .unwrap = unwrap,
    .postquantum = true,
};

}  // namespace warpcrypt::age
