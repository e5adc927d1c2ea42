#include "age/age_keys.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <memory>

#include "age/age_pq.h"
#include "age/age_ssh.h"
#include "age/age_plugin.h"
#include "age/age_plugin_process.h"
#include "core/aead_registry.h"
#include "core/backend_tables.h"
#include "core/secret_bytes.h"

namespace warpcrypt::age {
namespace {

constexpr char kBech32Charset[] = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";
constexpr std::string_view kRecipientHrp = "age";
constexpr std::string_view kIdentityHrp = "AGE-SECRET-KEY-";
constexpr std::string_view kPluginIdentityPrefix = "AGE-PLUGIN-";
constexpr std::string_view kX25519Label = "age-encryption.org/v1/X25519";
constexpr std::string_view kScryptLabel = "age-encryption.org/v1/scrypt";
constexpr size_t kScryptSaltLen = 16;

uint32_t bech32_polymod(const std::vector<uint8_t> &values) {
  constexpr uint32_t kGenerator[] = {0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3};
  uint32_t checksum = 1;
  for (uint8_t value : values) {
    const uint32_t top = checksum >> 25;
    checksum = (checksum & 0x1ffffff) << 5 ^ value;
    for (int i = 0; i < 5; ++i) {
      if ((top >> i) & 1) checksum ^= kGenerator[i];
    }
  }
  return checksum;
}

// The checksum covers the lower-case hrp, expanded, then the data.
std::vector<uint8_t> checksum_input(std::string_view hrp, std::span<const uint8_t> values) {
  std::vector<uint8_t> out;
  for (char c : hrp) out.push_back(static_cast<uint8_t>(std::tolower(static_cast<unsigned char>(c)) >> 5));
  out.push_back(0);
  for (char c : hrp) out.push_back(static_cast<uint8_t>(std::tolower(static_cast<unsigned char>(c)) & 31));
  out.insert(out.end(), values.begin(), values.end());
  return out;
}

// Regroups bits: 8 to 5 pads the last group with zeros; 5 to 8 refuses
// leftover bits that are not zero padding.
std::optional<std::vector<uint8_t>> regroup(std::span<const uint8_t> in, unsigned from, unsigned to, bool pad) {
  std::vector<uint8_t> out;
  uint32_t bits = 0;
  unsigned held = 0;
  for (uint8_t value : in) {
    bits = bits << from | value;
    held += from;
    while (held >= to) {
      held -= to;
      out.push_back(static_cast<uint8_t>((bits >> held) & ((1u << to) - 1)));
    }
    bits &= (1u << held) - 1;
  }
  if (pad && held > 0) out.push_back(static_cast<uint8_t>(bits << (to - held)));
  if (!pad && (held >= from || bits != 0)) return std::nullopt;
  return out;
}

bool all_upper(std::string_view s) {
  return std::none_of(s.begin(), s.end(), [](char c) { return std::islower(static_cast<unsigned char>(c)); });
}
bool all_lower(std::string_view s) {
  return std::none_of(s.begin(), s.end(), [](char c) { return std::isupper(static_cast<unsigned char>(c)); });
}

}  // namespace

// Outside the anonymous namespace: the hybrid stanza (age_pq.cpp), with
// HPKE's base nonce, and ssh-ed25519's (age_ssh.cpp) seal and open through
// these too.
wc_status seal_file_key(std::span<const uint8_t, 32> key, std::span<const uint8_t, 12> nonce, const FileKey &file_key,
                        std::array<uint8_t, kWrappedKeyLen> *wrapped) {
  const auto cipher = kCpuBackend.make_aead(*find_aead("chacha20-poly1305"), key, 1);
  if (!cipher) return WC_ERR_CRYPTO_LIBRARY;
  const wc_aead_message message = {wrapped->data(), file_key.bytes.data(), kFileKeyLen, nonce.data(), nonce.size(),
                                   nullptr,          0,                     wrapped->data() + kFileKeyLen};
  return cipher->seal({&message, 1}, engine::kStreamTagLen);
}

wc_status open_file_key(std::span<const uint8_t, 32> key, std::span<const uint8_t, 12> nonce,
                        std::span<const uint8_t> body, FileKey *file_key) {
  const auto cipher = kCpuBackend.make_aead(*find_aead("chacha20-poly1305"), key, 1);
  if (!cipher) return WC_ERR_CRYPTO_LIBRARY;
  std::array<uint8_t, engine::kStreamTagLen> tag{};
  std::copy_n(body.begin() + kFileKeyLen, tag.size(), tag.begin());
  const wc_aead_message message = {file_key->bytes.data(), body.data(), kFileKeyLen, nonce.data(), nonce.size(),
                                   nullptr,                0,           tag.data()};
  wc_status result = WC_OK;
  const wc_status status = cipher->open({&message, 1}, engine::kStreamTagLen, &result);
  return status != WC_OK ? status : result;
}

namespace {

wc_status x25519_wrap_key(const HostCrypto &crypto, std::span<const uint8_t, 32> shared,
                          std::span<const uint8_t, 32> ephemeral_share, std::span<const uint8_t, 32> recipient,
                          DerivedKey *key) {
  std::array<uint8_t, 64> salt{};
  std::copy(ephemeral_share.begin(), ephemeral_share.end(), salt.begin());
  std::copy(recipient.begin(), recipient.end(), salt.begin() + 32);
  return crypto.hkdf(key->bytes, "sha256", shared, salt, bytes_of(kX25519Label));
}

// scrypt's wrap key; where its memory cannot be allocated, encrypting and
// decrypting alike say so.
wc_status scrypt_wrap_key(const HostCrypto &crypto, std::span<const uint8_t> passphrase, std::span<const uint8_t> salt,
                          unsigned work_factor, DerivedKey *key, const char **detail) {
  std::vector<uint8_t> labelled(kScryptLabel.begin(), kScryptLabel.end());
  labelled.insert(labelled.end(), salt.begin(), salt.end());
  const wc_status status = crypto.scrypt(key->bytes, passphrase, labelled, work_factor);
  if (status == WC_ERR_OUT_OF_MEMORY) {
    *detail = "scrypt cannot allocate the memory its work factor needs (1 KiB times 2 to the work factor)";
  }
  return status;
}

// One identity against one stanza: WC_OK with the file key;
// WC_ERR_NO_IDENTITY when the stanza is not this identity's (another type,
// or a key that does not open it), with *detail set only where the stanza
// is its own and it still cannot open it; WC_ERR_FORMAT for a malformed
// stanza of the identity's type. `own_public` is an X25519 identity's
// public key, computed once for all the stanzas it tries.
wc_status try_unwrap(const HostCrypto &crypto, const Identity &identity, std::span<const uint8_t, 32> own_public,
                     const Stanza &stanza, FileKey *file_key, const char **detail) {
  auto bad = [detail](const char *why) {
    *detail = why;
    return WC_ERR_FORMAT;
  };
  if (identity.type == KeyType::hybrid) return hybrid_unwrap(crypto, identity.secret_key, stanza, file_key, detail);
  if (identity.type == KeyType::ssh) return unwrap_ssh(crypto, identity, stanza, file_key, detail);
  if (identity.type == KeyType::x25519) {
    if (stanza.type != "X25519") return WC_ERR_NO_IDENTITY;
    if (stanza.args.size() != 1) return bad("malformed X25519 stanza: it takes exactly one argument");
    const auto share = decode_base64(stanza.args[0]);
    if (!share || share->size() != 32) {
      return bad("malformed X25519 stanza: the ephemeral share is not 32 bytes of canonical base64");
    }
    if (stanza.body.size() != kWrappedKeyLen) return bad("malformed X25519 stanza: the body is not 32 bytes");
    std::array<uint8_t, 32> shared{};
    if (crypto.x25519(shared, identity.secret_key, *share) != WC_OK) {
      return bad("malformed X25519 stanza: the ephemeral share is a low-order point (all-zero shared secret)");
    }
    DerivedKey key;
    wc_status status =
        x25519_wrap_key(crypto, shared, std::span<const uint8_t, 32>(share->data(), 32), own_public, &key);
    secure_wipe(shared.data(), shared.size());
    if (status != WC_OK) return status;
    status = open_file_key(key.bytes, kZeroNonce, stanza.body, file_key);
    return status == WC_ERR_AUTH ? WC_ERR_NO_IDENTITY : status;
  }
  if (stanza.type != "scrypt") return WC_ERR_NO_IDENTITY;
  if (stanza.args.size() != 2) return bad("malformed scrypt stanza: it takes a salt and a work factor");
  const auto salt = decode_base64(stanza.args[0]);
  if (!salt || salt->size() != kScryptSaltLen) {
    return bad("malformed scrypt stanza: the salt is not 16 bytes of canonical base64");
  }
  const std::string &factor = stanza.args[1];
  // A decimal without leading zeros; two digits are enough for any factor.
  if (factor.size() > 2 || factor[0] == '0' ||
      !std::all_of(factor.begin(), factor.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return bad("malformed scrypt stanza: the work factor is not a decimal number from 1 to 99 without leading zeros");
  }
  const unsigned work_factor = static_cast<unsigned>(std::stoul(factor));
  if (work_factor > identity.max_work_factor) {
    return bad("the scrypt work factor is above this reader's limit (raise it only for a file you expect)");
  }
  if (stanza.body.size() != kWrappedKeyLen) return bad("malformed scrypt stanza: the body is not 32 bytes");
  DerivedKey key;
  wc_status status = scrypt_wrap_key(crypto, identity.passphrase, *salt, work_factor, &key, detail);
  if (status != WC_OK) return status;
  status = open_file_key(key.bytes, kZeroNonce, stanza.body, file_key);
  return status == WC_ERR_AUTH ? WC_ERR_NO_IDENTITY : status;
}

// Why text that looks like an identity is none, for the message; nullptr
// otherwise.
const char *unsupported_identity(std::string_view text) {
  if (is_ssh_public_key_line(text)) return "an SSH public key is a recipient; decrypt with its private key file";
  return nullptr;
}

wc_status bad_plugin_name(const char **detail) {
  *detail = "not an age plugin key: its plugin name must be Bech32 of letters, digits and +-._ (no '/' or '..')";
  return WC_ERR_FORMAT;
}

// Calls `each` with every line of a key file that is neither empty nor a
// comment; stops at the first failure.
template <typename Each>
wc_status for_each_key_line(std::string_view text, Each each) {
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (line.empty() || line.starts_with('#')) continue;
    const wc_status status = each(line);
    if (status != WC_OK) return status;
  }
  return WC_OK;
}

}  // namespace

std::string encode_bech32(std::string_view hrp, std::span<const uint8_t> data) {
  const std::vector<uint8_t> values = *regroup(data, 8, 5, true);
  std::vector<uint8_t> input = checksum_input(hrp, values);
  input.insert(input.end(), 6, 0);
  const uint32_t checksum = bech32_polymod(input) ^ 1;
  const bool upper = !hrp.empty() && !all_lower(hrp);
  std::string out(hrp);
  out += '1';
  for (uint8_t value : values) out += kBech32Charset[value];
  for (int i = 0; i < 6; ++i) out += kBech32Charset[(checksum >> (5 * (5 - i))) & 31];
  if (upper) std::transform(out.begin(), out.end(), out.begin(), [](char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); });
  return out;
}

