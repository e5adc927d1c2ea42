// What age's two SSH key types (keys/ssh_ed25519_key.cpp,
// keys/ssh_rsa_key.cpp) share, as agessh defines them and C2SP's age.md
// describes them:
//
//   -> ssh-ed25519 TAG SHARE   the file key under ChaCha20-Poly1305, keyed
//                              by an X25519 exchange with the Ed25519 key's
//                              Montgomery form, tweaked by the key itself
//   -> ssh-rsa TAG             the file key under RSA-OAEP-SHA-256 with
//                              the label "age-encryption.org/v1/ssh-rsa"
//
// TAG is the first four bytes of SHA-256 of the SSH key blob, in base64: it
// tells an identity which stanza is its own, so an encrypted key file's
// passphrase is asked for only when a stanza names its key.
#pragma once

#include <string>
#include <string_view>

#include "age/key.h"

namespace warpcrypt::age {

// The first line of an SSH private key file, OpenSSH's or PEM: both types'
// identities.
inline constexpr std::string_view kSshIdentityPrefix = "-----BEGIN";

// "ssh-ed25519 AAAA... comment" or "ssh-rsa AAAA..." to a recipient of its
// key's type.
wc_status parse_ssh_recipient(std::string_view text, Recipient *recipient, const char **detail);
// An SSH private key file (ssh_keys.h: OpenSSH's format or PEM) to an
// identity of its key's type; an encrypted one is opened only when a
// stanza names it (Identity::ask_ssh_passphrase).
wc_status parse_ssh_identity(std::string_view text, Identity *identity, const char **detail);
// The key line without a comment, which parse_ssh_recipient reads back.
wc_status format_ssh_recipient(const Recipient &recipient, std::string *text);
// The key file's public key, which an encrypted file holds in clear (a PEM
// one beside the key), so no passphrase is asked.
wc_status ssh_recipient_of(const HostCrypto &crypto, const Identity &identity, Recipient *recipient);

// The stanza's first argument: which SSH key it is for.
wc_status ssh_key_tag(const HostCrypto &crypto, const SshPublicKey &key, std::string *tag);
// The tag of an identity's key, which an unencrypted PEM key file gives
// only once HostCrypto reads it: WC_ERR_FORMAT (and *detail) where it is
// no key.
wc_status ssh_identity_tag(const HostCrypto &crypto, const Identity &identity, std::string *tag,
                           const char **detail);
// The private key of an identity's file, asking for its passphrase when
// the file is encrypted: WC_ERR_NO_IDENTITY (and *detail) where there is
// no way to ask.
wc_status open_ssh_identity(const HostCrypto &crypto, const Identity &identity, SshPrivateKey *key,
                            const char **detail);

// One stanza with an SSH identity, as its type's entry opens it:
// WC_ERR_NO_IDENTITY for a stanza of another type or key; a stanza that
// names this key and does not open with it is WC_ERR_AUTH (age fails there
// too).
wc_status unwrap_ssh(const HostCrypto &crypto, const Identity &identity, const Stanza &stanza, FileKey *file_key,
                     const char **detail);

}  // namespace warpcrypt::age
