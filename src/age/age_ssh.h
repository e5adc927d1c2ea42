// age's SSH recipient types, as agessh defines them and C2SP's age.md
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

#include <string_view>

#include "age/age_keys.h"

namespace warpcrypt::age {

// Whether `text` begins as an SSH public key line does (ssh-..., ecdsa-sha2-...,
// sk-...), so that a key type age does not use is refused by name.
bool is_ssh_public_key_line(std::string_view text);
// "ssh-ed25519 AAAA... comment" or "ssh-rsa AAAA..." to a recipient.
wc_status parse_ssh_recipient(std::string_view text, Recipient *recipient, const char **detail);
// An OpenSSH private key file to an identity; an encrypted one is opened
// only when a stanza names it (Identity::ask_ssh_passphrase).
wc_status parse_ssh_identity(std::string_view text, Identity *identity, const char **detail);

// As wrap and try_unwrap (age_keys.cpp) for KeyType::ssh: WC_ERR_NO_IDENTITY
// for a stanza of another type or key; a stanza that names this key and
// does not open with it is WC_ERR_AUTH (age fails there too).
wc_status wrap_ssh(const HostCrypto &crypto, const Recipient &recipient, const FileKey &file_key, Stanza *stanza,
                   const char **detail);
wc_status unwrap_ssh(const HostCrypto &crypto, const Identity &identity, const Stanza &stanza, FileKey *file_key,
                     const char **detail);

}  // namespace warpcrypt::age
