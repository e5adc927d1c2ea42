// What every age key type shares, and all a type's file includes: the keys
// themselves (a recipient, whom a file is encrypted to; an identity, what
// opens it), Bech32, the sealing of a file key in a stanza, and the shape of
// a type's entry in the table of types (age/key_table.h). Each type fills
// its entry in a file of its own under age/keys/.
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

// The closed set of types; each has one entry in the table.
enum class KeyType { x25519, hybrid, p256tag, mlkem768p256tag, ssh_ed25519, ssh_rsa, scrypt, plugin };

// Whom a file is encrypted to: the fields of its type. The passphrase is
// wiped on destruction.
struct Recipient {
  KeyType type = KeyType::x25519;
  std::array<uint8_t, 32> public_key{};    // x25519
  std::vector<uint8_t> hybrid_public_key;  // hybrid: ML-KEM-768 || X25519 (1216 bytes)
  // p256tag: the point as written, compressed (33 bytes);
  // mlkem768p256tag: ML-KEM-768 || an uncompressed point (1249 bytes).
  std::vector<uint8_t> tag_public_key;
  std::vector<uint8_t> passphrase;         // scrypt
  unsigned work_factor = kDefaultWorkFactor;
  SshPublicKey ssh;               // ssh_ed25519, ssh_rsa
  std::string plugin;             // plugin: its name, NAME in age1NAME1...
  std::string encoding;           // plugin: the recipient as written
  wc_age_plugin_ui plugin_ui{};   // plugin: how it talks to the user
  ~Recipient();
};

// What opens a file: the fields of its type, the secrets wiped on
// destruction.
struct Identity {
  KeyType type = KeyType::x25519;
  std::array<uint8_t, 32> secret_key{};  // x25519, or hybrid's 32-byte seed
  std::vector<uint8_t> passphrase;       // scrypt
  unsigned max_work_factor = kDefaultMaxWorkFactor;
  std::shared_ptr<const SshKeyFile> ssh;  // ssh_*: the key file (OpenSSH or PEM), maybe encrypted
  // ssh_*: asks for an encrypted key file's passphrase, called only when a
  // stanza names the key (its public key is in clear); unset, such a key
  // opens nothing.
  std::function<wc_status(std::vector<uint8_t> *passphrase)> ask_ssh_passphrase;
  std::string plugin;             // plugin: its name, lower case
  std::string encoding;           // plugin: the identity as written
  wc_age_plugin_ui plugin_ui{};   // plugin: how it talks to the user
  ~Identity();
};

// ---- the file key in a stanza ------------------------------------------------

// ChaCha20-Poly1305 of the file key under a stanza's wrapping key with the
// all-zero nonce, as X25519, scrypt and ssh-ed25519 stanzas wrap it (each
// wrapping key is used once; the HPKE stanzas wrap it in HostCrypto's HPKE,
// ssh-rsa with RSA-OAEP). Opening is WC_ERR_AUTH where `key` is not the
// one; `body` is kFileKeyLen plus the tag.
inline constexpr size_t kWrappedKeyLen = kFileKeyLen + engine::kStreamTagLen;
wc_status seal_file_key(const HostCrypto &crypto, std::span<const uint8_t, 32> key, const FileKey &file_key,
                        std::array<uint8_t, kWrappedKeyLen> *wrapped);
wc_status open_file_key(const HostCrypto &crypto, std::span<const uint8_t, 32> key, std::span<const uint8_t> body,
                        FileKey *file_key);
// A native type's stanza (X25519, scrypt, ssh-ed25519): `type`, `args`,
// and as its body the file key sealed under `key` with the zero nonce.
wc_status seal_stanza(const HostCrypto &crypto, std::span<const uint8_t, 32> key, const FileKey &file_key,
                      std::string_view type, std::vector<std::string> args, Stanza *stanza);

// *detail = why, and `status`: how a type says what it refuses.
wc_status fail(wc_status status, const char **detail, const char *why);

// ---- a type's entry ------------------------------------------------------------