std::optional<Bech32> decode_bech32(std::string_view text) {
  if (!all_lower(text) && !all_upper(text)) return std::nullopt;
  const size_t separator = text.rfind('1');
  if (separator == std::string_view::npos || separator == 0 || separator + 7 > text.size()) return std::nullopt;
  const std::string_view hrp = text.substr(0, separator);
  if (!std::all_of(hrp.begin(), hrp.end(), [](char c) { return c >= 33 && c <= 126; })) return std::nullopt;
  std::vector<uint8_t> values;
  for (char c : text.substr(separator + 1)) {
    const char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const char *at = std::strchr(kBech32Charset, lower);
    if (at == nullptr || lower == '\0') return std::nullopt;
    values.push_back(static_cast<uint8_t>(at - kBech32Charset));
  }
  if (bech32_polymod(checksum_input(hrp, values)) != 1) return std::nullopt;
  values.resize(values.size() - 6);
  auto data = regroup(values, 5, 8, false);
  if (!data) return std::nullopt;
  return Bech32{std::string(hrp), std::move(*data)};
}

Recipient::~Recipient() { secure_wipe(passphrase.data(), passphrase.size()); }
Identity::~Identity() {
  secure_wipe(encoding.data(), encoding.size());
  secure_wipe(secret_key.data(), secret_key.size());
  secure_wipe(passphrase.data(), passphrase.size());
}

