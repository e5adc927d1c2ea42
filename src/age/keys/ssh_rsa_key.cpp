// age's ssh-rsa keys (age/age_ssh.h): the file key under
// RSA-OAEP-SHA-256 with the label "age-encryption.org/v1/ssh-rsa".
#include "age/age_ssh.h"

namespace warpcrypt::age {
namespace {

constexpr std::string_view kLabel = "age-encryption.org/v1/ssh-rsa";

// WC_AGE_KEY_MAX_LEN holds the longest key line: 16384 bits, whose mpints
// may each take a zero byte in front of their high bit.
constexpr size_t padded_base64_len(size_t len) { return (len + 2) / 3 * 4; }
constexpr size_t kLongestBlob = 4 + kSshRsa.size() + 4 + 1 + kMaxRsaExponentBytes + 4 + 1 + kMaxRsaModulusBytes;
static_assert(kSshRsa.size() + 1 + padded_base64_len(kLongestBlob) < WC_AGE_KEY_MAX_LEN);

wc_status wrap_one(const HostCrypto &crypto, const SshPublicKey &key, const FileKey &file_key, Stanza *stanza,
                   const char **detail) {
  std::string tag;
  wc_status status = ssh_key_tag(crypto, key, &tag);
  if (status == WC_OK) {
    status = crypto.rsa_oaep_encrypt(&stanza->body, key.rsa, "sha256", bytes_of(kLabel), file_key.bytes);
  }
  if (status == WC_ERR_INVALID_ARGUMENT) *detail = "the ssh-rsa recipient is not a valid RSA public key";
  if (status != WC_OK) return status;
  stanza->type = kSshRsa;
  stanza->args = {tag};
  return WC_OK;
}

wc_status wrap(const HostCrypto &crypto, std::span<const Recipient *const> recipients, const FileKey &file_key,
               std::vector<Stanza> *stanzas, const char **detail) {
  return wrap_each(recipients, stanzas, [&](const Recipient &recipient, Stanza *stanza) {
    return wrap_one(crypto, recipient.ssh, file_key, stanza, detail);
  });
}

wc_status open(const HostCrypto &crypto, const Identity &identity, const Stanza &stanza, FileKey *file_key,
               const char **detail) {
  if (stanza.type != kSshRsa) return WC_ERR_NO_IDENTITY;
  if (stanza.args.size() != 1) {
    return fail(WC_ERR_FORMAT, detail, "malformed ssh-rsa stanza: it takes exactly one argument, a tag");
  }
  std::string tag;
  wc_status status = ssh_identity_tag(crypto, identity, &tag, detail);
  if (status != WC_OK) return status;
  if (stanza.args[0] != tag) return WC_ERR_NO_IDENTITY;
  SshPrivateKey key;
  status = open_ssh_identity(crypto, identity, &key, detail);
  if (status != WC_OK) return status;
  size_t len = 0;
  status = crypto.rsa_oaep_decrypt(file_key->bytes, &len, key.rsa, "sha256", bytes_of(kLabel), stanza.body);
  if (status == WC_ERR_INVALID_ARGUMENT) {
    return fail(WC_ERR_FORMAT, detail, "the ssh-rsa private key is not a valid RSA key");
  }
  if (status == WC_OK && len != kFileKeyLen) status = WC_ERR_AUTH;
  if (status == WC_ERR_AUTH) *detail = "the ssh-rsa stanza names this key but does not open with it";
  return status;
}

wc_status unwrap(const HostCrypto &crypto, std::span<const Identity *const> identities, const Header &header,
                 FileKey *file_key, const char **detail) {
  return open_first(identities, header, detail, [&](const Identity &identity, const Stanza &stanza, const char **why) {
    return open(crypto, identity, stanza, file_key, why);
  });
}

}  // namespace

extern const KeyTypeEntry kSshRsaKey = {
    .type = KeyType::ssh_rsa,
    .name = "ssh-rsa",
    .recipient_prefix = kSshRsa,
    .identity_prefix = kSshIdentityPrefix,
    .parse_recipient = parse_ssh_recipient,
    .parse_identity = parse_ssh_identity,
    .cannot_format_identity = "an ssh-rsa identity has no age secret key: its secret is the SSH private key file",
    .recipient_of = ssh_recipient_of,
    .format_recipient = format_ssh_recipient,
    .wrap = wrap,
    .unwrap = unwrap,
    .stanza = kSshRsa,
};

}  // namespace warpcrypt::age
