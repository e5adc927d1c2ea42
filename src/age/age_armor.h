// age's ASCII armor: a strict subset of PEM (RFC 7468) with the label
// "AGE ENCRYPTED FILE". The file in padded standard base64, 64 columns a
// line, the last line shorter or full; LF or CRLF line ends; whitespace
// before the first line and after the last ignored, nothing else allowed.
// Both directions work on pieces of any size, so a file of any length
// passes through a bounded buffer.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::age {

inline constexpr std::string_view kArmorBegin = "-----BEGIN AGE ENCRYPTED FILE-----";
inline constexpr std::string_view kArmorEnd = "-----END AGE ENCRYPTED FILE-----";

// Whether `start` (the input's first bytes, whitespace included) opens an
// armored file rather than a binary one.
bool looks_armored(std::string_view start);

// The armored length of `binary_len` bytes: the begin line, the base64
// lines of 64 columns, the end line, each ending in a newline.
uint64_t armored_len(uint64_t binary_len);

class ArmorEncoder {
 public:
  // Appends the armored text of `bytes` (the begin line first) to *out.
  void feed(std::span<const uint8_t> bytes, std::string *out);
  // Appends the last line and the end line.
  void finish(std::string *out);

 private:
  void line(std::span<const uint8_t> bytes, std::string *out);
  bool begun_ = false;
  std::vector<uint8_t> pending_;  // under 48 bytes: one line's worth
};

class ArmorDecoder {
 public:
  // Decodes `text` (any piece of the armored input), appending the file's
  // bytes to *out. WC_ERR_FORMAT with *detail naming the broken rule.
  wc_status feed(std::string_view text, std::vector<uint8_t> *out, const char **detail);
  // WC_ERR_FORMAT unless the input ended after the end line.
  wc_status finish(const char **detail);

 private:
  wc_status take_line(std::string_view line, std::vector<uint8_t> *out, const char **detail);
  enum class State { leading, data, trailing };
  State state_ = State::leading;
  bool short_line_seen_ = false;
  bool data_seen_ = false;
  std::string pending_;  // a line not yet ended
};

}  // namespace warpcrypt::age