wc_status generate_identity(const HostCrypto &crypto, Identity *identity, KeyType type) {
  if (type != KeyType::x25519 && type != KeyType::hybrid) return WC_ERR_INVALID_ARGUMENT;
  identity->type = type;
  return crypto.random->fill(identity->secret_key);
}

wc_status parse_recipient(std::string_view text, Recipient *recipient, const char **detail) {
  if (is_ssh_public_key_line(text)) return parse_ssh_recipient(text, recipient, detail);
  const auto decoded = decode_bech32(text);
  if (decoded && decoded->hrp == kHybridRecipientHrp) {
    if (decoded->data.size() != kHybridPublicKeyLen) {
      *detail = "not an age1pq1 recipient: its key is not 1216 bytes (ML-KEM-768 and X25519)";
      return WC_ERR_FORMAT;
    }
    recipient->type = KeyType::hybrid;
    recipient->hybrid_public_key = decoded->data;
    return WC_OK;
  }
  // Any other "age1NAME" prefix is a plugin's (age1pq is native, above).
  if (decoded && decoded->hrp.starts_with("age1")) {
    auto name = plugin_name_of_recipient(text);
    if (!name) return bad_plugin_name(detail);
    recipient->type = KeyType::plugin;
    recipient->plugin = std::move(*name);
    recipient->encoding = text;
    return WC_OK;
  }
  if (!decoded || decoded->hrp != kRecipientHrp || decoded->data.size() != 32) {
    *detail = "not an age recipient: expected age1 and 58 Bech32 characters";
    return WC_ERR_FORMAT;
  }
  recipient->type = KeyType::x25519;
  std::copy(decoded->data.begin(), decoded->data.end(), recipient->public_key.begin());
  return WC_OK;
}

