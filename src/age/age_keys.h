// age's recipient types: what a file is encrypted to (a recipient) and what
// opens it (an identity). X25519 keys in their Bech32 spellings ("age1...",
// "AGE-SECRET-KEY-1..."), age 1.3's post-quantum hybrid keys ("age1pq1...",
// "AGE-SECRET-KEY-PQ-1...": age/age_pq.h), SSH keys (ssh-ed25519, ssh-rsa:
// age/age_ssh.h), scrypt passphrases, and plugins ("age1NAME1...",
// "AGE-PLUGIN-NAME-1...", run by age/age_plugin_process.h). Each native key
// wraps the file key into one stanza of the header and unwraps it from one;
// a plugin wraps and unwraps for all of its keys in one run.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "age/age_format.h"
#include "age/ssh_keys.h"
#include "warpcrypt/age.h"

namespace warpcrypt::age {

// ---- Bech32 (BIP 173) -----------------------------------------------------

// `hrp` || "1" || data || checksum, in the case of `hrp` (which is all
// lower or all upper case). age puts no length limit on the string.
std::string encode_bech32(std::string_view hrp, std::span<const uint8_t> data);
struct Bech32 {
  std::string hrp;  // as written
  std::vector<uint8_t> data;
};
// nullopt for mixed case, a bad character, a bad checksum or non-zero
// padding bits.
std::optional<Bech32> decode_bech32(std::string_view text);

// ---- keys -----------------------------------------------------------------

inline constexpr unsigned kDefaultWorkFactor = WC_AGE_DEFAULT_WORK_FACTOR;  // age's: about a second
inline constexpr unsigned kDefaultMaxWorkFactor = WC_AGE_DEFAULT_MAX_WORK_FACTOR;
inline constexpr unsigned kMaxWorkFactor = WC_AGE_MAX_WORK_FACTOR;

enum class KeyType { x25519, scrypt, hybrid, ssh, plugin };

// Whom a file is encrypted to. The passphrase is wiped on destruction.
struct Recipient {
  KeyType type = KeyType::x25519;
  std::array<uint8_t, 32> public_key{};    // X25519
  std::vector<uint8_t> hybrid_public_key;  // hybrid: ML-KEM-768 || X25519, kHybridPublicKeyLen bytes
  std::vector<uint8_t> passphrase;         // scrypt
  unsigned work_factor = kDefaultWorkFactor;
  SshPublicKey ssh;                      // ssh
  std::string plugin;               // plugin: its name, NAME in age1NAME1...
  std::string encoding;             // plugin: the recipient as written
  wc_age_plugin_ui plugin_ui{};     // plugin: how it talks to the user
  ~Recipient();
};

// What opens a file; the secrets are wiped on destruction.
struct Identity {
  KeyType type = KeyType::x25519;
  std::array<uint8_t, 32> secret_key{};  // X25519, or the hybrid KEM's 32-byte seed
  std::vector<uint8_t> passphrase;       // scrypt
  unsigned max_work_factor = kDefaultMaxWorkFactor;
  std::shared_ptr<const OpensshKeyFile> ssh;  // ssh: the key file, its private part maybe encrypted
  // ssh: asks for an encrypted key file's passphrase, called only when a
  // stanza names the key (its public key is in clear); unset, such a key
  // opens nothing.
  std::function<wc_status(std::vector<uint8_t> *passphrase)> ask_ssh_passphrase;
  std::string plugin;               // plugin: its name, lower case
  std::string encoding;             // plugin: the identity as written
  wc_age_plugin_ui plugin_ui{};     // plugin: how it talks to the user
  ~Identity();
};

// A fresh X25519 or hybrid identity from crypto's random source.
wc_status generate_identity(const HostCrypto &crypto, Identity *identity, KeyType type = KeyType::x25519);

// "age1..." or an SSH public key line to a recipient. WC_ERR_UNSUPPORTED (and *detail) for a type age
// defines and this build does not run; WC_ERR_FORMAT for anything else that
// is no recipient.
wc_status parse_recipient(std::string_view text, Recipient *recipient, const char **detail);
// "AGE-SECRET-KEY-1..." to an identity; errors as parse_recipient.
wc_status parse_identity(std::string_view text, Identity *identity, const char **detail);
// A recipients file (-R) or identity file (-i): one key per line, '#'
// comments and empty lines skipped (SSH public keys among them, in
// authorized_keys form); an identity file that opens with "-----BEGIN" is
// one OpenSSH private key (age/age_ssh.h). A file with no key is
// WC_ERR_FORMAT.
wc_status parse_recipients_file(std::string_view text, std::vector<Recipient> *recipients, const char **detail);
wc_status parse_identities_file(std::string_view text, std::vector<Identity> *identities, const char **detail);

// ---- what each type does with text -----------------------------------------
//
// Every call that writes a key as text, or derives a recipient from an
// identity, asks the key's type (age_keys.cpp holds the one table of them),
// so none treats a key as a type it is not: a type that cannot do the one
// asked refuses with WC_ERR_UNSUPPORTED and a *detail that names it.

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

// ---- stanzas --------------------------------------------------------------

// ChaCha20-Poly1305 of the file key under a stanza's wrapping key, as every
// stanza type but ssh-rsa wraps it. X25519, scrypt and ssh-ed25519 use the
// all-zero nonce (each wrapping key is used once), the hybrid stanza HPKE's
// base nonce. Opening is WC_ERR_AUTH where `key` or `nonce` is not the one;
// `body` is kFileKeyLen plus the tag.
inline constexpr size_t kWrappedKeyLen = kFileKeyLen + engine::kStreamTagLen;
inline constexpr std::array<uint8_t, 12> kZeroNonce{};
wc_status seal_file_key(std::span<const uint8_t, 32> key, std::span<const uint8_t, 12> nonce, const FileKey &file_key,
                        std::array<uint8_t, kWrappedKeyLen> *wrapped);
wc_status open_file_key(std::span<const uint8_t, 32> key, std::span<const uint8_t, 12> nonce,
                        std::span<const uint8_t> body, FileKey *file_key);

// The stanza that gives `recipient` the file key. Refuses an X25519
// recipient that is a low-order point (WC_ERR_INVALID_ARGUMENT: no identity
// could open its stanza) and reports scrypt's memory it cannot allocate
// (WC_ERR_OUT_OF_MEMORY); *detail says which.
// A plugin recipient is WC_ERR_INVALID_ARGUMENT: its plugin runs once for
// all its recipients (wrap_all).
wc_status wrap(const HostCrypto &crypto, const Recipient &recipient, const FileKey &file_key, Stanza *stanza,
               const char **detail);
// The stanzas for every recipient: each native one's, then those of each
// plugin, run once for all of its recipients.
wc_status wrap_all(const HostCrypto &crypto, std::span<const Recipient> recipients, const FileKey &file_key,
                   std::vector<Stanza> *stanzas, const char **detail);

// The file key from the header with the first identity that opens one of
// its stanzas, the header's MAC checked under it. Refuses an scrypt stanza
// beside any other (WC_ERR_FORMAT), a malformed stanza of a type an
// identity reads (WC_ERR_FORMAT), an scrypt work factor above the
// identity's limit (WC_ERR_FORMAT); native identities are tried before
// plugins, and a plugin's failure ends the search (as in age); none
// opening is WC_ERR_NO_IDENTITY, a
// MAC that does not match WC_ERR_AUTH. *detail says which.
wc_status unwrap_file_key(const HostCrypto &crypto, const Header &header, std::span<const Identity> identities,
                          FileKey *file_key, const char **detail);

}  // namespace warpcrypt::age
