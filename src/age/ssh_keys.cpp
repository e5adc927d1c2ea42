#include "age/ssh_keys.h"

#include <algorithm>
#include <optional>

#include "age/age_format.h"
#include "core/secret_bytes.h"

namespace warpcrypt::age {
namespace {

constexpr std::string_view kPemBegin = "-----BEGIN OPENSSH PRIVATE KEY-----";
constexpr std::string_view kPemEnd = "-----END OPENSSH PRIVATE KEY-----";
constexpr std::string_view kAuthMagic{"openssh-key-v1\0", 15};

// Reads the SSH wire encoding (RFC 4251 section 5): big-endian uint32s and
// length-prefixed strings, every length checked against what is left.
class WireReader {
 public:
  explicit WireReader(std::span<const uint8_t> bytes) : rest_(bytes) {}

  std::optional<uint32_t> uint32() {
    if (rest_.size() < 4) return std::nullopt;
    const uint32_t value = uint32_t{rest_[0]} << 24 | uint32_t{rest_[1]} << 16 | uint32_t{rest_[2]} << 8 | rest_[3];
    rest_ = rest_.subspan(4);
    return value;
  }
  std::optional<std::span<const uint8_t>> string() {
    const auto len = uint32();
    if (!len || *len > rest_.size()) return std::nullopt;
    const auto value = rest_.first(*len);
    rest_ = rest_.subspan(*len);
    return value;
  }
  // An mpint that must be positive, in its minimal encoding: no leading
  // zero byte but the one that keeps a high bit from reading as a sign.
  std::optional<std::span<const uint8_t>> positive_mpint() {
    auto value = string();
    if (!value || value->empty() || ((*value)[0] & 0x80) != 0) return std::nullopt;
    if ((*value)[0] == 0) {
      if (value->size() == 1 || ((*value)[1] & 0x80) == 0) return std::nullopt;
      *value = value->subspan(1);
    }
    return value;
  }
  std::span<const uint8_t> rest() const { return rest_; }
  bool empty() const { return rest_.empty(); }

 private:
  std::span<const uint8_t> rest_;
};

std::string_view text_of(std::span<const uint8_t> bytes) {
  return {reinterpret_cast<const char *>(bytes.data()), bytes.size()};
}

wc_status fail(wc_status status, const char **detail, const char *why) {
  *detail = why;
  return status;
}

// Standard padded base64 (RFC 4648 section 4), canonical: the padding
// that makes whole groups of four, and no other.
std::optional<std::vector<uint8_t>> decode_padded_base64(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  for (int pad = 0; pad < 2 && text.ends_with('='); ++pad) text.remove_suffix(1);
  return decode_base64(text);
}

// The key in an SSH public key blob, which must be nothing but the key.
wc_status parse_key_blob(std::span<const uint8_t> blob, SshPublicKey *key, const char **detail) {
  WireReader reader(blob);
  const auto type = reader.string();
  if (!type) return fail(WC_ERR_FORMAT, detail, "malformed SSH public key: no key type in the blob");
  key->wire.assign(blob.begin(), blob.end());
  if (text_of(*type) == kSshEd25519) {
    const auto point = reader.string();
    if (!point || point->size() != 32 || !reader.empty()) {
      return fail(WC_ERR_FORMAT, detail, "malformed ssh-ed25519 public key: expected one 32-byte key");
    }
    key->type = SshKeyType::ed25519;
    std::copy(point->begin(), point->end(), key->ed25519.begin());
    return WC_OK;
  }
  if (text_of(*type) == kSshRsa) {
    const auto e = reader.positive_mpint();
    const auto n = reader.positive_mpint();
    if (!e || !n || !reader.empty()) {
      return fail(WC_ERR_FORMAT, detail, "malformed ssh-rsa public key: expected an exponent and a modulus");
    }
    if (n->size() < kMinRsaModulusBytes) {
      return fail(WC_ERR_FORMAT, detail, "the ssh-rsa key is shorter than 2048 bits, which age refuses");
    }
    if (n->size() > kMaxRsaModulusBytes) return fail(WC_ERR_FORMAT, detail, "the ssh-rsa key is over 16384 bits");
    // A minimal positive mpint: its last byte holds the parity, and one
    // byte below 3 is the only small value.
    if (e->size() > kMaxRsaExponentBytes || (e->back() & 1) == 0 || (e->size() == 1 && e->front() < 3)) {
      return fail(WC_ERR_FORMAT, detail,
                  "the ssh-rsa key's public exponent is not an odd number from 3 to 2^24 (age refuses it too)");
    }
    key->type = SshKeyType::rsa;
    key->rsa.n.assign(n->begin(), n->end());
    key->rsa.e.assign(e->begin(), e->end());
    return WC_OK;
  }
  if (const char *why = unsupported_ssh_key_type(text_of(*type))) return fail(WC_ERR_UNSUPPORTED, detail, why);
  return fail(WC_ERR_FORMAT, detail, "unknown SSH key type");
}

bool is_space(char c) { return c == ' ' || c == '\t'; }

// The PEM body of an OpenSSH key file, decoded: base64 lines between the
// two markers, with nothing but whitespace around them.
std::optional<std::vector<uint8_t>> decode_pem(std::string_view text) {
  const auto trim = [](std::string_view s) {
    while (!s.empty() && (is_space(s.front()) || s.front() == '\r' || s.front() == '\n')) s.remove_prefix(1);
    while (!s.empty() && (is_space(s.back()) || s.back() == '\r' || s.back() == '\n')) s.remove_suffix(1);
    return s;
  };
  text = trim(text);
  if (text.size() < kPemBegin.size() + kPemEnd.size() || !text.starts_with(kPemBegin) || !text.ends_with(kPemEnd)) {
    return std::nullopt;
  }
  text = text.substr(kPemBegin.size(), text.size() - kPemBegin.size() - kPemEnd.size());
  std::string joined;
  joined.reserve(text.size());
  for (char c : text) {
    if (c == '\r' || c == '\n') continue;
    joined.push_back(c);
  }
  auto decoded = decode_padded_base64(joined);
  secure_wipe(joined.data(), joined.size());
  return decoded;
}

// Wipes a buffer that held a key file's bytes when it goes out of scope.
class WipeOnExit {
 public:
  explicit WipeOnExit(std::vector<uint8_t> &bytes) : bytes_(bytes) {}
  ~WipeOnExit() { secure_wipe(bytes_.data(), bytes_.size()); }
  WipeOnExit(const WipeOnExit &) = delete;
  WipeOnExit &operator=(const WipeOnExit &) = delete;