wc_status parse_identity(std::string_view text, Identity *identity, const char **detail) {
  if (const char *why = unsupported_identity(text)) {
    *detail = why;
    return WC_ERR_UNSUPPORTED;
  }
  if (text.starts_with(kPluginIdentityPrefix)) {
    auto name = plugin_name_of_identity(text);
    if (!name) return bad_plugin_name(detail);
    identity->type = KeyType::plugin;
    identity->plugin = std::move(*name);
    identity->encoding = text;
    return WC_OK;
  }
  auto decoded = decode_bech32(text);
  const bool hybrid = decoded && decoded->hrp == kHybridIdentityHrp;
  const bool valid = decoded && (hybrid || decoded->hrp == kIdentityHrp) && decoded->data.size() == 32;
  if (valid) {
    identity->type = hybrid ? KeyType::hybrid : KeyType::x25519;
    std::copy(decoded->data.begin(), decoded->data.end(), identity->secret_key.begin());
  }
  if (decoded) secure_wipe(decoded->data.data(), decoded->data.size());
  if (!valid) {
    *detail = hybrid ? "not an age identity: an AGE-SECRET-KEY-PQ-1 key holds 32 bytes"
                     : "not an age identity: expected AGE-SECRET-KEY-1 and 58 Bech32 characters";
    return WC_ERR_FORMAT;
  }
  return WC_OK;
}

wc_status parse_recipients_file(std::string_view text, std::vector<Recipient> *recipients, const char **detail) {
  const wc_status status = for_each_key_line(text, [&](std::string_view line) {
    return parse_recipient(line, &recipients->emplace_back(), detail);
  });
  if (status == WC_OK && recipients->empty()) {
    *detail = "the recipients file holds no recipient";
    return WC_ERR_FORMAT;
  }
  return status;
}

wc_status parse_identities_file(std::string_view text, std::vector<Identity> *identities, const char **detail) {
  if (text.starts_with("-----BEGIN")) return parse_ssh_identity(text, &identities->emplace_back(), detail);
  if (const char *why = unsupported_identity(text)) {
    *detail = why;
    return WC_ERR_UNSUPPORTED;
  }
  const wc_status status = for_each_key_line(text, [&](std::string_view line) {
    return parse_identity(line, &identities->emplace_back(), detail);
  });
  if (status == WC_OK && identities->empty()) {
    *detail = "the identity file holds no identity";
    return WC_ERR_FORMAT;
  }
  return status;
}

