#include "age/key.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "core/secret_bytes.h"

namespace warpcrypt::age {
namespace {

// Each wrapping key seals one file key: the all-zero nonce is age's.
constexpr std::array<uint8_t, 12> kZeroNonce{};

constexpr char kBech32Charset[] = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";

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
  if (upper) {
    std::transform(out.begin(), out.end(), out.begin(),
                   [](char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); });
  }
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

wc_status seal_file_key(const HostCrypto &crypto, std::span<const uint8_t, 32> key, const FileKey &file_key,
                        std::array<uint8_t, kWrappedKeyLen> *wrapped) {
  return crypto.chacha20_poly1305_seal(*wrapped, key, kZeroNonce, file_key.bytes);
}

wc_status open_file_key(const HostCrypto &crypto, std::span<const uint8_t, 32> key, std::span<const uint8_t> body,
                        FileKey *file_key) {
  return crypto.chacha20_poly1305_open(file_key->bytes, key, kZeroNonce, body);
}

wc_status seal_stanza(const HostCrypto &crypto, std::span<const uint8_t, 32> key, const FileKey &file_key,
                      std::string_view type, std::vector<std::string> args, Stanza *stanza) {
  std::array<uint8_t, kWrappedKeyLen> wrapped{};
  if (const wc_status status = seal_file_key(crypto, key, file_key, &wrapped); status != WC_OK) {
    return status;
  }
  stanza->type = type;
  stanza->args = std::move(args);
  stanza->body.assign(wrapped.begin(), wrapped.end());
  return WC_OK;
}

wc_status fail(wc_status status, const char **detail, const char *why) {
  *detail = why;
  return status;
}

}  // namespace warpcrypt::age
