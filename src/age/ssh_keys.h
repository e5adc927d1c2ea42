// SSH keys as age uses them (agessh): public keys in the authorized_keys
// form ("ssh-ed25519 AAAA... comment"), and private keys in the forms Go's
// x/crypto/ssh reads for age: OpenSSH's own file format (openssh-key-v1,
// PROTOCOL.key), unencrypted or encrypted with bcrypt-pbkdf and AES, and
// PEM (RFC 7468): PKCS#1 RSA ("RSA PRIVATE KEY", as `ssh-keygen -m PEM`
// writes it), unencrypted or under OpenSSL's legacy encryption (RFC 1421's
// Proc-Type and DEK-Info headers), and unencrypted PKCS#8 ("PRIVATE KEY")
// of RSA or Ed25519. Only Ed25519 and RSA keys are age recipients; every
// other SSH key type, cipher, KDF and PEM form is refused by name.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/host_crypto.h"

namespace warpcrypt::age {

enum class SshKeyType { ed25519, rsa };

// age refuses RSA keys below 2048 bits, as agessh does.
// The two SSH key types age uses, each also the name of its stanza.
inline constexpr std::string_view kSshEd25519 = "ssh-ed25519";
inline constexpr std::string_view kSshRsa = "ssh-rsa";
inline constexpr size_t kMinRsaModulusBytes = 2048 / 8;
// An RSA modulus past 16384 bits is no key ssh-keygen makes, and would only
// buy an attacker slow arithmetic.
inline constexpr size_t kMaxRsaModulusBytes = 16384 / 8;
// age (through Go's x/crypto/ssh) refuses a public exponent past 24 bits,
// even, or below 3; so does this parser, which also keeps an ssh-rsa key's
// line short enough for WC_AGE_KEY_MAX_LEN.
inline constexpr size_t kMaxRsaExponentBytes = 3;
// The most bcrypt-pbkdf rounds a key file may ask for. The rounds are read
// before the passphrase can be checked, so a forged file could otherwise
// make a reader spend hours; ssh-keygen writes 16 by default and -a
// rarely goes past a few hundred (each round costs about 8 ms).
inline constexpr uint32_t kMaxBcryptRounds = 1024;
// age reads no more of a private key file than this (cmd/age's
// privateKeySizeLimit); it also bounds the DER a PEM key hands OpenSSL.
inline constexpr size_t kMaxPrivateKeyFileLen = 16 * 1024;

struct SshPublicKey {
  SshKeyType type = SshKeyType::ed25519;
  std::vector<uint8_t> wire;          // the key blob: what its tag and age's tweak hash
  std::array<uint8_t, 32> ed25519{};  // SshKeyType::ed25519
  RsaPublicKey rsa;                   // SshKeyType::rsa
};

// The secrets of one key; wiped on destruction.
struct SshPrivateKey {
  SshPublicKey public_key;
  std::array<uint8_t, 32> ed25519_seed{};  // SshKeyType::ed25519
  RsaPrivateKey rsa;                       // SshKeyType::rsa (its public_key repeats public_key.rsa)
  ~SshPrivateKey();
};

// An OpenSSH private key file, parsed as far as it can be without the
// passphrase: the public key is in clear, the private section maybe not
// (wiped on destruction, as an unencrypted one is the key itself).
struct OpensshKeyFile {
  SshPublicKey public_key;
  std::string cipher;  // "none", "aes256-ctr", ...
  std::vector<uint8_t> salt;
  uint32_t rounds = 0;
  std::vector<uint8_t> private_section;  // as stored: encrypted unless cipher is "none"
  bool encrypted() const { return cipher != "none"; }
  ~OpensshKeyFile();
};

// A cipher of OpenSSL's legacy PEM encryption (DEK-Info): the names of
// RFC 1423 that Go's x509 decrypts, and its key length.
struct PemCipher {
  std::string_view dek_info_name;
  const char *name;  // OpenSSL's
  size_t key_len;
  size_t block;
};

// A PEM private key file, parsed as far as it can be without the
// passphrase or HostCrypto: its type comes from its label (and a PKCS#8
// key's algorithm), its DER is read by HostCrypto only when the key is
// opened. An encrypted key holds no public key in clear: age reads it from
// KEY.pub, and here it is the line after the END line (the CLI appends
// KEY.pub). The DER is wiped on destruction.
struct PemKeyFile {
  SshKeyType type = SshKeyType::rsa;
  PrivateKeyDer syntax = PrivateKeyDer::pkcs1_rsa;
  const PemCipher *cipher = nullptr;   // null for an unencrypted key
  std::vector<uint8_t> iv;             // DEK-Info's
  std::vector<uint8_t> der;            // as stored: encrypted where cipher is set
  std::optional<SshPublicKey> public_key;  // the line after the key, where given
  ~PemKeyFile();
};

// A private key file of either form, as an SSH identity holds it.
struct SshKeyFile {
  std::variant<OpensshKeyFile, PemKeyFile> format;
  SshKeyType type() const;
  bool encrypted() const;
};

// Whether `text` begins as an SSH public key line does (ssh-..., ecdsa-sha2-...,
// sk-...), so that a key type age does not use is refused by name.
bool is_ssh_public_key_line(std::string_view text);
// Why an SSH key type age does not use (DSA, ECDSA, security keys,
// certificates) is no age key, for the message; nullptr for any other.
const char *unsupported_ssh_key_type(std::string_view type);

// One line of an authorized_keys file or an -r argument: the key type, its
// base64 blob, and an optional comment after a space. Options before the
// type are refused, as age refuses them. WC_ERR_UNSUPPORTED (and *detail)
// for an SSH key type age does not use; WC_ERR_FORMAT for anything else
// that is not a well-formed Ed25519 or RSA key.
wc_status parse_ssh_public_key(std::string_view line, SshPublicKey *key, const char **detail);

// The key as an authorized_keys line without a comment ("ssh-ed25519
// AAAA..."), which parse_ssh_public_key reads back as the same key.
std::string format_ssh_public_key(const SshPublicKey &key);

// The "-----BEGIN OPENSSH PRIVATE KEY-----" file. Errors as
// parse_ssh_public_key; a cipher or KDF this build does not run is
// WC_ERR_UNSUPPORTED, found before any passphrase is asked for.
wc_status parse_openssh_key_file(std::string_view text, OpensshKeyFile *file, const char **detail);

// The private key of a parsed file, decrypted with `passphrase` where the
// file is encrypted (ignored where not). A wrong passphrase is
// WC_ERR_AUTH (the check integers differ); a private section that breaks
// the format, or whose key is not the file's public key, WC_ERR_FORMAT.
wc_status open_openssh_key_file(const HostCrypto &crypto, const OpensshKeyFile &file,
                                std::span<const uint8_t> passphrase, SshPrivateKey *key, const char **detail);

// A PEM private key file: "-----BEGIN RSA PRIVATE KEY-----" (maybe with
// Proc-Type and DEK-Info headers) or "-----BEGIN PRIVATE KEY-----", then,
// for an encrypted key, its public key line. Errors as
// parse_openssh_key_file; the PEM forms age does not read (EC, DSA,
// encrypted PKCS#8, a cipher outside RFC 1423's) are WC_ERR_UNSUPPORTED.
wc_status parse_pem_key_file(std::string_view text, PemKeyFile *file, const char **detail);

// The key of a parsed PEM file, decrypted with `passphrase` where the file
// is encrypted: its DER read by HostCrypto, its public key built as an SSH
// key and held to age's rules, and to the public key line where one was
// given. A wrong passphrase is WC_ERR_AUTH.
wc_status open_pem_key_file(const HostCrypto &crypto, const PemKeyFile &file, std::span<const uint8_t> passphrase,
                            SshPrivateKey *key, const char **detail);

// Either form, told apart by the BEGIN line; any other PEM label is
// refused, by name where it is a key age does not use.
wc_status parse_ssh_key_file(std::string_view text, SshKeyFile *file, const char **detail);
wc_status open_ssh_key_file(const HostCrypto &crypto, const SshKeyFile &file, std::span<const uint8_t> passphrase,
                            SshPrivateKey *key, const char **detail);
// The file's public key without its passphrase: in clear in an OpenSSH
// file and beside an encrypted PEM key, read from an unencrypted PEM key's
// private key.
wc_status ssh_key_file_public_key(const HostCrypto &crypto, const SshKeyFile &file, SshPublicKey *key,
                                  const char **detail);

}  // namespace warpcrypt::age