namespace {

// ---- the key types' table ----------------------------------------------------
//
// What each type does with text. An operation a type cannot do has no
// function, and the sentence that refuses it, naming the type, instead.

wc_status write_x25519_identity(const Identity &identity, std::string *text) {
  *text = encode_bech32(kIdentityHrp, identity.secret_key);
  return WC_OK;
}

wc_status write_hybrid_identity(const Identity &identity, std::string *text) {
  *text = encode_bech32(kHybridIdentityHrp, identity.secret_key);
  return WC_OK;
}

wc_status derive_x25519_recipient(const HostCrypto &crypto, const Identity &identity, Recipient *recipient) {
  recipient->type = KeyType::x25519;
  return crypto.x25519(recipient->public_key, identity.secret_key, {});
}

wc_status derive_hybrid_recipient(const HostCrypto &crypto, const Identity &identity, Recipient *recipient) {
  recipient->type = KeyType::hybrid;
  recipient->hybrid_public_key.resize(kHybridPublicKeyLen);
  return hybrid_public_key(crypto, identity.secret_key,
                           std::span<uint8_t, kHybridPublicKeyLen>(recipient->hybrid_public_key));
}

// The key file's public key, which is in clear whether or not its private
// part is encrypted.
wc_status derive_ssh_recipient(const HostCrypto &, const Identity &identity, Recipient *recipient) {
  recipient->type = KeyType::ssh;
  recipient->ssh = identity.ssh->public_key;
  return WC_OK;
}

struct IdentityType {
  const char *name;
  wc_status (*write)(const Identity &identity, std::string *text);
  const char *cannot_write;
  wc_status (*derive_recipient)(const HostCrypto &crypto, const Identity &identity, Recipient *recipient);
  const char *cannot_derive_recipient;
};

constexpr IdentityType kX25519Identity = {"x25519", write_x25519_identity, nullptr, derive_x25519_recipient,
                                          nullptr};
constexpr IdentityType kHybridIdentity = {"hybrid", write_hybrid_identity, nullptr, derive_hybrid_recipient,
                                          nullptr};
constexpr IdentityType kSshEd25519Identity = {
    "ssh-ed25519", nullptr,
    "an ssh-ed25519 identity has no age secret key: its secret is the OpenSSH private key file",
    derive_ssh_recipient, nullptr};
constexpr IdentityType kSshRsaIdentity = {
    "ssh-rsa", nullptr, "an ssh-rsa identity has no age secret key: its secret is the OpenSSH private key file",
    derive_ssh_recipient, nullptr};
constexpr IdentityType kPluginIdentity = {
    "plugin", nullptr, "a plugin identity has no age secret key: its AGE-PLUGIN-... text is its plugin's", nullptr,
    "a plugin identity's recipient is its plugin's to derive, and no plugin is run for that: use the recipient "
    "the plugin gave with the identity"};
constexpr IdentityType kPassphraseIdentity = {
    "passphrase", nullptr, "a passphrase identity has no age secret key", nullptr,
    "a passphrase identity has no recipient: encrypt with the passphrase itself"};

const IdentityType &identity_type(const Identity &identity) {
  switch (identity.type) {
    case KeyType::x25519: return kX25519Identity;
    case KeyType::hybrid: return kHybridIdentity;
    case KeyType::ssh:
      return identity.ssh->public_key.type == SshKeyType::ed25519 ? kSshEd25519Identity : kSshRsaIdentity;
    case KeyType::plugin: return kPluginIdentity;
    case KeyType::scrypt: return kPassphraseIdentity;
  }
  // KeyType is a closed set, and -Wswitch names a case left out above; any
  // other value is corrupted memory, which no key may be made from.
  std::abort();
}

wc_status write_x25519_recipient(const Recipient &recipient, std::string *text) {
  *text = encode_bech32(kRecipientHrp, recipient.public_key);
  return WC_OK;
}

wc_status write_hybrid_recipient(const Recipient &recipient, std::string *text) {
  *text = encode_bech32(kHybridRecipientHrp, recipient.hybrid_public_key);
  return WC_OK;
}

wc_status write_ssh_recipient(const Recipient &recipient, std::string *text) {
  *text = format_ssh_public_key(recipient.ssh);
  return WC_OK;
}

wc_status write_plugin_recipient(const Recipient &recipient, std::string *text) {
  *text = recipient.encoding;
  return WC_OK;
}

struct RecipientType {
  wc_status (*write)(const Recipient &recipient, std::string *text);
  const char *cannot_write;
};

constexpr RecipientType kX25519Recipient = {write_x25519_recipient, nullptr};
constexpr RecipientType kHybridRecipient = {write_hybrid_recipient, nullptr};
constexpr RecipientType kSshRecipient = {write_ssh_recipient, nullptr};
constexpr RecipientType kPluginRecipient = {write_plugin_recipient, nullptr};
constexpr RecipientType kPassphraseRecipient = {nullptr, "a passphrase recipient has no key to write"};

const RecipientType &recipient_type(const Recipient &recipient) {
  switch (recipient.type) {
    case KeyType::x25519: return kX25519Recipient;
    case KeyType::hybrid: return kHybridRecipient;
    case KeyType::ssh: return kSshRecipient;
    case KeyType::plugin: return kPluginRecipient;
    case KeyType::scrypt: return kPassphraseRecipient;
  }
  std::abort();  // as in identity_type
}

wc_status refuse(const char *why, const char **detail) {
  *detail = why;
  return WC_ERR_UNSUPPORTED;
}

// WC_AGE_KEY_MAX_LEN holds every key these write: the longest are an
// ssh-rsa line of 16384 bits and an age1pq1 recipient.
constexpr size_t bech32_len(size_t hrp_len, size_t data_len) { return hrp_len + 1 + (data_len * 8 + 4) / 5 + 6; }
constexpr size_t padded_base64_len(size_t len) { return (len + 2) / 3 * 4; }
// Each mpint may take a zero byte in front of its high bit.
constexpr size_t kLongestRsaBlob = 4 + kSshRsa.size() + 4 + 1 + kMaxRsaExponentBytes + 4 + 1 + kMaxRsaModulusBytes;
static_assert(kSshRsa.size() + 1 + padded_base64_len(kLongestRsaBlob) < WC_AGE_KEY_MAX_LEN);
static_assert(bech32_len(kHybridRecipientHrp.size(), kHybridPublicKeyLen) < WC_AGE_KEY_MAX_LEN);

}  // namespace

