#include "age/age_format.h"

#include <algorithm>

#include "age/age_armor.h"
#include "core/aead_registry.h"
#include "core/secret_bytes.h"

namespace warpcrypt::age {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr std::string_view kStanzaPrefix = "->";
constexpr std::string_view kFooterPrefix = "---";
constexpr size_t kBytesPerLine = kColumnsPerLine / 4 * 3;

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// An argument is one or more printable ASCII characters (VCHAR, 0x21-0x7E).
bool valid_argument(std::string_view arg) {
  return !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char c) { return c >= 0x21 && c <= 0x7e; });
}

// A line's words, split at single spaces (empty words kept, for the caller
// to refuse).
std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  size_t start = 0;
  for (size_t space = line.find(' '); space != std::string_view::npos; space = line.find(' ', start)) {
    words.push_back(line.substr(start, space - start));
    start = space + 1;
  }
  words.push_back(line.substr(start));
  return words;
}

wc_status derive(const HostCrypto &crypto, const FileKey &file_key, std::span<const uint8_t> salt,
                 std::string_view info, DerivedKey *key) {
  return crypto.hkdf(key->bytes, "sha256", file_key.bytes, salt, bytes_of(info));
}

}  // namespace

FileKey::~FileKey() { secure_wipe(bytes.data(), bytes.size()); }
DerivedKey::~DerivedKey() { secure_wipe(bytes.data(), bytes.size()); }

std::string encode_base64(std::span<const uint8_t> bytes) {
  std::string out;
  out.reserve((bytes.size() * 4 + 2) / 3);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t take = std::min<size_t>(3, bytes.size() - i);
    uint32_t group = uint32_t{bytes[i]} << 16;
    if (take > 1) group |= uint32_t{bytes[i + 1]} << 8;
    if (take > 2) group |= bytes[i + 2];
    for (size_t c = 0; c <= take; ++c) out.push_back(kAlphabet[(group >> (18 - 6 * c)) & 63]);
  }
  return out;
}

std::optional<std::vector<uint8_t>> decode_base64(std::string_view text) {
  // 4k+1 characters cannot end a byte.
  if (text.size() % 4 == 1) return std::nullopt;
  std::vector<uint8_t> out;
  out.reserve(text.size() / 4 * 3 + 2);
  uint32_t bits = 0;
  unsigned held = 0;
  for (char c : text) {
    const int value = base64_value(c);
    if (value < 0) return std::nullopt;
    bits = bits << 6 | static_cast<uint32_t>(value);
    held += 6;
    if (held >= 8) {
      held -= 8;
      out.push_back(static_cast<uint8_t>(bits >> held));
    }
    bits &= (1u << held) - 1;
  }
  // The last character's unused bits must be zero: another value would
  // decode to the same bytes, and the header must have one spelling.
  if (bits != 0) return std::nullopt;
  return out;
}

wc_status encode_header(const HostCrypto &crypto, const std::vector<Stanza> &stanzas, const FileKey &file_key,
                        std::string *out, const char **detail) {
  std::string text(kVersionLine);
  text += '\n';
  for (const Stanza &stanza : stanzas) {
    text += kStanzaPrefix;
    text += ' ';
    text += stanza.type;
    for (const std::string &arg : stanza.args) text += ' ' + arg;
    text += '\n';
    const std::string body = encode_base64(stanza.body);
    // Full lines, then a short one, empty when the body fills its last line.
    for (size_t at = 0;; at += kColumnsPerLine) {
      const size_t take = std::min(kColumnsPerLine, body.size() - at);
      text.append(body, at, take);
      text += '\n';
      if (take < kColumnsPerLine) break;
    }
  }
  text += kFooterPrefix;
  std::array<uint8_t, kMacLen> mac{};
  const wc_status status = header_mac(crypto, text, file_key, &mac);
  if (status != WC_OK) return status;
  text += ' ' + encode_base64(mac) + '\n';
  if (text.size() > kMaxHeaderLen) {
    *detail = kTooManyRecipients;
    return WC_ERR_INVALID_ARGUMENT;
  }
  *out = std::move(text);
  return WC_OK;
}

