#include "age/age_ssh.h"

#include <algorithm>
#include <array>
#include <optional>

#include "core/secret_bytes.h"

namespace warpcrypt::age {
namespace {

constexpr std::string_view kEd25519Label = "age-encryption.org/v1/ssh-ed25519";
constexpr std::string_view kRsaLabel = "age-encryption.org/v1/ssh-rsa";

wc_status fail(wc_status status, const char **detail, const char *why) {
  *detail = why;
  return status;
}

// The stanza's first argument: which SSH key it is for.
wc_status key_tag(const HostCrypto &crypto, const SshPublicKey &key, std::string *tag) {
  std::array<uint8_t, 32> hash{};
  const wc_status status = crypto.digest(hash, "sha256", key.wire);
  if (status == WC_OK) *tag = encode_base64(std::span<const uint8_t>(hash).first(4));
  return status;
}

// The X25519 shared secret tweaked by the SSH key, then the wrapping key:
// both sides of ssh-ed25519 run this with the exchange's own secret.
wc_status ed25519_wrap_key(const HostCrypto &crypto, const SshPublicKey &key, std::span<const uint8_t, 32> shared,
                           std::span<const uint8_t, 32> share, std::span<const uint8_t, 32> recipient,
                           DerivedKey *wrap_key) {
  std::array<uint8_t, 32> tweak{}, tweaked{};
  wc_status status = crypto.hkdf(tweak, "sha256", {}, key.wire, bytes_of(kEd25519Label));
  if (status == WC_OK) status = crypto.x25519(tweaked, tweak, shared);
  std::array<uint8_t, 64> salt{};
  std::copy(share.begin(), share.end(), salt.begin());
  std::copy(recipient.begin(), recipient.end(), salt.begin() + 32);
  if (status == WC_OK) status = crypto.hkdf(wrap_key->bytes, "sha256", tweaked, salt, bytes_of(kEd25519Label));
  secure_wipe(tweak.data(), tweak.size());
  secure_wipe(tweaked.data(), tweaked.size());
  return status;
}

wc_status wrap_ed25519(const HostCrypto &crypto, const SshPublicKey &key, const FileKey &file_key, Stanza *stanza,
                       const char **detail) {
  std::array<uint8_t, 32> recipient{};
  if (crypto.ed25519_to_x25519(recipient, key.ed25519) != WC_OK) {
    return fail(WC_ERR_INVALID_ARGUMENT, detail, "the ssh-ed25519 recipient is not a valid Ed25519 public key");
  }
  std::array<uint8_t, 32> ephemeral{}, share{}, shared{};
  wc_status status = crypto.random->fill(ephemeral);
  if (status == WC_OK) status = crypto.x25519(share, ephemeral, {});
  if (status == WC_OK) status = crypto.x25519(shared, ephemeral, recipient);
  DerivedKey wrap_key;
  if (status == WC_OK) status = ed25519_wrap_key(crypto, key, shared, share, recipient, &wrap_key);
  secure_wipe(ephemeral.data(), ephemeral.size());
  secure_wipe(shared.data(), shared.size());
  std::array<uint8_t, kWrappedKeyLen> wrapped{};
  if (status == WC_OK) status = seal_file_key(wrap_key.bytes, kZeroNonce, file_key, &wrapped);
  std::string tag;
  if (status == WC_OK) status = key_tag(crypto, key, &tag);
  if (status != WC_OK) return status;
  stanza->type = kSshEd25519;
  stanza->args = {tag, encode_base64(share)};
  stanza->body.assign(wrapped.begin(), wrapped.end());
  return WC_OK;
}

wc_status wrap_rsa(const HostCrypto &crypto, const SshPublicKey &key, const FileKey &file_key, Stanza *stanza,
                   const char **detail) {
  std::string tag;
  wc_status status = key_tag(crypto, key, &tag);
  if (status != WC_OK) return status;
  status = crypto.rsa_oaep_encrypt(&stanza->body, key.rsa, "sha256", bytes_of(kRsaLabel), file_key.bytes);
  if (status == WC_ERR_INVALID_ARGUMENT) *detail = "the ssh-rsa recipient is not a valid RSA public key";
  if (status != WC_OK) return status;
  stanza->type = kSshRsa;
  stanza->args = {tag};
  return WC_OK;
}

// The private key of an identity's file, asking for its passphrase when
// the file is encrypted.
wc_status open_identity(const HostCrypto &crypto, const Identity &identity, SshPrivateKey *key, const char **detail) {
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
  const wc_status status = open_openssh_key_file(crypto, *identity.ssh, passphrase, key, detail);
  secure_wipe(passphrase.data(), passphrase.size());
  return status;
}

wc_status unwrap_ed25519(const HostCrypto &crypto, const Identity &identity, const Stanza &stanza,
                         std::span<const uint8_t, 32> share, FileKey *file_key, const char **detail) {
  SshPrivateKey key;
  wc_status status = open_identity(crypto, identity, &key, detail);
  if (status != WC_OK) return status;
  // The seed must make the public key the file names, or the file lies
  // about which key it holds.
  std::array<uint8_t, 32> derived_public{};
  status = crypto.ed25519_public_key(derived_public, key.ed25519_seed);
  if (status != WC_OK) return status;
  if (derived_public != key.public_key.ed25519) {
    return fail(WC_ERR_FORMAT, detail, "malformed OpenSSH private key: the seed does not make its public key");
  }
  // age's X25519 secret is the first half of SHA-512 of the seed, as
  // Ed25519 derives its scalar; X25519 clamps it.
  std::array<uint8_t, 64> expanded{};
  std::array<uint8_t, 32> scalar{}, own_public{}, shared{};
  status = crypto.digest(expanded, "sha512", key.ed25519_seed);
  std::copy_n(expanded.begin(), 32, scalar.begin());
  secure_wipe(expanded.data(), expanded.size());
  if (status == WC_OK) status = crypto.x25519(own_public, scalar, {});
  if (status == WC_OK && crypto.x25519(shared, scalar, share) != WC_OK) {
    status = fail(WC_ERR_FORMAT, detail, "malformed ssh-ed25519 stanza: the share is a low-order point");
  }
  secure_wipe(scalar.data(), scalar.size());
  DerivedKey wrap_key;
  if (status == WC_OK) {
    status = ed25519_wrap_key(crypto, key.public_key, shared, share, own_public, &wrap_key);
  }
  secure_wipe(shared.data(), shared.size());
  if (status == WC_OK) status = open_file_key(wrap_key.bytes, kZeroNonce, stanza.body, file_key);
  if (status == WC_ERR_AUTH) *detail = "the ssh-ed25519 stanza names this key but does not open with it";
  return status;
}

wc_status unwrap_rsa(const HostCrypto &crypto, const Identity &identity, const Stanza &stanza, FileKey *file_key,
                     const char **detail) {
  SshPrivateKey key;
  wc_status status = open_identity(crypto, identity, &key, detail);
  if (status != WC_OK) return status;
  size_t len = 0;
  status = crypto.rsa_oaep_decrypt(file_key->bytes, &len, key.rsa, "sha256", bytes_of(kRsaLabel), stanza.body);
  if (status == WC_ERR_INVALID_ARGUMENT) {
    return fail(WC_ERR_FORMAT, detail, "the ssh-rsa private key is not a valid RSA key");
  }
  if (status == WC_OK && len != kFileKeyLen) status = WC_ERR_AUTH;
  if (status == WC_ERR_AUTH) *detail = "the ssh-rsa stanza names this key but does not open with it";
  return status;
}

}  // namespace

bool is_ssh_public_key_line(std::string_view text) {
  return text.starts_with("ssh-") || text.starts_with("ecdsa-sha2-") || text.starts_with("sk-");
}

wc_status parse_ssh_recipient(std::string_view text, Recipient *recipient, const char **detail) {
  recipient->type = KeyType::ssh;
  return parse_ssh_public_key(text, &recipient->ssh, detail);
}

wc_status parse_ssh_identity(std::string_view text, Identity *identity, const char **detail) {
  auto file = std::make_shared<OpensshKeyFile>();
  const wc_status status = parse_openssh_key_file(text, file.get(), detail);
  if (status != WC_OK) return status;
  identity->type = KeyType::ssh;
  identity->ssh = std::move(file);
  return WC_OK;
}

wc_status wrap_ssh(const HostCrypto &crypto, const Recipient &recipient, const FileKey &file_key, Stanza *stanza,
                   const char **detail) {
  return recipient.ssh.type == SshKeyType::ed25519 ? wrap_ed25519(crypto, recipient.ssh, file_key, stanza, detail)
                                                   : wrap_rsa(crypto, recipient.ssh, file_key, stanza, detail);
}

wc_status unwrap_ssh(const HostCrypto &crypto, const Identity &identity, const Stanza &stanza, FileKey *file_key,
                     const char **detail) {
  const SshPublicKey &key = identity.ssh->public_key;
  const bool ed25519 = key.type == SshKeyType::ed25519;
  if (stanza.type != (ed25519 ? kSshEd25519 : kSshRsa)) return WC_ERR_NO_IDENTITY;
  if (stanza.args.size() != (ed25519 ? 2u : 1u)) {
    return fail(WC_ERR_FORMAT, detail,
                ed25519 ? "malformed ssh-ed25519 stanza: it takes a tag and a share"
                        : "malformed ssh-rsa stanza: it takes exactly one argument, a tag");
  }
  // As age, a malformed ssh-ed25519 stanza fails whichever key it names.
  std::optional<std::vector<uint8_t>> share;
  if (ed25519) {
    share = decode_base64(stanza.args[1]);
    if (!share || share->size() != 32 || stanza.body.size() != kWrappedKeyLen) {
      return fail(WC_ERR_FORMAT, detail,
                  "malformed ssh-ed25519 stanza: the share is not 32 bytes of canonical base64, or the body not 32 "
                  "bytes");
    }
  }
  std::string tag;
  if (const wc_status status = key_tag(crypto, key, &tag); status != WC_OK) return status;
  if (stanza.args[0] != tag) return WC_ERR_NO_IDENTITY;
  return ed25519 ? unwrap_ed25519(crypto, identity, stanza, std::span<const uint8_t, 32>(share->data(), 32), file_key,
                                  detail)
                 : unwrap_rsa(crypto, identity, stanza, file_key, detail);
}

}  // namespace warpcrypt::age
