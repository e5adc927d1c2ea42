#include "age/age_armor.h"

#include <algorithm>

#include "age/age_format.h"

namespace warpcrypt::age {
namespace {

constexpr size_t kBytesPerLine = kColumnsPerLine / 4 * 3;
// Longer than any line the armor may hold, with its CR: a longer one is
// refused before it is buffered whole.
constexpr size_t kMaxLine = std::max(kArmorBegin.size(), kColumnsPerLine) + 1;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

}  // namespace

bool looks_armored(std::string_view start) {
  const size_t first = std::find_if_not(start.begin(), start.end(), is_space) - start.begin();
  return start.substr(first).starts_with(kArmorBegin.substr(0, std::min(kArmorBegin.size(), start.size() - first))) &&
         start.size() > first;
}

uint64_t armored_len(uint64_t binary_len) {
  const uint64_t full_lines = binary_len / kBytesPerLine;
  const uint64_t rest = binary_len % kBytesPerLine;
  const uint64_t last_line = rest == 0 ? 0 : (rest + 2) / 3 * 4 + 1;
  return kArmorBegin.size() + 1 + full_lines * (kColumnsPerLine + 1) + last_line + kArmorEnd.size() + 1;
}

void ArmorEncoder::line(std::span<const uint8_t> bytes, std::string *out) {
  std::string text = encode_base64(bytes);
  text.append((4 - text.size() % 4) % 4, '=');
  *out += text;
  *out += '\n';
}

void ArmorEncoder::feed(std::span<const uint8_t> bytes, std::string *out) {
  if (!begun_) {
    *out += kArmorBegin;
    *out += '\n';
    begun_ = true;
  }
  while (!bytes.empty()) {
    const size_t take = std::min(bytes.size(), kBytesPerLine - pending_.size());
    pending_.insert(pending_.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(take));
    bytes = bytes.subspan(take);
    if (pending_.size() == kBytesPerLine) {
      line(pending_, out);
      pending_.clear();
    }
  }
}

void ArmorEncoder::finish(std::string *out) {
  feed({}, out);
  if (!pending_.empty()) line(pending_, out);
  pending_.clear();
  *out += kArmorEnd;
  *out += '\n';
}

wc_status ArmorDecoder::feed(std::string_view text, std::vector<uint8_t> *out, const char **detail) {
  while (!text.empty()) {
    const size_t end = text.find('\n');
    if (end == std::string_view::npos) {
      pending_.append(text);
      text = {};
    } else {
      pending_.append(text.substr(0, end));
      text = text.substr(end + 1);
      std::string_view line = pending_;
      if (line.ends_with('\r')) line.remove_suffix(1);
      const wc_status status = take_line(line, out, detail);
      pending_.clear();
      if (status != WC_OK) return status;
    }
    if (pending_.size() > kMaxLine && state_ != State::trailing &&
        !(state_ == State::leading && std::all_of(pending_.begin(), pending_.end(), is_space))) {
      *detail = "malformed age armor: a line longer than 64 columns";
      return WC_ERR_FORMAT;
    }
    if (state_ == State::trailing && !std::all_of(pending_.begin(), pending_.end(), is_space)) {
      *detail = "malformed age armor: data after the end line";
      return WC_ERR_FORMAT;
    }
    // Whitespace needs no keeping.
    if (state_ != State::data && std::all_of(pending_.begin(), pending_.end(), is_space)) pending_.clear();
  }
  return WC_OK;
}

wc_status ArmorDecoder::take_line(std::string_view line, std::vector<uint8_t> *out, const char **detail) {
  auto bad = [detail](const char *why) {
    *detail = why;
    return WC_ERR_FORMAT;
  };
  switch (state_) {
    case State::leading: {
      const auto text_start = std::find_if_not(line.begin(), line.end(), is_space);
      if (text_start == line.end()) return WC_OK;
      if (line.substr(static_cast<size_t>(text_start - line.begin())) != kArmorBegin) {
        return bad("malformed age armor: the first line is not -----BEGIN AGE ENCRYPTED FILE-----");
      }
      state_ = State::data;
      return WC_OK;
    }
    case State::data: {
      if (line == kArmorEnd) {
        if (!data_seen_) return bad("malformed age armor: no data between the begin and end lines");
        state_ = State::trailing;
        return WC_OK;
      }
      if (short_line_seen_) return bad("malformed age armor: a short or padded line before the last");
      if (line.empty()) return bad("malformed age armor: an empty line inside the data");
      if (line.size() > kColumnsPerLine) return bad("malformed age armor: a line longer than 64 columns");
      if (line.size() % 4 != 0) return bad("malformed age armor: a line that is not whole base64 groups");
      size_t padding = 0;
      while (padding < 2 && line.size() > padding && line[line.size() - 1 - padding] == '=') ++padding;
      const std::string_view digits = line.substr(0, line.size() - padding);
      const bool padding_right = (digits.size() + padding) % 4 == 0 && (padding == 0 || digits.size() % 4 != 0);
      const auto bytes = decode_base64(digits);
      if (!padding_right || !bytes) return bad("malformed age armor: not canonical padded base64");
      out->insert(out->end(), bytes->begin(), bytes->end());
      data_seen_ = true;
      // A short or padded line is the last.
      if (line.size() < kColumnsPerLine || padding != 0) short_line_seen_ = true;
      return WC_OK;
    }
    case State::trailing:
      if (!std::all_of(line.begin(), line.end(), is_space)) return bad("malformed age armor: data after the end line");
      return WC_OK;
  }
  return WC_OK;
}

wc_status ArmorDecoder::finish(const char **detail) {
  if (!pending_.empty()) {
    std::vector<uint8_t> none;
    std::string line = pending_;
    if (std::string_view(line).ends_with('\r')) line.pop_back();
    // The end line may lack its newline.
    const wc_status status = take_line(line, &none, detail);
    pending_.clear();
    if (status != WC_OK) return status;
  }
  if (state_ != State::trailing) {
    *detail = state_ == State::leading ? "malformed age armor: no -----BEGIN AGE ENCRYPTED FILE----- line"
                                       : "truncated age armor: no -----END AGE ENCRYPTED FILE----- line";
    return WC_ERR_FORMAT;
  }
  return WC_OK;
}

}  // namespace warpcrypt::age
