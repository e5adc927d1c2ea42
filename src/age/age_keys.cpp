#include "age/age_keys.h"

#include <algorithm>

#include "age/key_table.h"
#include "core/status_text.h"

namespace warpcrypt::age {
namespace {

// What a key's text says its type is: the first word of text with a space
// in it (an SSH line's key type, an OpenSSH file's "-----BEGIN"), else the
// text before its last '1' (a Bech32 key's human-readable part, "age",
// "AGE-SECRET-KEY-PQ-", "age1yubikey").
std::string_view key_lead(std::string_view text) {
  const size_t space = text.find_first_of(" \t\r\n");
  if (space != std::string_view::npos) return text.substr(0, space);
  return text.substr(0, text.rfind('1'));
}

bool claims(std::string_view prefix, std::string_view lead) {
  if (!prefix.ends_with('*')) return !prefix.empty() && lead == prefix;
  const std::string_view stem = prefix.substr(0, prefix.size() - 1);
  return lead.size() > stem.size() && lead.starts_with(stem);
}

// The type whose prefix claims `text`: the one it names whole before one
// whose prefix it goes on from ("age1pq" is hybrid's, not a plugin's).
const KeyTypeEntry *type_of_text(std::string_view text, std::string_view KeyTypeEntry::*prefix) {
  const std::string_view lead = key_lead(text);
  const KeyTypeEntry *named = nullptr;
  for (const KeyTypeEntry *entry : key_types()) {
    if (!claims(entry->*prefix, lead)) continue;
    if (!(entry->*prefix).ends_with('*')) return entry;
    named = entry;
  }
  return named;
}

wc_status refuse(const char *why, const char **detail) { return fail(WC_ERR_UNSUPPORTED, detail, why); }

// Calls `each` with every line of a key file that is neither empty nor a
// comment; stops at the first failure.
template <typename Each>
wc_status for_each_key_line(std::string_view text, Each each) {
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (line.empty() || line.starts_with('#')) continue;
    const wc_status status = each(line);
    if (status != WC_OK) return status;
  }
  return WC_OK;
}

// The keys of `keys` whose type is `type`, in their order.
template <typename Key>
std::vector<const Key *> keys_of_type(std::span<const Key> keys, KeyType type) {
  std::vector<const Key *> of_type;
  for (const Key &key : keys) {
    if (key.type == type) of_type.push_back(&key);
  }
  return of_type;
}

}  // namespace

wc_status generate_identity(const HostCrypto &crypto, Identity *identity, KeyType type) {
  if (key_type(type).format_identity == nullptr) return WC_ERR_INVALID_ARGUMENT;
  identity->type = type;
  return crypto.random->fill(identity->secret_key);
}

wc_status parse_recipient(std::string_view text, Recipient *recipient, const char **detail) {
  if (const KeyTypeEntry *type = type_of_text(text, &KeyTypeEntry::recipient_prefix)) {
    return type->parse_recipient(text, recipient, detail);
  }
  if (const char *why = unsupported_ssh_key_type(key_lead(text))) return refuse(why, detail);
  return fail(WC_ERR_FORMAT, detail, "not an age recipient: expected age1 and 58 Bech32 characters");
}

wc_status parse_identity(std::string_view text, Identity *identity, const char **detail) {
  if (const KeyTypeEntry *type = type_of_text(text, &KeyTypeEntry::identity_prefix)) {
    return type->parse_identity(text, identity, detail);
  }
  if (is_ssh_public_key_line(text)) {
    return refuse("an SSH public key is a recipient; decrypt with its private key file", detail);
  }
  return fail(WC_ERR_FORMAT, detail, "not an age identity: expected AGE-SECRET-KEY-1 and 58 Bech32 characters");
}

wc_status parse_recipients_file(std::string_view text, std::vector<Recipient> *recipients, const char **detail) {
  const wc_status status = for_each_key_line(text, [&](std::string_view line) {
    return parse_recipient(line, &recipients->emplace_back(), detail);
  });
  if (status == WC_OK && recipients->empty()) {
    return fail(WC_ERR_FORMAT, detail, "the recipients file holds no recipient");
  }
  return status;
}

wc_status parse_identities_file(std::string_view text, std::vector<Identity> *identities, const char **detail) {
  // A PEM block is one key, whole; any other file is a key a line.
  if (text.starts_with("-----BEGIN")) return parse_identity(text, &identities->emplace_back(), detail);
  const wc_status status = for_each_key_line(text, [&](std::string_view line) {
    return parse_identity(line, &identities->emplace_back(), detail);
  });
  if (status == WC_OK && identities->empty()) {
    return fail(WC_ERR_FORMAT, detail, "the identity file holds no identity");
  }
  return status;
}

const char *type_name(const Identity &identity) { return key_type(identity.type).name; }

wc_status format_identity(const Identity &identity, std::string *text, const char **detail) {
  const KeyTypeEntry &type = key_type(identity.type);
  return type.format_identity != nullptr ? type.format_identity(identity, text)
                                         : refuse(type.cannot_format_identity, detail);
}

