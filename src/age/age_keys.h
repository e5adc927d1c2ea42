// age's keys, whatever their type: what a file is encrypted to (a
// recipient) and what opens it (an identity), read from text, written back,
// and used on a header's stanzas. The types are a closed set (age/key.h),
// each filling one entry of the table (age/key_table.h) in its own file
// under age/keys/: X25519 ("age1...", "AGE-SECRET-KEY-1..."), age 1.3's
// post-quantum hybrid ("age1pq1...", "AGE-SECRET-KEY-PQ-1..."), SSH's
// ssh-ed25519 and ssh-rsa, a scrypt passphrase, and plugins ("age1NAME1...",
// "AGE-PLUGIN-NAME-1..."). Every call here looks the type up and does what
// its entry says; one a type cannot do is refused with WC_ERR_UNSUPPORTED
// and a *detail that names the type.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "age/key.h"

namespace warpcrypt::age {

// A fresh identity of a type whose identity is an age secret key (X25519,
// hybrid), from crypto's random source; WC_ERR_INVALID_ARGUMENT for any
// other type.
wc_status generate_identity(const HostCrypto &crypto, Identity *identity, KeyType type = KeyType::x25519);

// A key's text to a recipient or an identity of the type its lead names
// (KeyTypeEntry::recipient_prefix). WC_ERR_UNSUPPORTED (and *detail) for a
// type age defines and this build does not run (SSH keys other than
// ssh-ed25519 and ssh-rsa, a public key given as an identity); WC_ERR_FORMAT
// for anything else that is no key.
wc_status parse_recipient(std::string_view text, Recipient *recipient, const char **detail);
wc_status parse_identity(std::string_view text, Identity *identity, const char **detail);
// A recipients file (-R) or identity file (-i): one key per line, '#'
// comments and empty lines skipped (SSH public keys among them, in
// authorized_keys form); an identity file that opens with "-----BEGIN" is
// one OpenSSH private key. A file with no key is WC_ERR_FORMAT.
wc_status parse_recipients_file(std::string_view text, std::vector<Recipient> *recipients, const char **detail);
wc_status parse_identities_file(std::string_view text, std::vector<Identity> *identities, const char **detail);

// The type as the C API names it, a static string: "x25519", "hybrid",
// "ssh-ed25519", "ssh-rsa", "plugin" or "passphrase".
const char *type_name(const Identity &identity);
// "AGE-SECRET-KEY-1..." or "AGE-SECRET-KEY-PQ-1...": X25519 and hybrid
// identities only. An SSH identity's secret is its key file, a plugin's is
// its plugin's, and a passphrase is no key.
wc_status format_identity(const Identity &identity, std::string *text, const char **detail);
// The recipient an identity opens files for: X25519 and hybrid derive it
// from the secret key, and an SSH key file holds its public key in clear
// (even where the private part is passphrase-protected). A plugin's is the
// plugin's to derive, which is not run for that; a passphrase has none.
wc_status recipient_of(const HostCrypto &crypto, const Identity &identity, Recipient *recipient,
                       const char **detail);
// "age1...", "age1pq1...", an SSH public key line (without a comment), or a
// plugin's recipient as written; a passphrase has no text.
wc_status format_recipient(const Recipient &recipient, std::string *text, const char **detail);

// Whether a file may hold these recipients together: a passphrase only
// alone, a post-quantum key only beside others (age 1.3's rule: a classical
// stanza would leave the file key open to a quantum computer).
// WC_ERR_INVALID_ARGUMENT (and *detail) where not.
wc_status check_recipients(std::span<const Recipient> recipients, const char **detail);

// The stanza that gives one recipient the file key. Refuses an X25519
// recipient that is a low-order point (WC_ERR_INVALID_ARGUMENT: no identity
// could open its stanza) and reports scrypt's memory it cannot allocate
// (WC_ERR_OUT_OF_MEMORY); *detail says which.
wc_status wrap(const HostCrypto &crypto, const Recipient &recipient, const FileKey &file_key, Stanza *stanza,
               const char **detail);
// The stanzas for every recipient, type by type; a plugin is run once for
// all of its recipients.
wc_status wrap_all(const HostCrypto &crypto, std::span<const Recipient> recipients, const FileKey &file_key,
                   std::vector<Stanza> *stanzas, const char **detail);

// The file key from the header with the first identity that opens one of
// its stanzas, the header's MAC checked under it. Refuses an scrypt stanza
// beside any other (WC_ERR_FORMAT), a malformed stanza of a type an
// identity reads (WC_ERR_FORMAT), an scrypt work factor above the
// identity's limit (WC_ERR_FORMAT); native identities are tried before
// plugins, and a plugin's failure ends the search (as in age); none
// opening is WC_ERR_NO_IDENTITY, a MAC that does not match WC_ERR_AUTH.
// *detail says which.
wc_status unwrap_file_key(const HostCrypto &crypto, const Header &header, std::span<const Identity> identities,
                          FileKey *file_key, const char **detail);

}  // namespace warpcrypt::age