const char *type_name(const Identity &identity) { return identity_type(identity).name; }

wc_status format_identity(const Identity &identity, std::string *text, const char **detail) {
  const IdentityType &type = identity_type(identity);
  return type.write != nullptr ? type.write(identity, text) : refuse(type.cannot_write, detail);
}

wc_status recipient_of(const HostCrypto &crypto, const Identity &identity, Recipient *recipient,
                       const char **detail) {
  const IdentityType &type = identity_type(identity);
  return type.derive_recipient != nullptr ? type.derive_recipient(crypto, identity, recipient)
                                          : refuse(type.cannot_derive_recipient, detail);
}

wc_status format_recipient(const Recipient &recipient, std::string *text, const char **detail) {
  const RecipientType &type = recipient_type(recipient);
  return type.write != nullptr ? type.write(recipient, text) : refuse(type.cannot_write, detail);
}

wc_status wrap(const HostCrypto &crypto, const Recipient &recipient, const FileKey &file_key, Stanza *stanza,
               const char **detail) {
  if (recipient.type == KeyType::ssh) return wrap_ssh(crypto, recipient, file_key, stanza, detail);
  if (recipient.type == KeyType::plugin) return WC_ERR_INVALID_ARGUMENT;
  std::array<uint8_t, kWrappedKeyLen> wrapped{};
  DerivedKey key;
  wc_status status = WC_OK;
  if (recipient.type == KeyType::hybrid) {
    return hybrid_wrap(crypto, recipient.hybrid_public_key, file_key, stanza, detail);
  }
  if (recipient.type == KeyType::x25519) {
    std::array<uint8_t, 32> ephemeral{};
    std::array<uint8_t, 32> share{};
    std::array<uint8_t, 32> shared{};
    status = crypto.random->fill(ephemeral);
    if (status == WC_OK) status = crypto.x25519(share, ephemeral, {});
    // With the share computed, the shared secret fails only where the
    // recipient is a point of small order (libsodium refuses those).
    if (status == WC_OK && crypto.x25519(shared, ephemeral, recipient.public_key) != WC_OK) {
      *detail = "an X25519 recipient is a low-order point, which no identity can open (age refuses it too)";
      status = WC_ERR_INVALID_ARGUMENT;
    }
    if (status == WC_OK) status = x25519_wrap_key(crypto, shared, share, recipient.public_key, &key);
    secure_wipe(ephemeral.data(), ephemeral.size());
    secure_wipe(shared.data(), shared.size());
    stanza->type = "X25519";
    stanza->args = {encode_base64(share)};
  } else {
    if (recipient.work_factor < 1 || recipient.work_factor > kMaxWorkFactor) return WC_ERR_INVALID_ARGUMENT;
    std::array<uint8_t, kScryptSaltLen> salt{};
    status = crypto.random->fill(salt);
    if (status == WC_OK) {
      status = scrypt_wrap_key(crypto, recipient.passphrase, salt, recipient.work_factor, &key, detail);
    }
    stanza->type = "scrypt";
    stanza->args = {encode_base64(salt), std::to_string(recipient.work_factor)};
  }
  if (status == WC_OK) status = seal_file_key(key.bytes, kZeroNonce, file_key, &wrapped);
  if (status != WC_OK) return status;
  stanza->body.assign(wrapped.begin(), wrapped.end());
  return WC_OK;
}