// What one type does. An operation the type cannot do has no function, and
// instead the sentence that refuses it (WC_ERR_UNSUPPORTED), naming the
// type; no other code decides by type. A field an entry leaves out is null, empty or false.
struct KeyTypeEntry {
  KeyType type = KeyType::x25519;
  const char *name = nullptr;  // as the C API names it (wc_age_identity_type)
  // Which texts are this type's keys, by their lead (key_lead in
  // age_keys.cpp: a Bech32 key's human-readable part, an SSH line's key
  // type, an OpenSSH file's "-----BEGIN"): the lead itself, or, ending in
  // '*', the start of the leads that go on with a name. Empty: no text is
  // this type's. Types that share a prefix share its parse, which tells
  // them apart.
  std::string_view recipient_prefix{};
  std::string_view identity_prefix{};
  wc_status (*parse_recipient)(std::string_view text, Recipient *recipient, const char **detail) = nullptr;
  wc_status (*parse_identity)(std::string_view text, Identity *identity, const char **detail) = nullptr;

  // An identity's own text: an age secret key, which generate_identity
  // draws at random for the types that write one.
  wc_status (*format_identity)(const Identity &identity, std::string *text) = nullptr;
  const char *cannot_format_identity = nullptr;
  // The recipient an identity opens files for.
  wc_status (*recipient_of)(const HostCrypto &crypto, const Identity &identity, Recipient *recipient) = nullptr;
  const char *cannot_derive_recipient = nullptr;
  wc_status (*format_recipient)(const Recipient &recipient, std::string *text) = nullptr;
  const char *cannot_format_recipient = nullptr;

  // The stanzas that give every one of `recipients`, all of this type, the
  // file key, appended to *stanzas.
  wc_status (*wrap)(const HostCrypto &crypto, std::span<const Recipient *const> recipients, const FileKey &file_key,
                    std::vector<Stanza> *stanzas, const char **detail) = nullptr;
  // The file key from the first of the header's stanzas that one of
  // `identities`, all of this type, opens; the header's MAC is the
  // caller's to check.
  // WC_ERR_NO_IDENTITY where none opens, with *detail set only where a
  // stanza of its own stayed shut for a reason the user should hear (an SSH
  // key with no way to its passphrase); WC_ERR_FORMAT (and *detail) for a
  // malformed stanza of this type; any other failure ends the search.
  wc_status (*unwrap)(const HostCrypto &crypto, std::span<const Identity *const> identities,
                      const Header &header, FileKey *file_key, const char **detail) = nullptr;

  // The stanza type this type writes and opens; empty where opening it is
  // another program's (a plugin's, a tagged recipient's).
  std::string_view stanza{};
  // A passphrase, not a key: its stanza must be its file's only one.
  bool passphrase = false;
  // Safe from a quantum computer, so never beside a type that is not in one
  // file (age 1.3's rule).
  bool postquantum = false;
};

// Appends a stanza for each of `recipients`, for the types that wrap one
// recipient at a time: `wrap_one(recipient, stanza)`.
template <typename WrapOne>
wc_status wrap_each(std::span<const Recipient *const> recipients, std::vector<Stanza> *stanzas, WrapOne wrap_one) {
  for (const Recipient *recipient : recipients) {
    if (const wc_status status = wrap_one(*recipient, &stanzas->emplace_back()); status != WC_OK) return status;
  }
  return WC_OK;
}

// The file key from the first stanza one of `identities` opens, for the
// types whose identities open one stanza at a time: `open(identity,
// stanza)` answers as KeyTypeEntry::unwrap does for one of each.
template <typename Open>
wc_status open_first(std::span<const Identity *const> identities, const Header &header, const char **detail,
                     Open open) {
  const char *own_stanza_unopened = nullptr;
  for (const Identity *identity : identities) {
    for (const Stanza &stanza : header.stanzas) {
      const char *why = nullptr;
      const wc_status status = open(*identity, stanza, &why);
      if (status == WC_ERR_NO_IDENTITY && why != nullptr) own_stanza_unopened = why;
      if (status == WC_ERR_NO_IDENTITY) continue;
      if (why != nullptr) *detail = why;
      return status;
    }
  }
  if (own_stanza_unopened != nullptr) *detail = own_stanza_unopened;
  return WC_ERR_NO_IDENTITY;
}

}  // namespace warpcrypt::age