wc_status parse_header(std::string_view bytes, Header *header, bool *need_more, const char **detail) {
  *need_more = false;
  auto bad = [detail](const char *why) {
    *detail = why;
    return WC_ERR_FORMAT;
  };
  size_t at = 0;
  // The next line without its newline; false when the input ends first.
  auto next_line = [&](std::string_view *line) {
    const size_t end = bytes.find('\n', at);
    if (end == std::string_view::npos) {
      *need_more = bytes.size() < kMaxHeaderLen;
      return false;
    }
    *line = bytes.substr(at, end - at);
    at = end + 1;
    return true;
  };
  auto truncated = [&]() {
    return bad(*need_more ? "truncated age header: the input ends inside the header" : kHeaderTooLong);
  };
  std::string_view line;
  if (bytes.empty()) {
    *need_more = true;
    return bad("not an age file: the input is empty");
  }
  if (!next_line(&line)) {
    // Enough of a first line to tell another format from a short read.
    if (!bytes.starts_with(kVersionLine.substr(0, std::min(bytes.size(), kVersionLine.size())))) {
      *need_more = false;
      return bad("not an age file: the first line is not age-encryption.org/v1");
    }
    return truncated();
  }
  if (line != kVersionLine) {
    return bad(line.starts_with("age-encryption.org/")
                   ? "unsupported age version: the first line is not age-encryption.org/v1"
                   : "not an age file: the first line is not age-encryption.org/v1");
  }
  header->stanzas.clear();
  while (true) {
    const size_t line_start = at;
    if (!next_line(&line)) return truncated();
    if (at > kMaxHeaderLen) return bad(kHeaderTooLong);
    const std::vector<std::string_view> words = split_words(line);
    if (line.starts_with(kFooterPrefix)) {
      if (words[0] != kFooterPrefix || words.size() != 2) {
        return bad("malformed age header: the closing line must be \"--- \" and the MAC");
      }
      const auto mac = decode_base64(words[1]);
      if (!mac || mac->size() != kMacLen) {
        return bad("malformed age header: the MAC is not 32 bytes of canonical unpadded base64");
      }
      std::copy(mac->begin(), mac->end(), header->mac.begin());
      header->mac_input.assign(bytes.substr(0, line_start + kFooterPrefix.size()));
      header->encoded_len = at;
      return WC_OK;
    }
    if (!line.starts_with(kStanzaPrefix)) return bad("malformed age header: a line that is neither a stanza nor the MAC");
    if (words[0] != kStanzaPrefix || words.size() < 2) {
      return bad("malformed age stanza: it must start \"-> \" and name a type");
    }
    if (!std::all_of(words.begin() + 1, words.end(), valid_argument)) {
      return bad("malformed age stanza: every argument must be one or more printable ASCII characters, "
                 "separated by single spaces");
    }
    Stanza stanza;
    stanza.type = words[1];
    stanza.args.assign(words.begin() + 2, words.end());
    // The body: full 64-column lines, ended by a shorter one (maybe empty).
    while (true) {
      if (!next_line(&line)) return truncated();
      if (line.size() > kColumnsPerLine) return bad("malformed age stanza: a body line longer than 64 columns");
      const auto piece = decode_base64(line);
      if (!piece) {
        return bad(line.starts_with(kStanzaPrefix) || line.starts_with(kFooterPrefix)
                       ? "malformed age stanza: its body does not end with a line shorter than 64 columns"
                       : "malformed age stanza: the body is not canonical unpadded base64");
      }
      stanza.body.insert(stanza.body.end(), piece->begin(), piece->end());
      if (piece->size() < kBytesPerLine) break;
    }
    header->stanzas.push_back(std::move(stanza));
  }
}

wc_status header_mac(const HostCrypto &crypto, std::string_view mac_input, const FileKey &file_key,
                     std::array<uint8_t, kMacLen> *mac) {
  DerivedKey key;
  const wc_status status = derive(crypto, file_key, {}, "header", &key);
  if (status != WC_OK) return status;
  return crypto.hmac(*mac, "sha256", key.bytes, bytes_of(mac_input));
}

wc_status check_mac(const HostCrypto &crypto, const Header &header, const FileKey &file_key, const char **detail) {
  std::array<uint8_t, kMacLen> expected{};
  const wc_status status = header_mac(crypto, header.mac_input, file_key, &expected);
  if (status != WC_OK) return status;
  if (CRYPTO_memcmp(expected.data(), header.mac.data(), kMacLen) != 0) {
    *detail = "the age header's MAC does not match: the header was changed";
    return WC_ERR_AUTH;
  }
  return WC_OK;
}