wc_status wrap_all(const HostCrypto &crypto, std::span<const Recipient> recipients, const FileKey &file_key,
                   std::vector<Stanza> *stanzas, const char **detail) {
  for (const Recipient &recipient : recipients) {
    if (recipient.type == KeyType::plugin) continue;
    if (const wc_status status = wrap(crypto, recipient, file_key, &stanzas->emplace_back(), detail);
        status != WC_OK) {
      return status;
    }
  }
  return wrap_with_plugins(recipients, file_key, stanzas, detail);
}

wc_status unwrap_file_key(const HostCrypto &crypto, const Header &header, std::span<const Identity> identities,
                          FileKey *file_key, const char **detail) {
  const auto is_scrypt = [](const Stanza &stanza) { return stanza.type == "scrypt"; };
  const bool passphrase_file = std::any_of(header.stanzas.begin(), header.stanzas.end(), is_scrypt);
  if (passphrase_file && header.stanzas.size() != 1) {
    *detail = "an age header with an scrypt stanza must hold no other stanza";
    return WC_ERR_FORMAT;
  }
  // Why a stanza that an identity knows for its own stayed shut (an SSH
  // key with no way to its passphrase), said if no other identity opens
  // the file.
  const char *own_stanza_unopened = nullptr;
  for (const Identity &identity : identities) {
    if (identity.type == KeyType::plugin) continue;
    std::array<uint8_t, 32> own_public{};
    if (identity.type == KeyType::x25519) {
      if (const wc_status status = crypto.x25519(own_public, identity.secret_key, {}); status != WC_OK) {
        return status;
      }
    }
    for (const Stanza &stanza : header.stanzas) {
      const char *why = nullptr;
      const wc_status status = try_unwrap(crypto, identity, own_public, stanza, file_key, &why);
      if (status == WC_OK) return check_mac(crypto, header, *file_key, detail);
      if (status != WC_ERR_NO_IDENTITY) {
        if (why != nullptr) *detail = why;
        return status;
      }
      if (why != nullptr) own_stanza_unopened = why;
    }
  }
  // Plugins last: each is a program to run, and may ask the user.
  if (const wc_status status = unwrap_with_plugins(identities, header, file_key, detail); status == WC_OK) {
    return check_mac(crypto, header, *file_key, detail);
  } else if (status != WC_ERR_NO_IDENTITY) {
    return status;
  }
  if (own_stanza_unopened != nullptr) {
    *detail = own_stanza_unopened;
    return WC_ERR_NO_IDENTITY;
  }
  const bool passphrase_given = std::any_of(identities.begin(), identities.end(),
                                            [](const Identity &identity) { return identity.type == KeyType::scrypt; });
  if (passphrase_file) {
    *detail = passphrase_given ? "incorrect passphrase" : "the file is encrypted with a passphrase, not to a key";
  } else if (passphrase_given) {
    *detail = "the file is encrypted to keys, not with a passphrase";
  } else {
    const bool all_run_here = std::all_of(header.stanzas.begin(), header.stanzas.end(), [](const Stanza &stanza) {
      return stanza.type == "X25519" || stanza.type == kHybridStanzaType || stanza.type == kSshEd25519 ||
             stanza.type == kSshRsa;
    });
    *detail = all_run_here ? "no identity matched any of the file's recipients"
                           : "no identity matched a recipient (the file also has stanzas of other types, such as a "
                             "plugin's, that no identity given opens)";
  }
  return WC_ERR_NO_IDENTITY;
}

}  // namespace warpcrypt::age
