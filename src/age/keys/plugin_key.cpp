// age's plugin keys: "age1NAME1..." recipients and "AGE-PLUGIN-NAME-1..."
// identities, which the program age-plugin-NAME wraps and unwraps
// (age/age_plugin_process.h), run once for all of its keys.
#include "age/age_plugin.h"
#include "age/age_plugin_process.h"
#include "age/key.h"

namespace warpcrypt::age {
namespace {

wc_status bad_name(const char **detail) {
  return fail(WC_ERR_FORMAT, detail,
              "not an age plugin key: its plugin name must be Bech32 of letters, digits and +-._ (no '/' or '..')");
}

wc_status parse_recipient(std::string_view text, Recipient *recipient, const char **detail) {
  auto name = plugin_name_of_recipient(text);
  if (!name) return bad_name(detail);
  recipient->type = KeyType::plugin;
  recipient->plugin = std::move(*name);
  recipient->encoding = text;
  return WC_OK;
}

wc_status parse_identity(std::string_view text, Identity *identity, const char **detail) {
  auto name = plugin_name_of_identity(text);
  if (!name) return bad_name(detail);
  identity->type = KeyType::plugin;
  identity->plugin = std::move(*name);
  identity->encoding = text;
  return WC_OK;
}

wc_status format_recipient(const Recipient &recipient, std::string *text) {
  *text = recipient.encoding;
  return WC_OK;
}

wc_status unwrap(const HostCrypto &, std::span<const Identity *const> identities, const Header &header,
                 FileKey *file_key, const char **detail) {
  return unwrap_with_plugins(identities, header, file_key, detail);
}

wc_status wrap(const HostCrypto &, std::span<const Recipient *const> recipients, const FileKey &file_key,
               std::vector<Stanza> *stanzas, const char **detail) {
  return wrap_with_plugins(recipients, file_key, stanzas, detail);
}

}  // namespace

extern const KeyTypeEntry kPluginKey = {
    .type = KeyType::plugin,
    .name = "plugin",
    .recipient_prefix = "age1*",
    .identity_prefix = "AGE-PLUGIN-*",
    .parse_recipient = parse_recipient,
    .parse_identity = parse_identity,
    .cannot_format_identity = "a plugin identity has no age secret key: its AGE-PLUGIN-... text is its plugin's",
    .cannot_derive_recipient = "a plugin identity's recipient is its plugin's to derive, and no plugin is run for "
                               "that: use the recipient the plugin gave with the identity",
    .format_recipient = format_recipient,
    .wrap = wrap,
    .unwrap = unwrap,
};

}  // namespace warpcrypt::age