wc_status payload_key(const HostCrypto &crypto, const FileKey &file_key, std::span<const uint8_t, kNonceLen> nonce,
                      DerivedKey *key) {
  return derive(crypto, file_key, nonce, "payload", key);
}

engine::StreamShape payload_shape(uint64_t body_offset) {
  engine::StreamShape shape;
  shape.aead = find_aead("chacha20-poly1305");
  shape.chunk_size = kChunkSize;
  shape.counter_len = 11;
  shape.body_offset = body_offset;
  shape.messages = {
      .no_chunk = "truncated age file: the payload holds no chunk",
      .short_chunk = "truncated age file: the last chunk is shorter than its tag",
      .too_long = "age file too long: more chunks than the 11-byte counter numbers",
      .empty_final = "truncated age file: an empty final chunk after the first (only an empty payload ends with one)",
  };
  return shape;
}

uint64_t payload_len(uint64_t plaintext_len) {
  constexpr uint64_t kTag = 16;
  const uint64_t chunks = plaintext_len == 0 ? 1 : (plaintext_len + kChunkSize - 1) / kChunkSize;
  return kNonceLen + plaintext_len + chunks * kTag;
}

uint64_t encrypted_len_bound(uint64_t recipients, uint64_t plaintext_len, bool armor) {
  // The version line, the stanzas, and "--- " with the MAC's base64.
  const uint64_t header = kVersionLine.size() + 1 + 4 + (kMacLen * 4 + 2) / 3 + 1;
  constexpr uint64_t kMost = UINT64_MAX / 2;  // room for the armor's growth by 4/3
  if (recipients > kMost / kStanzaRoom || plaintext_len > kMost - recipients * kStanzaRoom - header) {
    return UINT64_MAX;
  }
  const uint64_t binary = header + recipients * kStanzaRoom + payload_len(plaintext_len);
  return armor ? armored_len(binary) : binary;
}

wc_status payload_size(uint64_t payload_len, PayloadSize *size, const char **detail) {
  constexpr uint64_t kTag = 16;
  constexpr uint64_t kSealedChunk = kChunkSize + kTag;
  if (payload_len < kNonceLen) {
    *detail = "truncated age file: no payload nonce after the header";
    return WC_ERR_FORMAT;
  }
  const uint64_t sealed = payload_len - kNonceLen;
  if (sealed < kTag) {
    *detail = "truncated age file: the payload holds no chunk";
    return WC_ERR_FORMAT;
  }
  // Full chunks, then a last one of a tag and 1 to 64 KiB (or 0, alone).
  const uint64_t chunks = sealed / kSealedChunk + (sealed % kSealedChunk != 0 ? 1 : 0);
  const uint64_t last = sealed - (chunks - 1) * kSealedChunk;
  if (last < kTag) {
    *detail = "truncated age file: the last chunk is shorter than its tag";
    return WC_ERR_FORMAT;
  }
  if (last == kTag && chunks > 1) {
    *detail = "truncated age file: an empty final chunk after the first (only an empty payload ends with one)";
    return WC_ERR_FORMAT;
  }
  size->chunks = chunks;
  size->overhead = kNonceLen + chunks * kTag;
  size->plaintext = payload_len - size->overhead;
  return WC_OK;
}

PostQuantum postquantum_of(const std::vector<Stanza> &stanzas) {
  static constexpr std::string_view kClassical[] = {"X25519", "ssh-rsa", "ssh-ed25519", "p256tag", "piv-p256"};
  static constexpr std::string_view kQuantumSafe[] = {"mlkem768x25519", "scrypt", "mlkem768p256tag"};
  PostQuantum verdict = PostQuantum::unknown;
  for (const Stanza &stanza : stanzas) {
    if (std::find(std::begin(kClassical), std::end(kClassical), stanza.type) != std::end(kClassical)) {
      return PostQuantum::no;
    }
    if (std::find(std::begin(kQuantumSafe), std::end(kQuantumSafe), stanza.type) != std::end(kQuantumSafe)) {
      verdict = PostQuantum::yes;
    }
  }
  return verdict;
}

}  // namespace warpcrypt::age