wc_status recipient_of(const HostCrypto &crypto, const Identity &identity, Recipient *recipient,
                       const char **detail) {
  const KeyTypeEntry &type = key_type(identity.type);
  return type.recipient_of != nullptr ? type.recipient_of(crypto, identity, recipient)
                                      : refuse(type.cannot_derive_recipient, detail);
}

wc_status format_recipient(const Recipient &recipient, std::string *text, const char **detail) {
  const KeyTypeEntry &type = key_type(recipient.type);
  return type.format_recipient != nullptr ? type.format_recipient(recipient, text)
                                          : refuse(type.cannot_format_recipient, detail);
}

wc_status check_recipients(std::span<const Recipient> recipients, const char **detail) {
  const auto is = [](bool KeyTypeEntry::*property) {
    return [property](const Recipient &recipient) { return key_type(recipient.type).*property; };
  };
  if (recipients.size() > 1 && std::any_of(recipients.begin(), recipients.end(), is(&KeyTypeEntry::passphrase))) {
    return fail(WC_ERR_INVALID_ARGUMENT, detail, "a passphrase cannot be combined with other recipients");
  }
  const auto postquantum = std::count_if(recipients.begin(), recipients.end(), is(&KeyTypeEntry::postquantum));
  if (postquantum != 0 && static_cast<size_t>(postquantum) != recipients.size()) {
    return fail(WC_ERR_INVALID_ARGUMENT, detail,
                "incompatible recipients: post-quantum (age1pq1, age1tagpq1) recipients cannot be combined with "
                "classical ones: the file would be open to a quantum computer");
  }
  return WC_OK;
}

wc_status wrap(const HostCrypto &crypto, const Recipient &recipient, const FileKey &file_key, Stanza *stanza,
               const char **detail) {
  std::vector<Stanza> stanzas;
  const wc_status status = wrap_all(crypto, {&recipient, 1}, file_key, &stanzas, detail);
  if (status == WC_OK) *stanza = std::move(stanzas.front());
  return status;
}

wc_status wrap_all(const HostCrypto &crypto, std::span<const Recipient> recipients, const FileKey &file_key,
                   std::vector<Stanza> *stanzas, const char **detail) {
  for (const KeyTypeEntry *type : key_types()) {
    const std::vector<const Recipient *> of_type = keys_of_type(recipients, type->type);
    if (of_type.empty()) continue;
    if (const wc_status status = type->wrap(crypto, of_type, file_key, stanzas, detail); status != WC_OK) {
      return status;
    }
  }
  return WC_OK;
}

wc_status unwrap_file_key(const HostCrypto &crypto, const Header &header, std::span<const Identity> identities,
                          FileKey *file_key, const char **detail) {
  const auto written_by = [](const Stanza &stanza) -> const KeyTypeEntry * {
    for (const KeyTypeEntry *type : key_types()) {
      if (!type->stanza.empty() && type->stanza == stanza.type) return type;
    }
    return nullptr;
  };
  const bool passphrase_file = std::any_of(header.stanzas.begin(), header.stanzas.end(), [&](const Stanza &stanza) {
    const KeyTypeEntry *type = written_by(stanza);
    return type != nullptr && type->passphrase;
  });
  if (passphrase_file && header.stanzas.size() != 1) {
    return fail(WC_ERR_FORMAT, detail, "an age header with an scrypt stanza must hold no other stanza");
  }
  // Why a stanza that an identity knows for its own stayed shut (an SSH
  // key with no way to its passphrase), said if no other identity opens
  // the file.
  const char *own_stanza_unopened = nullptr;
  bool passphrase_given = false;
  for (const KeyTypeEntry *type : key_types()) {
    const std::vector<const Identity *> of_type = keys_of_type(identities, type->type);
    if (of_type.empty()) continue;
    passphrase_given = passphrase_given || type->passphrase;
    const char *why = nullptr;
    const wc_status status = type->unwrap(crypto, of_type, header, file_key, &why);
    if (status == WC_OK) return check_mac(crypto, header, *file_key, detail);
    if (status != WC_ERR_NO_IDENTITY) {
      if (why != nullptr) *detail = why;
      return status;
    }
    if (why != nullptr) own_stanza_unopened = why;
  }
  if (own_stanza_unopened != nullptr) return fail(WC_ERR_NO_IDENTITY, detail, own_stanza_unopened);
  if (passphrase_file) {
    return fail(WC_ERR_NO_IDENTITY, detail,
                passphrase_given ? "incorrect passphrase"
                                 : "the file is passphrase-encrypted but identities were specified");
  }
  if (passphrase_given) {
    return fail(WC_ERR_NO_IDENTITY, detail, "the file is not passphrase-encrypted, identities are required");
  }
  const bool all_run_here = std::all_of(header.stanzas.begin(), header.stanzas.end(),
                                        [&](const Stanza &stanza) { return written_by(stanza) != nullptr; });
  return fail(WC_ERR_NO_IDENTITY, detail,
              all_run_here ? status_text(WC_ERR_NO_IDENTITY)
                           : "no identity matched a recipient (the file also has stanzas of other types, such as a "
                             "plugin's, that no identity given opens)");
}

}  // namespace warpcrypt::age
