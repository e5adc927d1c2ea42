// age's ssh-ed25519 keys (age/age_ssh.h): the file key under
// ChaCha20-Poly1305, keyed by an X25519 exchange with the Ed25519 key's
// Montgomery form, tweaked by the key itself.
#include <algorithm>
#include <array>

#include "age/age_ssh.h"
#include "core/secret_bytes.h"

namespace warpcrypt::age {
namespace {

constexpr std::string_view kLabel = "age-encryption.org/v1/ssh-ed25519";

// The X25519 shared secret tweaked by the SSH key, then the wrapping key:
// both sides run this with the exchange's own secret.
wc_status wrap_key(const HostCrypto &crypto, const SshPublicKey &key, std::span<const uint8_t, 32> shared,
                   std::span<const uint8_t, 32> share, std::span<const uint8_t, 32> recipient, DerivedKey *wrapping) {
  std::array<uint8_t, 32> tweak{}, tweaked{};
  wc_status status = crypto.hkdf(tweak, "sha256", {}, key.wire, bytes_of(kLabel));
  if (status == WC_OK) status = crypto.x25519(tweaked, tweak, shared);
  std::array<uint8_t, 64> salt{};
  std::copy(share.begin(), share.end(), salt.begin());
  std::copy(recipient.begin(), recipient.end(), salt.begin() + 32);
  if (status == WC_OK) status = crypto.hkdf(wrapping->bytes, "sha256", tweaked, salt, bytes_of(kLabel));
  secure_wipe(tweak.data(), tweak.size());
  secure_wipe(tweaked.data(), tweaked.size());
  return status;
}

wc_status wrap_one(const HostCrypto &crypto, const SshPublicKey &key, const FileKey &file_key, Stanza *stanza,
                   const char **detail) {
  std::array<uint8_t, 32> recipient{};
  if (crypto.ed25519_to_x25519(recipient, key.ed25519) != WC_OK) {
    return fail(WC_ERR_INVALID_ARGUMENT, detail, "the ssh-ed25519 recipient is not a valid Ed25519 public key");
  }
  std::array<uint8_t, 32> ephemeral{}, share{}, shared{};
  wc_status status = crypto.random->fill(ephemeral);
  if (status == WC_OK) status = crypto.x25519(share, ephemeral, {});
  if (status == WC_OK) status = crypto.x25519(shared, ephemeral, recipient);
  DerivedKey wrapping;
  if (status == WC_OK) status = wrap_key(crypto, key, shared, share, recipient, &wrapping);
  secure_wipe(ephemeral.data(), ephemeral.size());
  secure_wipe(shared.data(), shared.size());
  std::string tag;
  if (status == WC_OK) status = ssh_key_tag(crypto, key, &tag);
  if (status != WC_OK) return status;
  return seal_stanza(crypto, wrapping.bytes, file_key, kSshEd25519, {tag, encode_base64(share)}, stanza);
}

wc_status wrap(const HostCrypto &crypto, std::span<const Recipient *const> recipients, const FileKey &file_key,
               std::vector<Stanza> *stanzas, const char **detail) {
  return wrap_each(recipients, stanzas, [&](const Recipient &recipient, Stanza *stanza) {
    return wrap_one(crypto, recipient.ssh, file_key, stanza, detail);
  });
}

wc_status open_named(const HostCrypto &crypto, const Identity &identity, const Stanza &stanza,
                     std::span<const uint8_t, 32> share, FileKey *file_key, const char **detail) {
  SshPrivateKey key;
  wc_status status = open_ssh_identity(crypto, identity, &key, detail);
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
  DerivedKey wrapping;
  if (status == WC_OK) status = wrap_key(crypto, key.public_key, shared, share, own_public, &wrapping);
  secure_wipe(shared.data(), shared.size());
  if (status == WC_OK) status = open_file_key(crypto, wrapping.bytes, stanza.body, file_key);
  if (status == WC_ERR_AUTH) *detail = "the ssh-ed25519 stanza names this key but does not open with it";
  return status;
}

wc_status open(const HostCrypto &crypto, const Identity &identity, const Stanza &stanza, FileKey *file_key,
               const char **detail) {
  if (stanza.type != kSshEd25519) return WC_ERR_NO_IDENTITY;
  // As age, a malformed ssh-ed25519 stanza fails whichever key it names.
  if (stanza.args.size() != 2) {
    return fail(WC_ERR_FORMAT, detail, "malformed ssh-ed25519 stanza: it takes a tag and a share");
  }
  const auto share = decode_base64(stanza.args[1]);
  if (!share || share->size() != 32 || stanza.body.size() != kWrappedKeyLen) {
    return fail(WC_ERR_FORMAT, detail,
                "malformed ssh-ed25519 stanza: the share is not 32 bytes of canonical base64, or the body not 32 "
                "bytes");
  }
  std::string tag;
  if (const wc_status status = ssh_identity_tag(crypto, identity, &tag, detail); status != WC_OK) return status;
  if (stanza.args[0] != tag) return WC_ERR_NO_IDENTITY;
  return open_named(crypto, identity, stanza, std::span<const uint8_t, 32>(share->data(), 32), file_key, detail);
}

wc_status unwrap(const HostCrypto &crypto, std::span<const Identity *const> identities, const Header &header,
                 FileKey *file_key, const char **detail) {
  return open_first(identities, header, detail, [&](const Identity &identity, const Stanza &stanza, const char **why) {
    return open(crypto, identity, stanza, file_key, why);
  });
}

}  // namespace

extern const KeyTypeEntry kSshEd25519Key = {
    .type = KeyType::ssh_ed25519,
    .name = "ssh-ed25519",
    .recipient_prefix = kSshEd25519,
    .identity_prefix = kSshIdentityPrefix,
    .parse_recipient = parse_ssh_recipient,
    .parse_identity = parse_ssh_identity,
    .cannot_format_identity =
        "an ssh-ed25519 identity has no age secret key: its secret is the SSH private key file",
    .recipient_of = ssh_recipient_of,
    .format_recipient = format_ssh_recipient,
    .wrap = wrap,
    .unwrap = unwrap,
    .stanza = kSshEd25519,
};

}  // namespace warpcrypt::age