 private:
  std::vector<uint8_t> &bytes_;
};

// A cipher OpenSSH encrypts key files with: its name to OpenSSL, and its
// key length.
struct KeyFileCipher {
  std::string_view ssh_name;
  const char *name;
  size_t key_len;
};
constexpr KeyFileCipher kKeyFileCiphers[] = {
    {"aes256-ctr", "aes-256-ctr", 32},
    {"aes128-ctr", "aes-128-ctr", 16},
    {"aes256-cbc", "aes-256-cbc", 32},
};
constexpr size_t kAesBlock = 16;

const KeyFileCipher *find_key_file_cipher(std::string_view ssh_name) {
  for (const KeyFileCipher &cipher : kKeyFileCiphers) {
    if (cipher.ssh_name == ssh_name) return &cipher;
  }
  return nullptr;
}

// The private section in clear: key and IV from bcrypt-pbkdf, then AES
// over the whole section (a whole number of blocks, checked first).
wc_status decrypt_section(const HostCrypto &crypto, const OpensshKeyFile &file, std::span<const uint8_t> passphrase,
                          std::vector<uint8_t> *plain, const char **detail) {
  const KeyFileCipher &cipher = *find_key_file_cipher(file.cipher);
  if (file.private_section.size() % kAesBlock != 0) {
    return fail(WC_ERR_FORMAT, detail, "malformed OpenSSH private key: the encrypted section is not whole AES blocks");
  }
  std::array<uint8_t, 32 + kAesBlock> key_iv{};
  const std::span<uint8_t> derived(key_iv.data(), cipher.key_len + kAesBlock);
  wc_status status = crypto.bcrypt_pbkdf(derived, passphrase, file.salt, file.rounds);
  plain->resize(file.private_section.size());
  if (status == WC_OK) {
    status = crypto.decrypt(*plain, cipher.name, derived.first(cipher.key_len), derived.last(kAesBlock),
                            file.private_section);
  }
  secure_wipe(key_iv.data(), key_iv.size());
  return status;
}

// The key inside a private section in clear: two equal check integers (a
// wrong passphrase makes them differ), the key, a comment, and padding
// 1, 2, 3, ... to the cipher's block.
wc_status parse_private_section(std::span<const uint8_t> section, size_t block, const SshPublicKey &public_key,
                                SshPrivateKey *key, const char **detail) {
  WireReader reader(section);
  const auto check1 = reader.uint32();
  const auto check2 = reader.uint32();
  if (!check1 || !check2) {
    return fail(WC_ERR_FORMAT, detail, "malformed OpenSSH private key: the private part is short");
  }
  if (*check1 != *check2) {
    return fail(WC_ERR_AUTH, detail,
                "incorrect passphrase for the OpenSSH private key, or a damaged key (its check integers differ)");
  }
  const auto type = reader.string();
  if (!type) return fail(WC_ERR_FORMAT, detail, "malformed OpenSSH private key: no key type in the private part");
  const auto mismatch = [detail] {
    return fail(WC_ERR_FORMAT, detail, "malformed OpenSSH private key: the private key is not the file's public key");
  };
  key->public_key = public_key;
  if (public_key.type == SshKeyType::ed25519) {
    const auto point = reader.string();
    const auto secret = reader.string();
    if (!point || !secret || point->size() != 32 || secret->size() != 64) {
      return fail(WC_ERR_FORMAT, detail, "malformed OpenSSH private key: bad ssh-ed25519 private part");
    }
    // OpenSSH stores seed || public key; both copies of the public key
    // must be the one in clear.
    if (text_of(*type) != kSshEd25519 || !std::equal(point->begin(), point->end(), public_key.ed25519.begin()) ||
        !std::equal(secret->begin() + 32, secret->end(), public_key.ed25519.begin())) {
      return mismatch();
    }
    std::copy_n(secret->begin(), 32, key->ed25519_seed.begin());
  } else {
    const auto n = reader.positive_mpint();
    const auto e = reader.positive_mpint();
    const auto d = reader.positive_mpint();
    const auto iqmp = reader.positive_mpint();
    const auto p = reader.positive_mpint();
    const auto q = reader.positive_mpint();
    if (!n || !e || !d || !iqmp || !p || !q) {
      return fail(WC_ERR_FORMAT, detail, "malformed OpenSSH private key: bad ssh-rsa private part");
    }
    if (text_of(*type) != kSshRsa || !std::ranges::equal(*n, public_key.rsa.n) ||
        !std::ranges::equal(*e, public_key.rsa.e)) {
      return mismatch();
    }
    key->rsa.public_key = public_key.rsa;
    key->rsa.d.assign(d->begin(), d->end());
    key->rsa.iqmp.assign(iqmp->begin(), iqmp->end());
    key->rsa.p.assign(p->begin(), p->end());
    key->rsa.q.assign(q->begin(), q->end());
  }
  const auto comment = reader.string();
  if (!comment) return fail(WC_ERR_FORMAT, detail, "malformed OpenSSH private key: no comment after the key");
  const auto padding = reader.rest();
  bool padded = padding.size() < block && section.size() % block == 0;
  for (size_t i = 0; padded && i < padding.size(); ++i) padded = padding[i] == i + 1;
  if (!padded) return fail(WC_ERR_FORMAT, detail, "malformed OpenSSH private key: bad padding after the key");
  return WC_OK;
}

}  // namespace

bool is_ssh_public_key_line(std::string_view text) {
  return text.starts_with("ssh-") || text.starts_with("ecdsa-sha2-") || text.starts_with("sk-");
}

const char *unsupported_ssh_key_type(std::string_view type) {
  if (type == "ssh-dss") return "DSA SSH keys are not age recipients (age uses ssh-ed25519 and ssh-rsa only)";
  if (type.starts_with("ecdsa-sha2-")) {
    return "ECDSA SSH keys are not age recipients (age uses ssh-ed25519 and ssh-rsa only)";
  }
  if (type.starts_with("sk-")) {
    return "security-key (sk-) SSH keys are not age recipients (age uses ssh-ed25519 and ssh-rsa only)";
  }
  if (type.find("-cert-v01@openssh.com") != std::string_view::npos) {
    return "SSH certificates are not age recipients (use the plain ssh-ed25519 or ssh-rsa key)";
  }
  return nullptr;
}

SshPrivateKey::~SshPrivateKey() { secure_wipe(ed25519_seed.data(), ed25519_seed.size()); }
OpensshKeyFile::~OpensshKeyFile() { secure_wipe(private_section.data(), private_section.size()); }

wc_status parse_ssh_public_key(std::string_view line, SshPublicKey *key, const char **detail) {
  const size_t type_end = line.find_first_of(" \t");
  if (type_end == std::string_view::npos) {
    return fail(WC_ERR_FORMAT, detail, "malformed SSH public key: expected a key type, a space and base64");
  }
  const std::string_view type = line.substr(0, type_end);
  std::string_view rest = line.substr(type_end);
  while (!rest.empty() && is_space(rest.front())) rest.remove_prefix(1);
  const std::string_view encoded = rest.substr(0, rest.find_first_of(" \t"));
  const auto blob = decode_padded_base64(encoded);
  if (!blob) return fail(WC_ERR_FORMAT, detail, "malformed SSH public key: the key is not base64");
  if (const wc_status status = parse_key_blob(*blob, key, detail); status != WC_OK) return status;
  // The type before the blob must be the one inside it (OpenSSH checks the
  // same), so an options field in front is no key type.
  const std::string_view inner = key->type == SshKeyType::ed25519 ? kSshEd25519 : kSshRsa;
  if (type != inner) {
    return fail(WC_ERR_FORMAT, detail, "malformed SSH public key: the key type does not match the key");
  }
  return WC_OK;
}

std::string format_ssh_public_key(const SshPublicKey &key) {
  // The blob in padded base64, as OpenSSH writes it; age's own base64 is
  // unpadded.
  std::string blob = encode_base64(key.wire);
  blob.append((4 - blob.size() % 4) % 4, '=');
  return std::string(key.type == SshKeyType::ed25519 ? kSshEd25519 : kSshRsa) + ' ' + blob;
}

wc_status parse_openssh_key_file(std::string_view text, OpensshKeyFile *file, const char **detail) {
  if (text.starts_with("-----BEGIN") && !text.starts_with(kPemBegin)) {
    return fail(WC_ERR_UNSUPPORTED, detail,
                "only OpenSSH private key files (BEGIN OPENSSH PRIVATE KEY) are read; ssh-keygen -p -f KEY rewrites "
                "a PEM key in that format");
  }
  auto bytes = decode_pem(text);
  if (!bytes) {
    return fail(WC_ERR_FORMAT, detail,
                "malformed OpenSSH private key: expected base64 between the BEGIN and END OPENSSH PRIVATE KEY lines");
  }
  const WipeOnExit wipe_bytes(*bytes);
  const std::span<const uint8_t> all(*bytes);
  if (!text_of(all).starts_with(kAuthMagic)) {
    return fail(WC_ERR_FORMAT, detail, "malformed OpenSSH private key: no openssh-key-v1 magic");
  }
  WireReader reader(all.subspan(kAuthMagic.size()));
  const auto cipher = reader.string();
  const auto kdf = reader.string();
  const auto kdf_options = reader.string();
  const auto count = reader.uint32();
  const auto public_blob = reader.string();
  const auto private_section = reader.string();
  if (!cipher || !kdf || !kdf_options || !count || !public_blob || !private_section) {
    return fail(WC_ERR_FORMAT, detail, "malformed OpenSSH private key: a length runs past the end of the key");
  }
  if (*count != 1) return fail(WC_ERR_FORMAT, detail, "an OpenSSH private key file must hold exactly one key");
  if (const wc_status status = parse_key_blob(*public_blob, &file->public_key, detail); status != WC_OK) {
    return status;
  }
  file->cipher = std::string(text_of(*cipher));
  const std::string_view kdf_name = text_of(*kdf);
  if (file->cipher == "none") {
    if (kdf_name != "none" || !kdf_options->empty()) {
      return fail(WC_ERR_FORMAT, detail, "malformed OpenSSH private key: a KDF on an unencrypted key");
    }
  } else {
    if (find_key_file_cipher(file->cipher) == nullptr) {
      return fail(WC_ERR_UNSUPPORTED, detail,
                  "the OpenSSH private key is encrypted with a cipher this build does not run, such as "
                  "aes256-gcm@openssh.com or chacha20-poly1305@openssh.com (it runs aes256-ctr, ssh-keygen's "
                  "default, aes128-ctr and aes256-cbc; ssh-keygen -p -Z aes256-ctr re-encrypts a key)");
    }
    if (kdf_name != "bcrypt") {
      return fail(WC_ERR_UNSUPPORTED, detail, "the OpenSSH private key uses a KDF other than bcrypt");
    }
    WireReader options(*kdf_options);
    const auto salt = options.string();
    const auto rounds = options.uint32();
    if (!salt || !rounds || !options.empty() || salt->empty()) {
      return fail(WC_ERR_FORMAT, detail, "malformed OpenSSH private key: bad bcrypt salt or rounds");
    }
    if (*rounds < 1 || *rounds > kMaxBcryptRounds) {
      return fail(WC_ERR_FORMAT, detail,
                  "the OpenSSH private key asks for 0 or more than 1024 bcrypt rounds (refused before any work)");
    }
    file->salt.assign(salt->begin(), salt->end());
    file->rounds = *rounds;
  }
  // Checked after the cipher, as the AEAD ciphers refused above put their
  // tag here.
  if (!reader.empty()) return fail(WC_ERR_FORMAT, detail, "malformed OpenSSH private key: bytes after the key");
  file->private_section.assign(private_section->begin(), private_section->end());
  return WC_OK;
}

wc_status open_openssh_key_file(const HostCrypto &crypto, const OpensshKeyFile &file,
                                std::span<const uint8_t> passphrase, SshPrivateKey *key, const char **detail) {
  if (!file.encrypted()) return parse_private_section(file.private_section, 8, file.public_key, key, detail);
  std::vector<uint8_t> plain;
  wc_status status = decrypt_section(crypto, file, passphrase, &plain, detail);
  if (status == WC_OK) status = parse_private_section(plain, kAesBlock, file.public_key, key, detail);
  secure_wipe(plain.data(), plain.size());
  return status;
}

}  // namespace warpcrypt::age
