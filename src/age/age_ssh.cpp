#include "age/age_ssh.h"

#include <array>

#include "age/key_table.h"
#include "core/secret_bytes.h"

namespace warpcrypt::age {

wc_status parse_ssh_recipient(std::string_view text, Recipient *recipient, const char **detail) {
  const wc_status status = parse_ssh_public_key(text, &recipient->ssh, detail);
  if (status != WC_OK) return status;
  recipient->type = recipient->ssh.type == SshKeyType::ed25519 ? KeyType::ssh_ed25519 : KeyType::ssh_rsa;
  return WC_OK;
}

wc_status parse_ssh_identity(std::string_view text, Identity *identity, const char **detail) {
  auto file = std::make_shared<SshKeyFile>();
  const wc_status status = parse_ssh_key_file(text, file.get(), detail);
  if (status != WC_OK) return status;
  identity->type = file->type() == SshKeyType::ed25519 ? KeyType::ssh_ed25519 : KeyType::ssh_rsa;
  identity->ssh = std::move(file);
  return WC_OK;
}

wc_status format_ssh_recipient(const Recipient &recipient, std::string *text) {
  *text = format_ssh_public_key(recipient.ssh);
  return WC_OK;
}

wc_status ssh_recipient_of(const HostCrypto &crypto, const Identity &identity, Recipient *recipient) {
  recipient->type = identity.type;
  const char *unheard = nullptr;  // recipient_of has no detail to give
  return ssh_key_file_public_key(crypto, *identity.ssh, &recipient->ssh, &unheard);
}

wc_status ssh_key_tag(const HostCrypto &crypto, const SshPublicKey &key, std::string *tag) {
  std::array<uint8_t, 32> hash{};
  const wc_status status = crypto.digest(hash, "sha256", key.wire);
  if (status == WC_OK) *tag = encode_base64(std::span<const uint8_t>(hash).first(4));
  return status;
}

wc_status ssh_identity_tag(const HostCrypto &crypto, const Identity &identity, std::string *tag,
                           const char **detail) {
  SshPublicKey key;
  const wc_status status = ssh_key_file_public_key(crypto, *identity.ssh, &key, detail);
  return status == WC_OK ? ssh_key_tag(crypto, key, tag) : status;
}

wc_status open_ssh_identity(const HostCrypto &crypto, const Identity &identity, SshPrivateKey *key,
                            const char **detail) {
  std::vector<uint8_t> passphrase;
  if (identity.ssh->encrypted()) {
    if (!identity.ask_ssh_passphrase) {
      return fail(WC_ERR_NO_IDENTITY, detail,
                  "a stanza names a passphrase-protected SSH key, and no passphrase was given for it");
    }
    if (const wc_status status = identity.ask_ssh_passphrase(&passphrase); status != WC_OK) {
      secure_wipe(passphrase.data(), passphrase.size());
      return fail(status, detail, "could not read the SSH key's passphrase");
    }
  }
  const wc_status status = open_ssh_key_file(crypto, *identity.ssh, passphrase, key, detail);
  secure_wipe(passphrase.data(), passphrase.size());
  return status;
}

wc_status unwrap_ssh(const HostCrypto &crypto, const Identity &identity, const Stanza &stanza, FileKey *file_key,
                     const char **detail) {
  const Identity *const self = &identity;
  Header alone;
  alone.stanzas = {stanza};
  return key_type(identity.type).unwrap(crypto, {&self, 1}, alone, file_key, detail);
}

}  // namespace warpcrypt::age
