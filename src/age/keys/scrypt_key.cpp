// age's passphrase: the scrypt stanza, the file key sealed under scrypt of
// the passphrase. A passphrase is given as such (wc_age_*_add_passphrase),
// never as a key's text, and its stanza must be its file's only one.
#include <algorithm>

#include "age/key.h"

namespace warpcrypt::age {
namespace {

constexpr std::string_view kStanzaType = "scrypt";
constexpr std::string_view kLabel = "age-encryption.org/v1/scrypt";
constexpr size_t kSaltLen = 16;

// scrypt's wrap key; where its memory cannot be allocated, encrypting and
// decrypting alike say so.
wc_status wrap_key(const HostCrypto &crypto, std::span<const uint8_t> passphrase, std::span<const uint8_t> salt,
                   unsigned work_factor, DerivedKey *key, const char **detail) {
  std::vector<uint8_t> labelled(kLabel.begin(), kLabel.end());
  labelled.insert(labelled.end(), salt.begin(), salt.end());
  const wc_status status = crypto.scrypt(key->bytes, passphrase, labelled, work_factor);
  if (status == WC_ERR_OUT_OF_MEMORY) {
    *detail = "scrypt cannot allocate the memory its work factor needs (1 KiB times 2 to the work factor)";
  }
  return status;
}

wc_status wrap_one(const HostCrypto &crypto, const Recipient &recipient, const FileKey &file_key, Stanza *stanza,
                   const char **detail) {
  if (recipient.work_factor < 1 || recipient.work_factor > kMaxWorkFactor) return WC_ERR_INVALID_ARGUMENT;
  std::array<uint8_t, kSaltLen> salt{};
  DerivedKey key;
  wc_status status = crypto.random->fill(salt);
  if (status == WC_OK) status = wrap_key(crypto, recipient.passphrase, salt, recipient.work_factor, &key, detail);
  if (status != WC_OK) return status;
  return seal_stanza(crypto, key.bytes, file_key, kStanzaType,
                     {encode_base64(salt), std::to_string(recipient.work_factor)}, stanza);
}

wc_status wrap(const HostCrypto &crypto, std::span<const Recipient *const> recipients, const FileKey &file_key,
               std::vector<Stanza> *stanzas, const char **detail) {
  return wrap_each(recipients, stanzas, [&](const Recipient &recipient, Stanza *stanza) {
    return wrap_one(crypto, recipient, file_key, stanza, detail);
  });
}

wc_status open(const HostCrypto &crypto, const Identity &identity, const Stanza &stanza, FileKey *file_key,
               const char **detail) {
  if (stanza.type != kStanzaType) return WC_ERR_NO_IDENTITY;
  if (stanza.args.size() != 2) {
    return fail(WC_ERR_FORMAT, detail, "malformed scrypt stanza: it takes a salt and a work factor");
  }
  const auto salt = decode_base64(stanza.args[0]);
  if (!salt || salt->size() != kSaltLen) {
    return fail(WC_ERR_FORMAT, detail, "malformed scrypt stanza: the salt is not 16 bytes of canonical base64");
  }
  const std::string &factor = stanza.args[1];
  // A decimal without leading zeros; two digits are enough for any factor.
  if (factor.size() > 2 || factor[0] == '0' ||
      !std::all_of(factor.begin(), factor.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return fail(WC_ERR_FORMAT, detail,
                "malformed scrypt stanza: the work factor is not a decimal number from 1 to 99 without leading zeros");
  }
  const unsigned work_factor = static_cast<unsigned>(std::stoul(factor));
  if (work_factor > identity.max_work_factor) {
    return fail(WC_ERR_FORMAT, detail,
                "the scrypt work factor is above this reader's limit (raise it only for a file you expect)");
  }
  if (stanza.body.size() != kWrappedKeyLen) {
    return fail(WC_ERR_FORMAT, detail, "malformed scrypt stanza: the body is not 32 bytes");
  }
  DerivedKey key;
  wc_status status = wrap_key(crypto, identity.passphrase, *salt, work_factor, &key, detail);
  if (status == WC_OK) status = open_file_key(crypto, key.bytes, stanza.body, file_key);
  return status == WC_ERR_AUTH ? WC_ERR_NO_IDENTITY : status;
}

wc_status unwrap(const HostCrypto &crypto, std::span<const Identity *const> identities, const Header &header,
                 FileKey *file_key, const char **detail) {
  return open_first(identities, header, detail, [&](const Identity &identity, const Stanza &stanza, const char **why) {
    return open(crypto, identity, stanza, file_key, why);
  });
}

}  // namespace

extern const KeyTypeEntry kScryptKey = {
    .type = KeyType::scrypt,
    .name = "passphrase",
    .cannot_format_identity = "a passphrase identity has no age secret key",
    .cannot_derive_recipient = "a passphrase identity has no recipient: encrypt with the passphrase itself",
    .cannot_format_recipient = "a passphrase recipient has no key to write",
    .wrap = wrap,
    .unwrap = unwrap,
    .stanza = kStanzaType,
    .passphrase = true,
};

}  // namespace warpcrypt::age
