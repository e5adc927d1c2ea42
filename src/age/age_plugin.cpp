#include "age/age_plugin.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "age/key.h"
#include "core/secret_bytes.h"

namespace warpcrypt::age {
namespace {

constexpr size_t kColumns = 64;
// The most a user's typed answer may be; plugins ask for PINs and
// passphrases.
constexpr size_t kMaxRequestedValueLen = 4096;

bool valid_word(std::string_view word) {
  return !word.empty() && std::all_of(word.begin(), word.end(), [](char c) { return c >= 0x21 && c <= 0x7e; });
}

bool base64_character(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/'; }

bool valid_plugin_name(std::string_view name) {
  constexpr std::string_view kAllowed = "+-._";
  return !name.empty() && name.find("..") == std::string_view::npos &&
         std::all_of(name.begin(), name.end(), [&](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || kAllowed.find(c) != std::string_view::npos;
         });
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
  return out;
}

std::string stanza_without_body(std::string_view type, std::span<const std::string> args = {}) {
  return encode_plugin_stanza(type, args, {});
}

// Appends a stanza that carries a secret (a file key, an identity, a typed
// value), wiping the encoded copy.
void append_secret(std::string *out, std::string stanza) {
  out->append(stanza);
  secure_wipe(stanza.data(), stanza.size());
}

// Decimal file index 0, the only file a session wraps or unwraps, spelled
// the one way.
bool first_file(std::string_view index) { return index == "0"; }

wc_status refuse(const char **detail, const char *why, wc_status status = WC_ERR_FORMAT) {
  *detail = why;
  return status;
}

}  // namespace

PluginStanza::~PluginStanza() { secure_wipe(body.data(), body.size()); }

std::string encode_plugin_stanza(std::string_view type, std::span<const std::string> args,
                                 std::span<const uint8_t> body) {
  std::string out = "-> ";
  out += type;
  for (const std::string &arg : args) {
    out += ' ';
    out += arg;
  }
  out += '\n';
  std::string text = encode_base64(body);
  // Whole lines, then a shorter last one, which is empty where the text
  // fills whole lines: that is how the reader knows the body ended.
  for (size_t at = 0;; at += kColumns) {
    const std::string_view piece = std::string_view(text).substr(std::min(at, text.size()), kColumns);
    out += piece;
    out += '\n';
    if (piece.size() < kColumns) break;
  }
  secure_wipe(text.data(), text.size());
  return out;
}

PluginStanzaReader::~PluginStanzaReader() {
  secure_wipe(line_.data(), line_.size());
  secure_wipe(body_text_.data(), body_text_.size());
}

wc_status PluginStanzaReader::feed(std::string_view bytes, std::vector<PluginStanza> *out, const char **detail) {
  // Line by line, limits included, so that the stanzas `bytes` completes
  // are the same whatever pieces it comes in.
  while (!bytes.empty()) {
    const size_t end = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, end);
    const size_t taken = end == std::string_view::npos ? piece.size() : piece.size() + 1;
    if (taken > kMaxPluginOutputLen - total_) {
      return refuse(detail, "the age plugin wrote more than 16 MiB, more than any answer needs");
    }
    total_ += taken;
    if (piece.size() > kMaxPluginLineLen - line_.size()) {
      return refuse(detail, "the age plugin wrote a line longer than 64 KiB");
    }
    line_.append(piece);
    if (end == std::string_view::npos) break;
    bytes.remove_prefix(end + 1);
    const wc_status status = take_line(line_, out, detail);
    secure_wipe(line_.data(), line_.size());
    line_.clear();
    if (status != WC_OK) return status;
  }
  return WC_OK;
}

wc_status PluginStanzaReader::take_line(std::string_view line, std::vector<PluginStanza> *out, const char **detail) {
  if (!in_body_) {
    if (!line.starts_with("-> ")) return refuse(detail, "the age plugin wrote a line that starts no stanza");
    std::vector<std::string> words;
    for (std::string_view rest = line.substr(3);;) {
      const size_t space = rest.find(' ');
      words.emplace_back(rest.substr(0, space));
      if (!valid_word(words.back())) {
        return refuse(detail, "the age plugin wrote a stanza with an empty or non-printable type or argument");
      }
      if (space == std::string_view::npos) break;
      rest.remove_prefix(space + 1);
    }
    stanza_.type = std::move(words.front());
    stanza_.args.assign(std::make_move_iterator(words.begin() + 1), std::make_move_iterator(words.end()));
    in_body_ = true;
    return WC_OK;
  }
  if (line.size() > kColumns || !std::all_of(line.begin(), line.end(), base64_character)) {
    return refuse(detail, "the age plugin wrote a stanza body line that is not base64 of at most 64 columns");
  }
  if (line.size() > kMaxPluginBodyLen / 3 * 4 - body_text_.size()) {
    return refuse(detail, "the age plugin wrote a stanza body longer than 1 MiB");
  }
  body_text_.append(line);
  if (line.size() == kColumns) return WC_OK;
  auto body = decode_base64(body_text_);
  secure_wipe(body_text_.data(), body_text_.size());
  body_text_.clear();
  in_body_ = false;
  if (!body) return refuse(detail, "the age plugin wrote a stanza body that is not canonical base64");
  PluginStanza &stanza = out->emplace_back();
  stanza.type = std::move(stanza_.type);
  stanza.args = std::move(stanza_.args);
  stanza.body = std::move(*body);
  stanza_.args.clear();
  return WC_OK;
}

std::optional<std::string> plugin_name_of_recipient(std::string_view text) {
  const auto decoded = decode_bech32(text);
  if (!decoded || !decoded->hrp.starts_with("age1")) return std::nullopt;
  std::string name = lower(std::string_view(decoded->hrp).substr(4));
  if (!valid_plugin_name(name)) return std::nullopt;
  return name;
}

std::optional<std::string> plugin_name_of_identity(std::string_view text) {
  constexpr std::string_view kPrefix = "AGE-PLUGIN-";
  auto decoded = decode_bech32(text);
  if (!decoded) return std::nullopt;
  secure_wipe(decoded->data.data(), decoded->data.size());
  const std::string_view hrp = decoded->hrp;
  if (!hrp.starts_with(kPrefix) || !hrp.ends_with('-') || hrp.size() <= kPrefix.size()) return std::nullopt;
  std::string name = lower(hrp.substr(kPrefix.size(), hrp.size() - kPrefix.size() - 1));
  if (!valid_plugin_name(name)) return std::nullopt;
  return name;
}

PluginSession::~PluginSession() { secure_wipe(opening_.data(), opening_.size()); }

wc_status PluginSession::feed(std::string_view bytes, std::string *reply, const char **detail) {
  // What a plugin writes after "done" is no part of the conversation.
  if (finished_) return WC_OK;
  // The stanzas completed before a malformed one are answered first, as
  // they would be had they come in a piece of their own.
  std::vector<PluginStanza> stanzas;
  const char *read_detail = nullptr;
  const wc_status read = reader_.feed(bytes, &stanzas, &read_detail);
  wc_status status = WC_OK;
  for (size_t i = 0; status == WC_OK && i < stanzas.size() && !finished_; ++i) {
    status = handle_common(stanzas[i], reply, detail);
  }
  if (status != WC_OK || finished_ || read == WC_OK) return status;
  *detail = read_detail;
  return read;
}

wc_status PluginSession::handle_common(const PluginStanza &stanza, std::string *reply, const char **detail) {
  if (stanza.type == "done") {
    finished_ = true;
    return finish(detail);
  }
  if (stanza.type == "error") {
    *reply += stanza_without_body("ok");
    return refuse(detail, "the age plugin failed: it answered with an error", WC_ERR_UNSUPPORTED);
  }
  if (stanza.type == "msg") {
    const std::string message(stanza.body.begin(), stanza.body.end());
    const bool shown =
        ui_.display_message != nullptr && ui_.display_message(ui_.context, name_.c_str(), message.c_str()) == 0;
    *reply += stanza_without_body(shown ? "ok" : "fail");
    return WC_OK;
  }
  if (stanza.type == "request-public" || stanza.type == "request-secret") return answer_request(stanza, reply);
  if (stanza.type == "confirm") return answer_confirm(stanza, reply, detail);
  const wc_status status = handle(stanza, reply, detail);
  if (status != WC_ERR_UNSUPPORTED) return status;
  *reply += stanza_without_body("unsupported");
  return WC_OK;
}

wc_status PluginSession::answer_request(const PluginStanza &stanza, std::string *reply) {
  const std::string prompt(stanza.body.begin(), stanza.body.end());
  std::array<char, kMaxRequestedValueLen> value{};
  size_t value_len = 0;
  const bool answered =
      ui_.request_value != nullptr &&
      ui_.request_value(ui_.context, name_.c_str(), prompt.c_str(), stanza.type == "request-secret" ? 1 : 0,
                        value.data(), value.size(), &value_len) == 0 &&
      value_len <= value.size();
  append_secret(reply, answered ? encode_plugin_stanza("ok", {}, bytes_of(std::string_view(value.data(), value_len)))
                                : stanza_without_body("fail"));
  secure_wipe(value.data(), value.size());
  return WC_OK;
}

wc_status PluginSession::answer_confirm(const PluginStanza &stanza, std::string *reply, const char **detail) {
  if (stanza.args.empty() || stanza.args.size() > 2) {
    return refuse(detail, "the age plugin wrote a confirm stanza without one or two choices");
  }
  std::vector<std::string> choices;
  for (const std::string &arg : stanza.args) {
    const auto choice = decode_base64(arg);
    if (!choice) return refuse(detail, "the age plugin wrote a confirm choice that is not canonical base64");
    choices.emplace_back(choice->begin(), choice->end());
  }
  const std::string prompt(stanza.body.begin(), stanza.body.end());
  int chose_yes = 0;
  const bool answered =
      ui_.confirm != nullptr && ui_.confirm(ui_.context, name_.c_str(), prompt.c_str(), choices[0].c_str(),
                                            choices.size() == 2 ? choices[1].c_str() : nullptr, &chose_yes) == 0;
  const std::string answer[] = {chose_yes != 0 ? "yes" : "no"};
  *reply += answered ? stanza_without_body("ok", answer) : stanza_without_body("fail");
  return WC_OK;
}

PluginRecipientSession::PluginRecipientSession(std::string name, const wc_age_plugin_ui &ui,
                                               std::span<const std::string> recipients,
                                               std::span<const std::string> identities, const FileKey &file_key)
    : PluginSession(std::move(name), ui) {
  for (const std::string &recipient : recipients) opening_ += stanza_without_body("add-recipient", {&recipient, 1});
  for (const std::string &identity : identities) {
    append_secret(&opening_, stanza_without_body("add-identity", {&identity, 1}));
  }
  append_secret(&opening_, encode_plugin_stanza("wrap-file-key", {}, file_key.bytes));
  opening_ += stanza_without_body("extension-labels");
  opening_ += stanza_without_body("done");
}

PluginRecipientSession::~PluginRecipientSession() = default;

wc_status PluginRecipientSession::handle(const PluginStanza &stanza, std::string *reply, const char **detail) {
  if (stanza.type == "recipient-stanza") {
    if (stanza.args.size() < 2) {
      return refuse(detail, "the age plugin wrote a recipient-stanza without a file index and a type");
    }
    if (!first_file(stanza.args[0])) {
      return refuse(detail, "the age plugin wrote a recipient-stanza for a file it was not given");
    }
    Stanza &out = stanzas_.emplace_back();
    out.type = stanza.args[1];
    out.args.assign(stanza.args.begin() + 2, stanza.args.end());
    out.body = stanza.body;
    *reply += stanza_without_body("ok");
    return WC_OK;
  }
  if (stanza.type == "labels") {
    if (labelled_) return refuse(detail, "the age plugin wrote its labels twice");
    labelled_ = true;
    *reply += stanza_without_body("ok");
    return WC_OK;
  }
  return WC_ERR_UNSUPPORTED;
}

wc_status PluginRecipientSession::finish(const char **detail) {
  if (stanzas_.empty()) return refuse(detail, "the age plugin wrapped the file key in no stanza");
  return WC_OK;
}

PluginIdentitySession::PluginIdentitySession(std::string name, const wc_age_plugin_ui &ui,
                                             std::span<const std::string> identities, const Header &header)
    : PluginSession(std::move(name), ui) {
  for (const std::string &identity : identities) {
    append_secret(&opening_, stanza_without_body("add-identity", {&identity, 1}));
  }
  for (const Stanza &stanza : header.stanzas) {
    std::vector<std::string> args = {"0", stanza.type};
    args.insert(args.end(), stanza.args.begin(), stanza.args.end());
    opening_ += encode_plugin_stanza("recipient-stanza", args, stanza.body);
  }
  opening_ += stanza_without_body("done");
}

PluginIdentitySession::~PluginIdentitySession() = default;

wc_status PluginIdentitySession::handle(const PluginStanza &stanza, std::string *reply, const char **detail) {
  if (stanza.type != "file-key") return WC_ERR_UNSUPPORTED;
  if (stanza.args.size() != 1 || !first_file(stanza.args[0])) {
    return refuse(detail, "the age plugin wrote a file-key stanza for a file it was not given");
  }
  if (has_file_key_) return refuse(detail, "the age plugin wrote a second file key");
  if (stanza.body.size() != kFileKeyLen) return refuse(detail, "the age plugin wrote a file key that is not 16 bytes");
  std::copy(stanza.body.begin(), stanza.body.end(), file_key_.bytes.begin());
  has_file_key_ = true;
  *reply += stanza_without_body("ok");
  return WC_OK;
}

wc_status PluginIdentitySession::finish(const char **detail) {
  if (!has_file_key_) return refuse(detail, "no age plugin identity matched a recipient", WC_ERR_NO_IDENTITY);
  return WC_OK;
}

}  // namespace warpcrypt::age
