// The client side of age's plugin protocol (C2SP age-plugin.md): the
// stanza wire format, read back and attacked (truncation, endless lines,
// oversized bodies, bad encodings), the plugin names a key may carry, and
// the two state machines driven by a scripted plugin, byte for byte, with
// no process. Then the process itself with small shell plugins: no child
// left behind, and SIGPIPE from a plugin that stops reading kills nothing.
// Base64 expectations come from OpenSSL's encoder, not the library's. The
// real plugin round trips: tests/cli/test_age_plugin.py.
#include "age/age_plugin.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "age/age_keys.h"
#include "age/age_plugin_process.h"
#include "support/scratch_files.h"

namespace wctest {
namespace {

namespace age = warpcrypt::age;

// OpenSSL's base64 of `bytes`, without the padding age leaves off.
std::string openssl_base64(const std::vector<uint8_t> &bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int len =
      EVP_EncodeBlock(reinterpret_cast<unsigned char *>(out.data()), bytes.data(), static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(len));
  while (!out.empty() && out.back() == '=') out.pop_back();
  return out;
}

struct Read {
  wc_status status = WC_OK;
  std::vector<age::PluginStanza> stanzas;
  const char *detail = nullptr;
};

Read read_all(std::string_view bytes, size_t piece = SIZE_MAX) {
  age::PluginStanzaReader reader;
  Read out;
  for (size_t at = 0; at < bytes.size() && out.status == WC_OK; at += piece) {
    out.status = reader.feed(bytes.substr(at, piece), &out.stanzas, &out.detail);
  }
  return out;
}

// ---- wire format ----------------------------------------------------------

TEST(AgePluginWire, EncodesBodiesInLinesOf64WithAShorterLastLine) {
  EXPECT_EQ(age::encode_plugin_stanza("done", {}, {}), "-> done\n\n");
  const std::vector<std::string> args = {"a", "b"};
  const std::vector<uint8_t> hello = {'h', 'e', 'l', 'l', 'o'};
  EXPECT_EQ(age::encode_plugin_stanza("msg", args, hello), "-> msg a b\n" + openssl_base64(hello) + "\n");
  // 48 bytes fill one line exactly: an empty line ends the body.
  const std::vector<uint8_t> full(48, 0xa5);
  EXPECT_EQ(age::encode_plugin_stanza("x", {}, full), "-> x\n" + openssl_base64(full) + "\n\n");
  const std::vector<uint8_t> more(49, 0x5a);
  const std::string text = openssl_base64(more);
  EXPECT_EQ(age::encode_plugin_stanza("x", {}, more), "-> x\n" + text.substr(0, 64) + "\n" + text.substr(64) + "\n");
}

TEST(AgePluginWire, ReadsWhatItWritesInAnyPieces) {
  const std::vector<std::string> args = {"0", "X25519", "arg"};
  std::vector<uint8_t> body(200);
  for (size_t i = 0; i < body.size(); ++i) body[i] = static_cast<uint8_t>(i * 7);
  const std::string bytes =
      age::encode_plugin_stanza("recipient-stanza", args, body) + age::encode_plugin_stanza("done", {}, {});
  for (size_t piece : {size_t{1}, size_t{3}, size_t{64}, SIZE_MAX}) {
    const Read read = read_all(bytes, piece);
    ASSERT_EQ(read.status, WC_OK) << read.detail;
    ASSERT_EQ(read.stanzas.size(), 2u);
    EXPECT_EQ(read.stanzas[0].type, "recipient-stanza");
    EXPECT_EQ(read.stanzas[0].args, args);
    EXPECT_EQ(read.stanzas[0].body, body);
    EXPECT_EQ(read.stanzas[1].type, "done");
    EXPECT_TRUE(read.stanzas[1].body.empty());
  }
}

TEST(AgePluginWire, HoldsATruncatedStanzaBack) {
  for (const char *cut : {"-> msg", "-> msg\n",
                          "-> msg\n"
                          "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n"}) {
    const Read read = read_all(cut);
    EXPECT_EQ(read.status, WC_OK);
    EXPECT_TRUE(read.stanzas.empty()) << cut;
  }
}

TEST(AgePluginWire, RefusesMalformedStanzas) {
  const std::string long_line(65, 'A');
  const char *bad[] = {
      "hello\n",           // no stanza
      "->msg\n\n",         // no space after the arrow
      "-> \n\n",           // no type
      "-> msg  a\n\n",     // an empty argument
      "-> msg a \n\n",     // a trailing space
      "-> m\tsg\n\n",      // a control character
      "-> m\xc3\xa9\n\n",  // not ASCII
      "-> msg\nAB\n",      // non-zero padding bits: not canonical
      "-> msg\nAAA=\n",    // padding
      "-> msg\nA A\n",     // not base64
      "-> msg\nA\n",       // a length no base64 has
  };
  for (const char *text : bad) {
    const Read read = read_all(text);
    EXPECT_EQ(read.status, WC_ERR_FORMAT) << text;
    EXPECT_NE(read.detail, nullptr);
  }
  EXPECT_EQ(read_all("-> msg\n" + long_line + "\n").status, WC_ERR_FORMAT);
}

TEST(AgePluginWire, RefusesAnEndlessLineAnOversizedBodyAndAFlood) {
  // A line that never ends is refused once it passes the limit, whatever
  // the pieces it comes in.
  const std::string endless(age::kMaxPluginLineLen + 1, 'A');
  for (size_t piece : {size_t{4096}, SIZE_MAX}) {
    const Read read = read_all(endless, piece);
    EXPECT_EQ(read.status, WC_ERR_FORMAT);
    EXPECT_NE(std::string(read.detail).find("longer than 64 KiB"), std::string::npos);
  }
  const std::string at_limit(age::kMaxPluginLineLen, 'A');
  EXPECT_EQ(read_all(at_limit).status, WC_OK);
  // Full body lines that never end the body.
  std::string body = "-> msg\n";
  const std::string line = std::string(64, 'A') + "\n";
  while (body.size() < age::kMaxPluginBodyLen / 3 * 4 * 65 / 64 + 1000) body += line;
  const Read big = read_all(body, 65536);
  EXPECT_EQ(big.status, WC_ERR_FORMAT);
  EXPECT_NE(std::string(big.detail).find("longer than 1 MiB"), std::string::npos);
  // Many small stanzas add up to more than any answer needs.
  const std::string small = "-> msg\n\n";
  std::string flood;
  while (flood.size() <= age::kMaxPluginOutputLen) flood += small;
  const Read flooded = read_all(flood, 1 << 20);
  EXPECT_EQ(flooded.status, WC_ERR_FORMAT);
  EXPECT_NE(std::string(flooded.detail).find("16 MiB"), std::string::npos);
}

// ---- names ----------------------------------------------------------------

TEST(AgePluginNames, ComeFromTheHrpInLowerCase) {
  const std::vector<uint8_t> data(32, 7);
  EXPECT_EQ(age::plugin_name_of_recipient(age::encode_bech32("age1yubikey", data)), "yubikey");
  EXPECT_EQ(age::plugin_name_of_identity(age::encode_bech32("AGE-PLUGIN-YUBIKEY-", data)), "yubikey");
  EXPECT_EQ(age::plugin_name_of_recipient(age::encode_bech32("age1a+b-c.d_e", data)), "a+b-c.d_e");
  // An X25519 key's hrp is "age": no plugin.
  EXPECT_EQ(age::plugin_name_of_recipient(age::encode_bech32("age", data)), std::nullopt);
  EXPECT_EQ(age::plugin_name_of_identity(age::encode_bech32("AGE-SECRET-KEY-", data)), std::nullopt);
}

TEST(AgePluginNames, RefusesNamesThatCouldLeaveThePathLookup) {
  const std::vector<uint8_t> data(32, 7);
  for (const char *name : {"", "..", "a/b", "../x", "x..y", "a b", "a\\b", "~root", "$HOME"}) {
    const std::string upper = [&] {
      std::string s(name);
      for (char &c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      return s;
    }();
    EXPECT_EQ(age::plugin_name_of_recipient(age::encode_bech32(std::string("age1") + name, data)), std::nullopt)
        << name;
    EXPECT_EQ(age::plugin_name_of_identity(age::encode_bech32("AGE-PLUGIN-" + upper + "-", data)), std::nullopt)
        << name;
  }
  // Not Bech32 at all, or a broken checksum.
  EXPECT_EQ(age::plugin_name_of_recipient("age1yubikey1qqqq"), std::nullopt);
  EXPECT_EQ(age::plugin_name_of_identity("AGE-PLUGIN-YUBIKEY-1QQQQQQ"), std::nullopt);
}

TEST(AgePluginNames, KeysNameTheirPluginThroughTheKeyParsers) {
  const std::vector<uint8_t> data(32, 9);
  age::Recipient recipient;
  const char *detail = nullptr;
  const std::string text = age::encode_bech32("age1wctest", data);
  ASSERT_EQ(age::parse_recipient(text, &recipient, &detail), WC_OK);
  EXPECT_EQ(recipient.type, age::KeyType::plugin);
  EXPECT_EQ(recipient.plugin, "wctest");
  EXPECT_EQ(recipient.encoding, text);
  age::Identity identity;
  ASSERT_EQ(age::parse_identity(age::encode_bech32("AGE-PLUGIN-WCTEST-", data), &identity, &detail), WC_OK);
  EXPECT_EQ(identity.plugin, "wctest");
  EXPECT_EQ(age::parse_recipient(age::encode_bech32("age1..", data), &recipient, &detail), WC_ERR_FORMAT);
  EXPECT_NE(std::string(detail).find("plugin name"), std::string::npos);
}

// ---- state machines -------------------------------------------------------

std::string stanza(std::string_view type, std::vector<std::string> args = {}, std::vector<uint8_t> body = {}) {
  return age::encode_plugin_stanza(type, args, body);
}

std::vector<uint8_t> bytes(std::string_view text) { return {text.begin(), text.end()}; }

struct Conversation {
  wc_status status = WC_OK;
  std::string reply;
  const char *detail = nullptr;
};

Conversation feed(age::PluginSession &session, const std::string &bytes) {
  Conversation out;
  out.status = session.feed(bytes, &out.reply, &out.detail);
  return out;
}

struct RecordingUi {
  std::vector<std::string> seen;
  std::string answer = "the answer";
  static int message(void *context, const char *plugin, const char *text) {
    static_cast<RecordingUi *>(context)->seen.push_back(std::string(plugin) + ": " + text);
    return 0;
  }
  static int request(void *context, const char *, const char *prompt, int secret, char *value, size_t cap,
                     size_t *len) {
    auto *self = static_cast<RecordingUi *>(context);
    self->seen.push_back(std::string(secret ? "secret " : "public ") + prompt);
    if (self->answer.size() > cap) return 1;
    std::copy(self->answer.begin(), self->answer.end(), value);
    *len = self->answer.size();
    return 0;
  }
  static int confirm(void *context, const char *, const char *prompt, const char *yes, const char *no, int *chose_yes) {
    static_cast<RecordingUi *>(context)->seen.push_back(std::string(prompt) + " " + yes + "/" + (no ? no : "-"));
    *chose_yes = 1;
    return 0;
  }
  wc_age_plugin_ui ui() { return {this, message, request, confirm}; }
};

class AgePluginRecipientSession : public ::testing::Test {
 protected:
  AgePluginRecipientSession() {
    for (size_t i = 0; i < file_key.bytes.size(); ++i) file_key.bytes[i] = static_cast<uint8_t>(0xf0 + i);
  }
  age::FileKey file_key;
  std::vector<std::string> recipients = {"age1wctest1aaa", "age1wctest1bbb"};
  wc_age_plugin_ui no_ui{};
};

TEST_F(AgePluginRecipientSession, OpensWithTheRecipientsTheFileKeyAndDone) {
  age::PluginRecipientSession session("wctest", no_ui, recipients, {}, file_key);
  const std::vector<uint8_t> key(file_key.bytes.begin(), file_key.bytes.end());
  EXPECT_EQ(session.opening(),
            "-> add-recipient age1wctest1aaa\n\n-> add-recipient age1wctest1bbb\n\n"
            "-> wrap-file-key\n" +
                openssl_base64(key) + "\n-> extension-labels\n\n-> done\n\n");
}

TEST_F(AgePluginRecipientSession, CollectsStanzasAndAnswersEveryCommand) {
  age::PluginRecipientSession session("wctest", no_ui, recipients, {}, file_key);
  Conversation step = feed(session, stanza("recipient-stanza", {"0", "wctest", "share"}, bytes("wrapped")));
  ASSERT_EQ(step.status, WC_OK) << step.detail;
  EXPECT_EQ(step.reply, "-> ok\n\n");
  step = feed(session, stanza("labels", {"postquantum"}));
  EXPECT_EQ(step.reply, "-> ok\n\n");
  step = feed(session, stanza("frobnicate", {"x"}));
  EXPECT_EQ(step.reply, "-> unsupported\n\n");
  // Without a ui, every request is answered "fail".
  for (const char *request : {"msg", "request-public", "request-secret"}) {
    EXPECT_EQ(feed(session, stanza(request, {}, bytes("hi"))).reply, "-> fail\n\n") << request;
  }
  EXPECT_EQ(feed(session, stanza("confirm", {"eWVz"}, bytes("sure?"))).reply, "-> fail\n\n");
  EXPECT_FALSE(session.finished());
  step = feed(session, stanza("done"));
  ASSERT_EQ(step.status, WC_OK);
  EXPECT_TRUE(step.reply.empty());
  EXPECT_TRUE(session.finished());
  ASSERT_EQ(session.stanzas().size(), 1u);
  EXPECT_EQ(session.stanzas()[0].type, "wctest");
  EXPECT_EQ(session.stanzas()[0].args, std::vector<std::string>{"share"});
  EXPECT_EQ(session.stanzas()[0].body, bytes("wrapped"));
  // What comes after "done" is no part of the conversation.
  EXPECT_EQ(feed(session, "garbage").status, WC_OK);
}

TEST_F(AgePluginRecipientSession, AnswersWhatCameBeforeAMalformedStanzaAsInPieces) {
  // Found by age_plugin_fuzzer: one piece or two, the same replies.
  const std::string good = stanza("recipient-stanza", {"0", "wctest"});
  for (const bool split : {false, true}) {
    age::PluginRecipientSession session("wctest", no_ui, recipients, {}, file_key);
    std::string reply;
    const char *detail = nullptr;
    wc_status status = WC_OK;
    if (split) status = session.feed(good, &reply, &detail);
    if (status == WC_OK) status = session.feed((split ? "" : good) + "not a stanza\n", &reply, &detail);
    EXPECT_EQ(status, WC_ERR_FORMAT);
    EXPECT_STREQ(detail, "the age plugin wrote a line that starts no stanza");
    EXPECT_EQ(reply, "-> ok\n\n") << split;
  }
}

TEST_F(AgePluginRecipientSession, PassesRequestsToTheUi) {
  RecordingUi recording;
  age::PluginRecipientSession session("wctest", recording.ui(), recipients, {}, file_key);
  EXPECT_EQ(feed(session, stanza("msg", {}, bytes("touch the key"))).reply, "-> ok\n\n");
  EXPECT_EQ(feed(session, stanza("request-secret", {}, bytes("PIN:"))).reply,
            "-> ok\n" + openssl_base64(bytes(recording.answer)) + "\n");
  EXPECT_EQ(feed(session, stanza("request-public", {}, bytes("slot:"))).reply,
            "-> ok\n" + openssl_base64(bytes(recording.answer)) + "\n");
  // Choices are base64: "yes" and "no".
  EXPECT_EQ(
      feed(session, stanza("confirm", {openssl_base64(bytes("go")), openssl_base64(bytes("stop"))}, bytes("proceed?")))
          .reply,
      "-> ok yes\n\n");
  const std::vector<std::string> expected = {"wctest: touch the key",
                                             "secret PIN:", "public slot:", "proceed? go/stop"};
  EXPECT_EQ(recording.seen, expected);
  // An answer longer than the buffer the library offers is a failure.
  recording.answer.assign(5000, 'x');
  EXPECT_EQ(feed(session, stanza("request-secret", {}, bytes("PIN:"))).reply, "-> fail\n\n");
}

TEST_F(AgePluginRecipientSession, RefusesWhatBreaksTheProtocol) {
  struct Case {
    std::string bytes;
    wc_status status;
  };
  const Case cases[] = {
      {stanza("recipient-stanza", {"0"}), WC_ERR_FORMAT},             // no type
      {stanza("recipient-stanza", {"1", "wctest"}), WC_ERR_FORMAT},   // another file
      {stanza("recipient-stanza", {"00", "wctest"}), WC_ERR_FORMAT},  // 0 spelled otherwise
      {stanza("recipient-stanza", {"-0", "wctest"}), WC_ERR_FORMAT},
      {stanza("labels") + stanza("labels"), WC_ERR_FORMAT},              // labels twice
      {stanza("done"), WC_ERR_FORMAT},                                   // no stanza at all
      {stanza("confirm"), WC_ERR_FORMAT},                                // no choice
      {stanza("confirm", {"a", "b", "c"}), WC_ERR_FORMAT},               // three
      {stanza("confirm", {"!!"}), WC_ERR_FORMAT},                        // not base64
      {stanza("error", {"internal"}, bytes("no")), WC_ERR_UNSUPPORTED},  // the plugin gives up
  };
  for (const Case &c : cases) {
    age::PluginRecipientSession session("wctest", no_ui, recipients, {}, file_key);
    const Conversation step = feed(session, c.bytes);
    EXPECT_EQ(step.status, c.status) << c.bytes;
    EXPECT_NE(step.detail, nullptr) << c.bytes;
  }
  // An error is acknowledged before the session ends.
  age::PluginRecipientSession session("wctest", no_ui, recipients, {}, file_key);
  EXPECT_EQ(feed(session, stanza("error", {"internal"})).reply, "-> ok\n\n");
}

class AgePluginIdentitySession : public ::testing::Test {
 protected:
  AgePluginIdentitySession() {
    header.stanzas.resize(2);
    header.stanzas[0].type = "X25519";
    header.stanzas[0].args = {"share"};
    header.stanzas[0].body = bytes("body0");
    header.stanzas[1].type = "wctest";
    header.stanzas[1].args = {"a", "b"};
    header.stanzas[1].body = {};
  }
  age::Header header;
  std::vector<std::string> identities = {"AGE-PLUGIN-WCTEST-1XYZ"};
  wc_age_plugin_ui no_ui{};
  std::vector<uint8_t> key = bytes("0123456789abcdef");
};

TEST_F(AgePluginIdentitySession, OffersEveryStanzaOfTheHeader) {
  age::PluginIdentitySession session("wctest", no_ui, identities, header);
  EXPECT_EQ(session.opening(),
            "-> add-identity AGE-PLUGIN-WCTEST-1XYZ\n\n-> recipient-stanza 0 "
            "X25519 share\n" +
                openssl_base64(bytes("body0")) + "\n-> recipient-stanza 0 wctest a b\n\n-> done\n\n");
}

TEST_F(AgePluginIdentitySession, TakesOneFileKeyOf16Bytes) {
  age::PluginIdentitySession session("wctest", no_ui, identities, header);
  const Conversation step = feed(session, stanza("file-key", {"0"}, key) + stanza("done"));
  ASSERT_EQ(step.status, WC_OK) << step.detail;
  EXPECT_EQ(step.reply, "-> ok\n\n");
  EXPECT_TRUE(session.finished());
  EXPECT_TRUE(std::equal(key.begin(), key.end(), session.file_key().bytes.begin()));
}

TEST_F(AgePluginIdentitySession, RefusesBadFileKeysAndNoneIsNoIdentity) {
  const std::pair<std::string, wc_status> cases[] = {
      {stanza("file-key", {"0"}, bytes("short")), WC_ERR_FORMAT},
      {stanza("file-key", {"0"}, bytes("0123456789abcdefX")), WC_ERR_FORMAT},
      {stanza("file-key", {"1"}, key), WC_ERR_FORMAT},
      {stanza("file-key", {}, key), WC_ERR_FORMAT},
      {stanza("file-key", {"0"}, key) + stanza("file-key", {"0"}, key), WC_ERR_FORMAT},
      {stanza("done"), WC_ERR_NO_IDENTITY},
      {stanza("error", {"stanza", "0", "0"}), WC_ERR_UNSUPPORTED},
  };
  for (const auto &[text, status] : cases) {
    age::PluginIdentitySession session("wctest", no_ui, identities, header);
    EXPECT_EQ(feed(session, text).status, status) << text;
  }
}

// ---- the process ----------------------------------------------------------

// A directory on PATH holding age-plugin-<name> scripts, PATH put back after.
class AgePluginProcess : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_path_ = std::getenv("PATH") ? std::getenv("PATH") : "";
    setenv("PATH", ((dir_ / "").string() + ":/usr/bin:/bin").c_str(), 1);
  }
  void TearDown() override { setenv("PATH", saved_path_.c_str(), 1); }
  void plugin(const std::string &name, const std::string &script) {
    const std::string path = (dir_ / ("age-plugin-" + name)).string();
    std::ofstream(path) << "#!/bin/sh\n" << script;
    chmod(path.c_str(), 0755);
  }
  ScratchDir dir_;
  std::string saved_path_;
  age::FileKey file_key;
  wc_age_plugin_ui no_ui{};
};

bool no_child_left() { return waitpid(-1, nullptr, WNOHANG) == -1 && errno == ECHILD; }

TEST_F(AgePluginProcess, RunsAPluginFromPathAndReapsIt) {
  // Reads up to the client's done, then answers with one stanza and done.
  plugin("good",
         "while IFS= read -r line; do [ \"$line\" = '-> done' ] && break; done\n"
         "printf -- '-> recipient-stanza 0 good\\n\\n-> done\\n\\n'\n");
  const std::vector<std::string> recipients = {"age1good1xyz"};
  age::PluginRecipientSession session("good", no_ui, recipients, {}, file_key);
  const char *detail = nullptr;
  ASSERT_EQ(age::run_plugin(session, "recipient-v1", &detail), WC_OK) << detail;
  ASSERT_EQ(session.stanzas().size(), 1u);
  EXPECT_EQ(session.stanzas()[0].type, "good");
  EXPECT_TRUE(no_child_left());
}

TEST_F(AgePluginProcess, StartsThePluginWithNoSignalBlocked) {
  // The plugin names its blocked-signal mask (from /proc) as its stanza type.
  plugin("mask",
         "while IFS= read -r line; do [ \"$line\" = '-> done' ] && break; done\n"
         "blocked=$(awk '/^SigBlk/ {print $2}' /proc/$$/status)\n"
         "printf -- '-> recipient-stanza 0 mask%s\\n\\n-> done\\n\\n' \"$blocked\"\n");
  sigset_t held;
  sigset_t before;
  sigemptyset(&held);
  sigaddset(&held, SIGUSR1);
  sigaddset(&held, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &held, &before);
  const std::vector<std::string> recipients = {"age1mask1xyz"};
  age::PluginRecipientSession session("mask", no_ui, recipients, {}, file_key);
  const char *detail = nullptr;
  const wc_status status = age::run_plugin(session, "recipient-v1", &detail);
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  ASSERT_EQ(status, WC_OK) << detail;
  ASSERT_EQ(session.stanzas().size(), 1u);
  EXPECT_EQ(session.stanzas()[0].type, "mask0000000000000000");
}

TEST_F(AgePluginProcess, AMissingOrCrashingPluginFailsAndLeavesNoChild) {
  plugin("crash", "exit 3\n");
  const std::vector<std::string> recipients = {"age1x1xyz"};
  for (const char *name : {"crash", "absent"}) {
    age::PluginRecipientSession session(name, no_ui, recipients, {}, file_key);
    const char *detail = nullptr;
    EXPECT_NE(age::run_plugin(session, "recipient-v1", &detail), WC_OK) << name;
    EXPECT_NE(detail, nullptr);
    EXPECT_TRUE(no_child_left()) << name;
  }
}

TEST_F(AgePluginProcess, APluginThatStopsReadingCannotKillUsWithSigpipe) {
  // More than a pipe holds, to a plugin that exits at once: our writes meet
  // a closed pipe. SIGPIPE left at its default would end this test binary.
  plugin("deaf", "exec 0<&-\nexit 0\n");
  struct sigaction before {};
  sigaction(SIGPIPE, nullptr, &before);
  ASSERT_EQ(before.sa_handler, SIG_DFL);
  std::vector<std::string> recipients(4000, "age1deaf1" + std::string(80, 'q'));
  age::PluginRecipientSession session("deaf", no_ui, recipients, {}, file_key);
  const char *detail = nullptr;
  EXPECT_EQ(age::run_plugin(session, "recipient-v1", &detail), WC_ERR_UNSUPPORTED);
  EXPECT_STREQ(detail, "the age plugin exited before it finished");
  // Nothing of the process's signal state changed, and no SIGPIPE waits.
  struct sigaction after {};
  sigaction(SIGPIPE, nullptr, &after);
  EXPECT_EQ(after.sa_handler, SIG_DFL);
  sigset_t mask;
  sigset_t pending;
  pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  sigpending(&pending);
  EXPECT_EQ(sigismember(&mask, SIGPIPE), 0);
  EXPECT_EQ(sigismember(&pending, SIGPIPE), 0);
  EXPECT_TRUE(no_child_left());
}

TEST_F(AgePluginProcess, APluginSeesOnlyTheEnvironmentItNeeds) {
  // The plugin names, as its stanza's arguments, which of these it sees.
  plugin("envtest",
         "while IFS= read -r line; do [ \"$line\" = '-> done' ] && break; done\n"
         "seen=''\n"
         "for name in PATH HOME LC_ALL ENVTEST_SETTING WARPCRYPT_SECRET_TEST OTHERPLUGIN_SETTING; do\n"
         "  printenv \"$name\" >/dev/null && seen=\"$seen $name\"\n"
         "done\n"
         "printf -- '-> recipient-stanza 0 env%s\\n\\n-> done\\n\\n' \"$seen\"\n");
  const char *saved_home = std::getenv("HOME");
  const std::string home = saved_home != nullptr ? saved_home : "";
  setenv("HOME", "/home/someone", 1);
  setenv("LC_ALL", "C.UTF-8", 1);
  setenv("ENVTEST_SETTING", "the plugin's own", 1);
  setenv("WARPCRYPT_SECRET_TEST", "1", 1);
  setenv("OTHERPLUGIN_SETTING", "another plugin's", 1);
  const std::vector<std::string> recipients = {"age1envtest1xyz"};
  age::PluginRecipientSession session("envtest", no_ui, recipients, {}, file_key);
  const char *detail = nullptr;
  const wc_status status = age::run_plugin(session, "recipient-v1", &detail);
  for (const char *name : {"LC_ALL", "ENVTEST_SETTING", "WARPCRYPT_SECRET_TEST", "OTHERPLUGIN_SETTING"}) unsetenv(name);
  setenv("HOME", home.c_str(), 1);
  ASSERT_EQ(status, WC_OK) << detail;
  ASSERT_EQ(session.stanzas().size(), 1u);
  EXPECT_EQ(session.stanzas()[0].type, "env");
  EXPECT_EQ(session.stanzas()[0].args, (std::vector<std::string>{"PATH", "HOME", "LC_ALL", "ENVTEST_SETTING"}));
}

}  // namespace
}  // namespace wctest
