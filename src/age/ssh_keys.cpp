#include "age/ssh_keys.h"

#include <algorithm>
#include <optional>

#include "age/age_format.h"
#include "core/secret_bytes.h"

namespace warpcrypt::age {
namespace {

constexpr std::string_view kOpensshLabel = "OPENSSH PRIVATE KEY";
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

bool is_space(char c) { return c == ' ' || c == '\t'; }

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

std::string_view trim(std::string_view s) {
  const auto blank = [](char c) { return is_space(c) || c == '\r' || c == '\n'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

// Takes the line at the start of *text, without its CR, LF.
std::string_view take_line(std::string_view *text) {
  const size_t end = text->find('\n');
  std::string_view line = text->substr(0, end);
  *text = end == std::string_view::npos ? std::string_view{} : text->substr(end + 1);
  if (line.ends_with('\r')) line.remove_suffix(1);
  return line;
}

// One PEM block (RFC 7468), with RFC 1421's encryption headers where it
// has them: whitespace, the BEGIN line, "Name: value" headers ended by an
// empty line, base64 lines, the END line of the same label, then whatever
// follows. The body is wiped on destruction.
struct PemBlock {
  std::string_view label;
  std::string_view proc_type, dek_info;
  std::vector<uint8_t> body;
  std::string_view after;
  ~PemBlock() { secure_wipe(body.data(), body.size()); }
};

constexpr std::string_view kBeginMarker = "-----BEGIN ";
constexpr std::string_view kEndMarker = "-----END ";
constexpr std::string_view kDashes = "-----";

// Whether the PEM block at the start of `text` is labelled `label`.
bool pem_label_is(std::string_view text, std::string_view label) {
  text = trim(text);
  return text.starts_with(kBeginMarker) && text.substr(kBeginMarker.size()).starts_with(label) &&
         text.substr(kBeginMarker.size() + label.size()).starts_with(kDashes);
}

std::optional<PemBlock> parse_pem_block(std::string_view text) {
  text = trim(text);
  const std::string_view begin = take_line(&text);
  if (!begin.starts_with(kBeginMarker) || !begin.ends_with(kDashes) ||
      begin.size() < kBeginMarker.size() + kDashes.size()) {
    return std::nullopt;
  }
  PemBlock block;
  block.label = begin.substr(kBeginMarker.size(), begin.size() - kBeginMarker.size() - kDashes.size());
  if (text.find(':') < text.find('\n')) {
    for (std::string_view line = take_line(&text); !line.empty(); line = take_line(&text)) {
      const size_t colon = line.find(": ");
      if (colon == std::string_view::npos) return std::nullopt;
      const std::string_view name = line.substr(0, colon);
      std::string_view *field = name == "Proc-Type" ? &block.proc_type : name == "DEK-Info" ? &block.dek_info : nullptr;
      if (field == nullptr || !field->empty() || text.empty()) return std::nullopt;
      *field = line.substr(colon + 2);
    }
  }
  std::string joined;
  for (std::string_view line = take_line(&text);; line = take_line(&text)) {
    if (line.starts_with(kEndMarker)) {
      if (line != std::string(kEndMarker) + std::string(block.label) + std::string(kDashes)) return std::nullopt;
      break;
    }
    if (text.empty()) return std::nullopt;
    joined += line;
  }
  auto body = decode_padded_base64(joined);
  secure_wipe(joined.data(), joined.size());
  if (!body) return std::nullopt;
  block.body = std::move(*body);
  block.after = trim(text);
  return block;
}

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

// ---- PEM keys ----------------------------------------------------------------

constexpr std::string_view kPkcs1Label = "RSA PRIVATE KEY";
constexpr std::string_view kPkcs8Label = "PRIVATE KEY";

// RFC 1423's ciphers, as Go's x509.DecryptPEMBlock knows them, but for
// single DES, which OpenSSL 3 keeps in its legacy provider.
constexpr PemCipher kPemCiphers[] = {
    {"AES-128-CBC", "aes-128-cbc", 16, 16},
    {"AES-192-CBC", "aes-192-cbc", 24, 16},
    {"AES-256-CBC", "aes-256-cbc", 32, 16},
    {"DES-EDE3-CBC", "des-ede3-cbc", 24, 8},
};

// The PEM labels of keys age does not use, and why.
const char *unsupported_pem_label(std::string_view label) {
  if (label == "EC PRIVATE KEY") return "ECDSA SSH keys are not age identities (age uses ssh-ed25519 and ssh-rsa only)";
  if (label == "DSA PRIVATE KEY") return "DSA SSH keys are not age identities (age uses ssh-ed25519 and ssh-rsa only)";
  if (label == "ENCRYPTED PRIVATE KEY") {
    return "encrypted PKCS#8 keys (BEGIN ENCRYPTED PRIVATE KEY) are not read, as age reads none; ssh-keygen -p -f "
           "KEY rewrites the key in OpenSSH's format";
  }
  return nullptr;
}

std::optional<std::vector<uint8_t>> decode_hex(std::string_view text) {
  const auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  if (text.size() % 2 != 0) return std::nullopt;
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i < text.size(); i += 2) {
    const int high = nibble(text[i]), low = nibble(text[i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    bytes.push_back(static_cast<uint8_t>(high << 4 | low));
  }
  return bytes;
}

// Reads DER's tag-length-value elements (X.690) only as far as a PKCS#8
// key names its algorithm: the key's type must be known when it is parsed,
// before HostCrypto reads the rest.
class DerReader {
 public:
  explicit DerReader(std::span<const uint8_t> bytes) : rest_(bytes) {}
  // The contents of the next element, which must have `tag`.
  std::optional<std::span<const uint8_t>> element(uint8_t tag) {
    if (rest_.size() < 2 || rest_[0] != tag) return std::nullopt;
    size_t len = rest_[1], header = 2;
    if (len & 0x80) {
      const size_t len_bytes = len & 0x7f;
      if (len_bytes == 0 || len_bytes > 4 || rest_.size() < header + len_bytes) return std::nullopt;
      len = 0;
      for (size_t i = 0; i < len_bytes; ++i) len = len << 8 | rest_[header + i];
      header += len_bytes;
    }
    if (len > rest_.size() - header) return std::nullopt;
    const auto contents = rest_.subspan(header, len);
    rest_ = rest_.subspan(header + len);
    return contents;
  }

 private:
  std::span<const uint8_t> rest_;
};

// The algorithm of a PKCS#8 PrivateKeyInfo: SEQUENCE { INTEGER version,
// SEQUENCE { OBJECT IDENTIFIER algorithm, ... }, ... }.
wc_status pkcs8_key_type(std::span<const uint8_t> der, SshKeyType *type, const char **detail) {
  constexpr uint8_t kSequence = 0x30, kInteger = 0x02, kObjectIdentifier = 0x06;
  constexpr uint8_t kRsaEncryption[] = {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01};  // 1.2.840.113549.1.1.1
  constexpr uint8_t kEd25519[] = {0x2b, 0x65, 0x70};                                            // 1.3.101.112
  constexpr uint8_t kEcPublicKey[] = {0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01};                // 1.2.840.10045.2.1
  constexpr uint8_t kDsa[] = {0x2a, 0x86, 0x48, 0xce, 0x38, 0x04, 0x01};                        // 1.2.840.10040.4.1
  DerReader outer(der);
  const auto info = outer.element(kSequence);
  DerReader fields(info.value_or(std::span<const uint8_t>{}));
  const auto version = fields.element(kInteger);
  const auto algorithm = fields.element(kSequence);
  const auto oid = DerReader(algorithm.value_or(std::span<const uint8_t>{})).element(kObjectIdentifier);
  if (!info || !version || !algorithm || !oid) {
    return fail(WC_ERR_FORMAT, detail, "malformed PKCS#8 private key: no algorithm where PrivateKeyInfo names it");
  }
  if (std::ranges::equal(*oid, kRsaEncryption)) {
    *type = SshKeyType::rsa;
  } else if (std::ranges::equal(*oid, kEd25519)) {
    *type = SshKeyType::ed25519;
  } else if (std::ranges::equal(*oid, kEcPublicKey)) {
    return fail(WC_ERR_UNSUPPORTED, detail, unsupported_pem_label("EC PRIVATE KEY"));
  } else if (std::ranges::equal(*oid, kDsa)) {
    return fail(WC_ERR_UNSUPPORTED, detail, unsupported_pem_label("DSA PRIVATE KEY"));
  } else {
    return fail(WC_ERR_UNSUPPORTED, detail,
                "the PKCS#8 private key is neither RSA nor Ed25519, the SSH keys age uses");
  }
  return WC_OK;
}

// RFC 1421's headers of an encrypted key: "Proc-Type: 4,ENCRYPTED" and
// "DEK-Info: CIPHER,IV" with the IV in hex, one block.
wc_status parse_pem_encryption(const PemBlock &block, PemKeyFile *file, const char **detail) {
  if (block.proc_type.empty() && block.dek_info.empty()) return WC_OK;
  if (block.proc_type != "4,ENCRYPTED" || block.dek_info.empty()) {
    return fail(WC_ERR_FORMAT, detail,
                "malformed PEM private key: expected Proc-Type: 4,ENCRYPTED and a DEK-Info header, or neither");
  }
  if (block.label != kPkcs1Label) {
    return fail(WC_ERR_UNSUPPORTED, detail,
                "only RSA PRIVATE KEY files are read encrypted, as age reads them; ssh-keygen -p -f KEY rewrites "
                "the key in OpenSSH's format");
  }
  const size_t comma = block.dek_info.find(',');
  const std::string_view name = block.dek_info.substr(0, comma);
  for (const PemCipher &cipher : kPemCiphers) {
    if (cipher.dek_info_name == name) file->cipher = &cipher;
  }
  if (file->cipher == nullptr) {
    return fail(WC_ERR_UNSUPPORTED, detail,
                "the PEM private key is encrypted with a cipher this build does not run (it runs AES-128-CBC, "
                "ssh-keygen's, AES-192-CBC, AES-256-CBC and DES-EDE3-CBC; ssh-keygen -p -f KEY re-encrypts a key)");
  }
  auto iv = comma == std::string_view::npos ? std::nullopt : decode_hex(block.dek_info.substr(comma + 1));
  if (!iv || iv->size() != file->cipher->block) {
    return fail(WC_ERR_FORMAT, detail, "malformed PEM private key: DEK-Info's IV is not one cipher block in hex");
  }
  if (block.body.empty() || block.body.size() % file->cipher->block != 0) {
    return fail(WC_ERR_FORMAT, detail, "malformed PEM private key: the encrypted key is not whole cipher blocks");
  }
  file->iv = std::move(*iv);
  return WC_OK;
}

// The DER of an encrypted key: OpenSSL's legacy key derivation
// (EVP_BytesToKey: one round of MD5, salted with the IV's first 8 bytes),
// CBC, then PKCS#7 padding, whose check is the first a wrong passphrase
// fails.
wc_status decrypt_pem_der(const HostCrypto &crypto, const PemKeyFile &file, std::span<const uint8_t> passphrase,
                          std::vector<uint8_t> *der, const char **detail) {
  constexpr size_t kSaltLen = 8;
  const PemCipher &cipher = *file.cipher;
  std::array<uint8_t, 32> key{};
  const std::span<uint8_t> cipher_key(key.data(), cipher.key_len);
  wc_status status =
      crypto.derive_key_iv(cipher_key, WC_KDF_LEGACY, "md5", 1, passphrase, std::span(file.iv).first(kSaltLen));
  der->resize(file.der.size());
  if (status == WC_OK) status = crypto.decrypt(*der, cipher.name, cipher_key, file.iv, file.der);
  secure_wipe(key.data(), key.size());
  if (status != WC_OK) return status;
  const size_t pad = der->back();
  bool padded = pad >= 1 && pad <= cipher.block;
  for (size_t i = 0; padded && i < pad; ++i) padded = (*der)[der->size() - 1 - i] == pad;
  if (!padded) {
    return fail(WC_ERR_AUTH, detail, "incorrect passphrase for the PEM private key, or a damaged key (bad padding)");
  }
  secure_wipe(der->data() + der->size() - pad, pad);
  der->resize(der->size() - pad);
  return WC_OK;
}

void append_string(std::vector<uint8_t> *wire, std::span<const uint8_t> bytes) {
  const auto len = static_cast<uint32_t>(bytes.size());
  for (int shift = 24; shift >= 0; shift -= 8) wire->push_back(static_cast<uint8_t>(len >> shift));
  wire->insert(wire->end(), bytes.begin(), bytes.end());
}
void append_mpint(std::vector<uint8_t> *wire, std::span<const uint8_t> magnitude) {
  while (!magnitude.empty() && magnitude.front() == 0) magnitude = magnitude.subspan(1);
  std::vector<uint8_t> mpint;
  if (!magnitude.empty() && (magnitude.front() & 0x80) != 0) mpint.push_back(0);
  mpint.insert(mpint.end(), magnitude.begin(), magnitude.end());
  append_string(wire, mpint);
}

// The SSH key of a key read from DER, held to the rules of an SSH public
// key blob (age's RSA sizes and exponents) by being parsed as one.
wc_status ssh_key_of(const HostCrypto &crypto, const DerPrivateKey &der_key, SshPrivateKey *key,
                     const char **detail) {
  std::vector<uint8_t> blob;
  if (der_key.type == DerPrivateKey::Type::ed25519) {
    std::array<uint8_t, 32> public_key{};
    if (const wc_status status = crypto.ed25519_public_key(public_key, der_key.ed25519_seed); status != WC_OK) {
      return status;
    }
    append_string(&blob, bytes_of(kSshEd25519));
    append_string(&blob, public_key);
    key->ed25519_seed = der_key.ed25519_seed;
  } else {
    append_string(&blob, bytes_of(kSshRsa));
    append_mpint(&blob, der_key.rsa.public_key.e);
    append_mpint(&blob, der_key.rsa.public_key.n);
    key->rsa.d = der_key.rsa.d;
    key->rsa.p = der_key.rsa.p;
    key->rsa.q = der_key.rsa.q;
    key->rsa.iqmp = der_key.rsa.iqmp;
  }
  const wc_status status = parse_key_blob(blob, &key->public_key, detail);
  key->rsa.public_key = key->public_key.rsa;
  return status;
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
  const auto block = parse_pem_block(text);
  if (!block || block->label != kOpensshLabel || !block->proc_type.empty() || !block->dek_info.empty() ||
      !block->after.empty()) {
    return fail(WC_ERR_FORMAT, detail,
                "malformed OpenSSH private key: expected base64 between the BEGIN and END OPENSSH PRIVATE KEY lines");
  }
  const std::span<const uint8_t> all(block->body);
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

PemKeyFile::~PemKeyFile() { secure_wipe(der.data(), der.size()); }

wc_status parse_pem_key_file(std::string_view text, PemKeyFile *file, const char **detail) {
  const auto block = parse_pem_block(text);
  if (!block) {
    return fail(WC_ERR_FORMAT, detail,
                "malformed PEM private key: expected a BEGIN line, headers, base64 and the END line of its label");
  }
  if (const char *why = unsupported_pem_label(block->label)) return fail(WC_ERR_UNSUPPORTED, detail, why);
  if (block->label != kPkcs1Label && block->label != kPkcs8Label) {
    return fail(WC_ERR_UNSUPPORTED, detail,
                "the PEM file is no private key age reads (RSA PRIVATE KEY, PRIVATE KEY, OPENSSH PRIVATE KEY)");
  }
  if (const wc_status status = parse_pem_encryption(*block, file, detail); status != WC_OK) return status;
  if (block->label == kPkcs1Label) {
    file->syntax = PrivateKeyDer::pkcs1_rsa;
    file->type = SshKeyType::rsa;
  } else {
    file->syntax = PrivateKeyDer::pkcs8;
    if (const wc_status status = pkcs8_key_type(block->body, &file->type, detail); status != WC_OK) return status;
  }
  if (file->cipher != nullptr) {
    // Its public key is encrypted with it: age takes it from KEY.pub, so
    // as to ask for the passphrase only when a stanza names the key.
    if (block->after.empty()) {
      return fail(WC_ERR_FORMAT, detail,
                  "the PEM private key is passphrase-protected and its public key is not in clear: age reads it from "
                  "KEY.pub, so put that beside the key, or rewrite the key in OpenSSH's format (ssh-keygen -p -f KEY)");
    }
    SshPublicKey public_key;
    if (const wc_status status = parse_ssh_public_key(block->after, &public_key, detail); status != WC_OK) {
      return status;
    }
    if (public_key.type != file->type) {
      return fail(WC_ERR_FORMAT, detail, "the public key beside the PEM private key is of another type");
    }
    file->public_key = std::move(public_key);
  } else if (!block->after.empty()) {
    return fail(WC_ERR_FORMAT, detail, "malformed PEM private key: text after the END line");
  }
  file->der = block->body;
  return WC_OK;
}

wc_status open_pem_key_file(const HostCrypto &crypto, const PemKeyFile &file, std::span<const uint8_t> passphrase,
                            SshPrivateKey *key, const char **detail) {
  std::vector<uint8_t> decrypted;
  wc_status status = file.cipher != nullptr ? decrypt_pem_der(crypto, file, passphrase, &decrypted, detail) : WC_OK;
  DerPrivateKey der_key;
  if (status == WC_OK) {
    status = crypto.parse_private_key_der(file.cipher != nullptr ? decrypted : file.der, file.syntax, &der_key);
  }
  secure_wipe(decrypted.data(), decrypted.size());
  if (status == WC_ERR_FORMAT && file.cipher != nullptr) {
    // Padding that checks out by chance (1 in 256) lets a wrong passphrase
    // this far.
    return fail(WC_ERR_AUTH, detail, "incorrect passphrase for the PEM private key, or a damaged key");
  }
  if (status == WC_ERR_FORMAT) return fail(status, detail, "malformed PEM private key: its DER is no key");
  if (status == WC_ERR_UNSUPPORTED) {
    return fail(status, detail, "the PEM private key is neither a two-prime RSA key nor an Ed25519 key");
  }
  if (status != WC_OK) return status;
  const bool rsa = der_key.type == DerPrivateKey::Type::rsa;
  if (rsa != (file.type == SshKeyType::rsa)) {
    return fail(WC_ERR_FORMAT, detail, "malformed PKCS#8 private key: its key is not of the algorithm it names");
  }
  status = ssh_key_of(crypto, der_key, key, detail);
  if (status == WC_OK && file.public_key && key->public_key.wire != file.public_key->wire) {
    return fail(WC_ERR_FORMAT, detail,
                "mismatched private and public SSH key: the PEM private key is not the key of KEY.pub beside it");
  }
  return status;
}

wc_status parse_ssh_key_file(std::string_view text, SshKeyFile *file, const char **detail) {
  if (text.size() > kMaxPrivateKeyFileLen) {
    return fail(WC_ERR_FORMAT, detail, "the private key file is over 16 KiB, which no SSH key of age's types is");
  }
  if (pem_label_is(text, kOpensshLabel)) {
    return parse_openssh_key_file(text, &file->format.emplace<OpensshKeyFile>(), detail);
  }
  return parse_pem_key_file(text, &file->format.emplace<PemKeyFile>(), detail);
}

wc_status open_ssh_key_file(const HostCrypto &crypto, const SshKeyFile &file, std::span<const uint8_t> passphrase,
                            SshPrivateKey *key, const char **detail) {
  if (const auto *pem = std::get_if<PemKeyFile>(&file.format)) {
    return open_pem_key_file(crypto, *pem, passphrase, key, detail);
  }
  return open_openssh_key_file(crypto, std::get<OpensshKeyFile>(file.format), passphrase, key, detail);
}

wc_status ssh_key_file_public_key(const HostCrypto &crypto, const SshKeyFile &file, SshPublicKey *key,
                                  const char **detail) {
  const auto *pem = std::get_if<PemKeyFile>(&file.format);
  if (pem == nullptr) {
    *key = std::get<OpensshKeyFile>(file.format).public_key;
    return WC_OK;
  }
  if (pem->public_key) {
    *key = *pem->public_key;
    return WC_OK;
  }
  SshPrivateKey private_key;
  const wc_status status = open_pem_key_file(crypto, *pem, {}, &private_key, detail);
  if (status == WC_OK) *key = private_key.public_key;
  return status;
}

SshKeyType SshKeyFile::type() const {
  if (const auto *pem = std::get_if<PemKeyFile>(&format)) return pem->type;
  return std::get<OpensshKeyFile>(format).public_key.type;
}

bool SshKeyFile::encrypted() const {
  if (const auto *pem = std::get_if<PemKeyFile>(&format)) return pem->cipher != nullptr;
  return std::get<OpensshKeyFile>(format).encrypted();
}

}  // namespace warpcrypt::age
