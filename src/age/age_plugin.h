// The client side of age's plugin protocol (C2SP age-plugin.md) as pure
// functions of bytes: the stanza wire format both sides speak, and the two
// state machines, recipient-v1 (wrap a file key) and identity-v1 (unwrap
// one), fed what the plugin writes and answering what the client writes
// back. Running the plugin's program is age_plugin_process's business; the
// keys that name a plugin are keys/plugin_key.cpp's.
//
// Everything a plugin writes is hostile until proven otherwise: lines,
// stanza bodies and a session's whole output are bounded, every stanza is
// checked as strictly as a header's, and a plugin's words reach the user
// only through the caller's wc_age_plugin_ui.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "age/age_format.h"
#include "warpcrypt/age.h"

namespace warpcrypt::age {

// A plugin stanza: "-> type arg...", then the body in base64 lines of 64
// columns, the last one shorter (empty where the body fills whole lines).
// Its body may carry a file key or a typed secret, so it is wiped.
struct PluginStanza {
  std::string type;
  std::vector<std::string> args;
  std::vector<uint8_t> body;
  ~PluginStanza();
};

// The longest line, stanza body and whole output a plugin may write: far
// past any stanza age's plugins produce (an ML-KEM share is about 1.5 KiB),
// while a plugin that streams an endless line or message cannot make the
// client buffer more than this.
inline constexpr size_t kMaxPluginLineLen = 64 * 1024;
inline constexpr size_t kMaxPluginBodyLen = 1024 * 1024;
inline constexpr size_t kMaxPluginOutputLen = kMaxHeaderLen;

std::string encode_plugin_stanza(std::string_view type, std::span<const std::string> args,
                                 std::span<const uint8_t> body);

// Splits a byte stream into stanzas as it arrives.
class PluginStanzaReader {
 public:
  ~PluginStanzaReader();
  // Appends every stanza that `bytes` completes to *out, up to the first
  // malformed stanza or one past the limits above: WC_ERR_FORMAT (and
  // *detail) then.
  wc_status feed(std::string_view bytes, std::vector<PluginStanza> *out, const char **detail);

 private:
  wc_status take_line(std::string_view line, std::vector<PluginStanza> *out, const char **detail);
  std::string line_;  // the unfinished line
  bool in_body_ = false;
  PluginStanza stanza_;
  std::string body_text_;  // the body's base64 so far
  size_t total_ = 0;
};

// A plugin's name from its keys: "age1NAME1..." or "AGE-PLUGIN-NAME-1...",
// lower case; nullopt for a name that is empty or holds anything but
// letters, digits and "+-._", or "..": its program, age-plugin-NAME, is
// looked up on PATH, and a name must not reach anywhere else.
std::optional<std::string> plugin_name_of_recipient(std::string_view text);
std::optional<std::string> plugin_name_of_identity(std::string_view text);

// One conversation with a plugin. The client writes opening() first; then
// everything the plugin writes goes to feed(), and what *reply receives is
// written back, until finished(). Messages, questions and requests the
// plugin sends go to the ui, and where it has no function for one, the
// plugin is answered "fail"; commands the session does not know are
// answered "unsupported", as the protocol asks.
class PluginSession {
 public:
  PluginSession(std::string name, const wc_age_plugin_ui &ui) : name_(std::move(name)), ui_(ui) {}
  PluginSession(const PluginSession &) = delete;
  PluginSession &operator=(const PluginSession &) = delete;
  virtual ~PluginSession();

  const std::string &name() const { return name_; }
  // May hold the file key or an identity: the caller wipes its copies.
  const std::string &opening() const { return opening_; }
  // WC_OK while the conversation goes on and once it is done; a failure
  // (with *detail) ends it. *reply may hold a typed secret: the caller
  // wipes it once written.
  wc_status feed(std::string_view bytes, std::string *reply, const char **detail);
  bool finished() const { return finished_; }

 protected:
  // A stanza of this session's own commands: WC_ERR_UNSUPPORTED where it
  // is none of them.
  virtual wc_status handle(const PluginStanza &stanza, std::string *reply, const char **detail) = 0;
  // The plugin said "done": whether it gave what the session needed.
  virtual wc_status finish(const char **detail) = 0;
  std::string opening_;

 private:
  wc_status handle_common(const PluginStanza &stanza, std::string *reply, const char **detail);
  wc_status answer_request(const PluginStanza &stanza, std::string *reply);
  wc_status answer_confirm(const PluginStanza &stanza, std::string *reply, const char **detail);
  std::string name_;
  wc_age_plugin_ui ui_;
  PluginStanzaReader reader_;
  bool finished_ = false;
};

// recipient-v1: wraps `file_key` to every recipient ("age1NAME1...") and
// identity (whose recipient the plugin derives) of one plugin, collecting
// the header stanzas it returns.
class PluginRecipientSession final : public PluginSession {
 public:
  PluginRecipientSession(std::string name, const wc_age_plugin_ui &ui, std::span<const std::string> recipients,
                         std::span<const std::string> identities, const FileKey &file_key);
  ~PluginRecipientSession() override;
  std::vector<Stanza> &stanzas() { return stanzas_; }

 private:
  wc_status handle(const PluginStanza &stanza, std::string *reply, const char **detail) override;
  wc_status finish(const char **detail) override;
  std::vector<Stanza> stanzas_;
  bool labelled_ = false;
};

// identity-v1: offers every stanza of `header` to the plugin's identities;
// file_key() is the key it returned, which the caller must still check
// against the header's MAC.
class PluginIdentitySession final : public PluginSession {
 public:
  PluginIdentitySession(std::string name, const wc_age_plugin_ui &ui, std::span<const std::string> identities,
                        const Header &header);
  ~PluginIdentitySession() override;
  const FileKey &file_key() const { return file_key_; }

 private:
  wc_status handle(const PluginStanza &stanza, std::string *reply, const char **detail) override;
  wc_status finish(const char **detail) override;
  FileKey file_key_;
  bool has_file_key_ = false;
};

}  // namespace warpcrypt::age
