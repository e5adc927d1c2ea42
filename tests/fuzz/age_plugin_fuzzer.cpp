// Fuzzes the client side of age's plugin protocol with hostile plugin
// output, no process involved: the input's first byte picks the session
// (recipient-v1 or identity-v1), whether a user interface answers the
// plugin's requests, and the sizes of the pieces the rest arrives in.
// Besides the sanitizers' checks: a failure names its cause; the same bytes
// in other pieces give the same outcome and the same replies; every reply
// is a stanza the client may send ("ok", "fail", "unsupported"); and the
// stanzas a plugin wraps the file key in make a header that reads back as
// the same stanzas, so no plugin can make warpcrypt write a file it would
// not read.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "age/age_format.h"
#include "age/age_plugin.h"
#include "fuzz_support.h"

namespace {

namespace age = warpcrypt::age;
using warpcrypt::kHostCrypto;
using warpcrypt::fuzz::require;

int show(void *, const char *, const char *) { return 0; }
int answer(void *, const char *, const char *, int, char *value, size_t cap, size_t *len) {
  constexpr std::string_view kValue = "fuzz-answer";
  if (cap < kValue.size()) return 1;
  kValue.copy(value, kValue.size());
  *len = kValue.size();
  return 0;
}
int agree(void *, const char *, const char *, const char *, const char *, int *chose_yes) {
  *chose_yes = 1;
  return 0;
}

struct Outcome {
  wc_status status = WC_OK;
  bool finished = false;
  std::string replies;
  std::vector<age::Stanza> stanzas;
};

// Feeds `output` in pieces of `piece` bytes until the session ends.
Outcome converse(bool recipient_side, const wc_age_plugin_ui &ui, std::string_view output, size_t piece) {
  age::FileKey file_key;
  age::Header header;
  header.stanzas.resize(1);
  header.stanzas[0].type = "wctest";
  header.stanzas[0].args = {"arg"};
  const std::vector<std::string> keys = {"age1wctest1key"};
  age::PluginRecipientSession wrapping("wctest", ui, keys, {}, file_key);
  age::PluginIdentitySession unwrapping("wctest", ui, keys, header);
  age::PluginSession &session = recipient_side ? static_cast<age::PluginSession &>(wrapping) : unwrapping;
  Outcome out;
  for (size_t at = 0; at < output.size() && out.status == WC_OK && !session.finished(); at += piece) {
    const char *detail = nullptr;
    out.status = session.feed(output.substr(at, piece), &out.replies, &detail);
    require(out.status == WC_OK || detail != nullptr, "a session failed without a detail");
  }
  out.finished = session.finished();
  if (recipient_side && out.finished && out.status == WC_OK) out.stanzas = wrapping.stanzas();
  return out;
}

void check_replies(const std::string &replies) {
  age::PluginStanzaReader reader;
  std::vector<age::PluginStanza> stanzas;
  const char *detail = nullptr;
  require(reader.feed(replies, &stanzas, &detail) == WC_OK, "a reply is no stanza");
  for (const age::PluginStanza &stanza : stanzas) {
    require(stanza.type == "ok" || stanza.type == "fail" || stanza.type == "unsupported",
            "a reply is no answer the protocol has");
  }
}

void check_header_round_trip(const std::vector<age::Stanza> &stanzas) {
  require(!stanzas.empty(), "a finished wrap has no stanza");
  age::FileKey file_key;
  std::string encoded;
  const char *detail = nullptr;
  if (age::encode_header(kHostCrypto, stanzas, file_key, &encoded, &detail) != WC_OK) return;  // too long
  age::Header header;
  bool need_more = false;
  require(age::parse_header(encoded, &header, &need_more, &detail) == WC_OK,
          "a plugin's stanzas make a header that does not read back");
  require(header.stanzas.size() == stanzas.size(), "the header reads back other stanzas");
  for (size_t i = 0; i < stanzas.size(); ++i) {
    require(header.stanzas[i].type == stanzas[i].type && header.stanzas[i].args == stanzas[i].args &&
                header.stanzas[i].body == stanzas[i].body,
            "the header reads back other stanzas");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  const bool recipient_side = (data[0] & 1) != 0;
  const wc_age_plugin_ui ui =
      (data[0] & 2) != 0 ? wc_age_plugin_ui{nullptr, show, answer, agree} : wc_age_plugin_ui{};
  const size_t piece = data[0] / 4 + 1;
  const std::string_view output(reinterpret_cast<const char *>(data + 1), size - 1);
  const Outcome whole = converse(recipient_side, ui, output, output.size() + 1);
  const Outcome pieces = converse(recipient_side, ui, output, piece);
  require(whole.status == pieces.status && whole.finished == pieces.finished && whole.replies == pieces.replies,
          "the same output in other pieces has another outcome");
  check_replies(whole.replies);
  if (!whole.stanzas.empty() || (recipient_side && whole.finished && whole.status == WC_OK)) {
    check_header_round_trip(whole.stanzas);
  }
  return 0;
}
