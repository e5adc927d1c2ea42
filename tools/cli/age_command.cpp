// `warpcrypt age` and `warpcrypt age-keygen`: age v1 files with the flags
// of `age` and `age-keygen`, through the library's wc_age_* calls, which
// run the payload on the engine's workers.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "age_passphrase.h"
#include "age_plugin_ui.h"
#include "arguments.h"
#include "cli_error.h"
#include "command_line.h"
#include "commands.h"
#include "file_io.h"
#include "json_report.h"
#include "key_setup.h"
#include "progress.h"
#include "ssh_key_prompt.h"
#include "terminal.h"

namespace warpcrypt::cli {
namespace {

// An -i PATH or a -j NAME, kept in their order as age keeps them.
struct IdentityFlag {
  bool plugin = false;  // -j
  std::string value;
};

struct AgeOptions {
  bool decrypt = false;
  bool encrypt = false;  // -e given: age then encrypts to -i's and -j's identities
  bool armor = false;
  bool passphrase = false;
  bool version = false;
  std::vector<std::string> recipients;
  std::vector<std::string> recipient_files;
  std::vector<IdentityFlag> identities;
  std::optional<SecretText> pass_source;
  unsigned work_factor = WC_AGE_DEFAULT_WORK_FACTOR;
  unsigned max_work_factor = WC_AGE_DEFAULT_MAX_WORK_FACTOR;
  std::optional<uint64_t> offset;
  std::optional<uint64_t> length;
  std::optional<std::string> in_path;
  std::optional<std::string> out_path;
  wc_backend backend = WC_BACKEND_AUTO;
  unsigned threads = 0;
  EngineFlags engine;  // --window, --streams and --devices
  bool verbose = false;
  bool quiet = false;
  bool progress = false;
  bool json = false;
};

struct KeygenOptions {
  bool convert = false;       // -y: print the recipients of an identity file
  bool post_quantum = false;  // -pq: a hybrid ML-KEM-768 + X25519 key
  std::optional<std::string> in_path;
  std::optional<std::string> out_path;
};

// A key file's text in a buffer that is wiped when it goes.
struct KeyText {
  std::string text;
  ~KeyText() { wc_memzero(text.data(), text.size()); }
};

// Key files are small; a larger one is a mistake, not a key file.
constexpr size_t kMaxKeyFile = size_t{1} << 20;

void read_key_file(const std::optional<std::string> &path, KeyText *out) {
  InputFile file(path);
  out->text.resize(kMaxKeyFile + 1);
  out->text.resize(file.read_up_to(reinterpret_cast<uint8_t *>(out->text.data()), out->text.size()));
  if (out->text.size() > kMaxKeyFile) throw CliError(file.display_name() + ": too large for a key file");
}

// The passphrase from -pass, or asked on the terminal as age asks it.
void read_age_passphrase(const AgeOptions &o, Passphrase *out) {
  if (!o.pass_source) {
    if (o.decrypt) {
      ask_passphrase("Enter passphrase:", false, "use -pass (pass:, env:, file:, fd:) or -j batchpass", out);
    } else {
      ask_new_age_passphrase(out);
    }
    return;
  }
  read_passphrase(o.pass_source->value, out);
  if (out->empty()) throw CliError("refusing an empty passphrase: anyone could decrypt the file");
}

void add_passphrase_recipient(wc_age_recipients *recipients, const Passphrase &passphrase, unsigned work_factor) {
  const auto bytes = passphrase.bytes();
  if (wc_age_recipients_add_passphrase(recipients, bytes.data(), bytes.size(), work_factor) != WC_OK) {
    throw CliError("the scrypt work factor must be 1 to " + std::to_string(WC_AGE_MAX_WORK_FACTOR));
  }
}

void add_passphrase_identity(wc_age_identities *identities, const Passphrase &passphrase, unsigned max_work_factor) {
  const auto bytes = passphrase.bytes();
  if (wc_age_identities_add_passphrase(identities, bytes.data(), bytes.size(), max_work_factor) != WC_OK) {
    throw CliError("--max-work-factor must be 1 to " + std::to_string(WC_AGE_MAX_WORK_FACTOR));
  }
}

// Whether `text` is an age file, binary or armored, as age tells an
// identity file encrypted with `age -p` from the others: by its first 14
// bytes.
bool is_age_file(std::string_view text) {
  return text.starts_with("age-encryption") || text.starts_with("-----BEGIN AGE");
}

// Whether the stanzas of the age file `text` are one passphrase's, read
// from its header as age-inspect reads it (through a memory file: the
// library inspects descriptors), so that no passphrase is asked for an
// identity file encrypted to keys.
bool encrypted_to_passphrase(const std::string &path, const KeyText &text) {
  const Descriptor memory(memfd_create("warpcrypt-identity-file", MFD_CLOEXEC));
  if (memory.get() < 0) throw_system_error("cannot inspect", path);
  write_all(memory.get(), reinterpret_cast<const uint8_t *>(text.text.data()), text.text.size(), path);
  if (lseek(memory.get(), 0, SEEK_SET) != 0) throw_system_error("cannot inspect", path);
  wc_job job;
  wc_job_init(&job);
  wc_age_info info{};
  if (const wc_status status = wc_age_inspect_fd(memory.get(), &info, &job); status != WC_OK) {
    throw CliError(path + ": malformed encrypted identity file: " + job.message, wc_status_kind_of(status));
  }
  const bool scrypt = info.stanza_count == 1 && std::string_view(info.stanza_types[0]) == "scrypt";
  wc_age_info_release(&info);
  return scrypt;
}

// An identity file encrypted with a passphrase (`age -p`, binary or
// armored), decrypted in memory after asking for it as age asks
// ("Enter passphrase for identity file ..."). What it holds replaces *text,
// and is age identities a line, as age reads them there: an SSH key or
// another encrypted file inside is refused.
void decrypt_identity_file(const std::string &path, unsigned max_work_factor, KeyText *text) {
  if (!encrypted_to_passphrase(path, *text)) {
    throw CliError(path + ": the identity file is encrypted with age but not with a passphrase",
                   wc_status_kind_of(WC_ERR_NO_IDENTITY));
  }
  Passphrase passphrase;
  ask_passphrase("Enter passphrase for identity file \"" + path + "\":", false,
                 "decrypt the identity file (age -d) into a file of its own", &passphrase);
  wc_age_identities *raw = nullptr;
  if (wc_age_identities_new(&raw) != WC_OK) throw CliError("out of memory");
  const std::unique_ptr<wc_age_identities, decltype(&wc_age_identities_free)> identities(raw, wc_age_identities_free);
  add_passphrase_identity(raw, passphrase, max_work_factor);
  KeyText plain;
  plain.text.resize(text->text.size());
  size_t len = 0;
  wc_job job;
  wc_job_init(&job);
  const wc_status status =
      wc_age_decrypt_buffer(nullptr, raw, 0, UINT64_MAX, &job, reinterpret_cast<uint8_t *>(plain.text.data()),
                            plain.text.size(), &len, reinterpret_cast<const uint8_t *>(text->text.data()),
                            text->text.size());
  if (status != WC_OK) {
    throw CliError(path + ": cannot decrypt the identity file: " + job.message, wc_status_kind_of(status));
  }
  plain.text.resize(len);
  if (plain.text.starts_with("-----BEGIN") || is_age_file(plain.text)) {
    throw CliError(path + ": the encrypted identity file must hold age identities, one a line (as age reads it), "
                          "not an SSH key or another encrypted file");
  }
  text->text.swap(plain.text);
}

// A PEM SSH key encrypted as `ssh-keygen -m PEM` encrypts it holds no
// public key in clear; age reads it from KEY.pub, and so it is appended
// for the library, which asks for the passphrase only when a stanza names
// that key. Without KEY.pub the key cannot be told from others before
// its passphrase is asked, so it is refused naming the file, as age does.
void append_public_key_file(const std::string &path, KeyText *text) {
  const std::string public_path = path + ".pub";
  if (path == "-" || text->text.find("\nProc-Type: 4,ENCRYPTED") == std::string::npos) return;
  if (access(public_path.c_str(), F_OK) != 0) {
    throw CliError(path + ": a passphrase-protected PEM private key, whose public key age reads from " +
                   public_path + ", which is missing: put it beside the key, or rewrite the key in OpenSSH's " +
                   "format (ssh-keygen -p -f " + path + ")");
  }
  KeyText public_key;
  read_key_file(public_path, &public_key);
  text->text += "\n" + public_key.text;
}

// An -i file's identities as text for the library: decrypted where the
// file is an encrypted identity file, with KEY.pub where it is an
// encrypted PEM key.
void read_identity_file(const std::string &path, unsigned max_work_factor, KeyText *text) {
  read_key_file(path, text);
  if (is_age_file(text->text)) {
    decrypt_identity_file(path, max_work_factor, text);
  } else if (text->text.starts_with("-----BEGIN")) {
    append_public_key_file(path, text);
  }
}

// age 1.3's `-j batchpass` is a plugin, age-plugin-batchpass, that turns
// the passphrase in its environment into an scrypt stanza; warpcrypt does
// the same itself, so that it needs no plugin for it.
bool is_batchpass(const IdentityFlag &flag) { return flag.plugin && flag.value == "batchpass"; }

// The identity `age -j NAME` stands for, a plugin's default one: Bech32 of
// "AGE-PLUGIN-NAME-" and no data, as age's plugin.EncodeIdentity(name, nil)
// spells it. The library then checks the name as it checks any plugin key's.
std::string plugin_identity_without_data(const std::string &name) {
  constexpr char kNameLetters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-._";
  if (name.empty() || name.find_first_not_of(kNameLetters) != std::string::npos) {
    throw CliError("-j " + name + ": invalid plugin name (letters, digits and +-._)");
  }
  std::string prefix = "age-plugin-" + name + "-";
  for (char &c : prefix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // BIP 173's checksum, over the prefix (lower case) and six zeros.
  constexpr uint32_t kGenerator[] = {0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3};
  uint32_t checksum = 1;
  auto add = [&](uint32_t value) {
    const uint32_t top = checksum >> 25;
    checksum = (checksum & 0x1ffffff) << 5 ^ value;
    for (int i = 0; i < 5; ++i) checksum ^= (top >> i & 1) != 0 ? kGenerator[i] : 0;
  };
  for (char c : prefix) add(static_cast<unsigned char>(c) >> 5);
  add(0);
  for (char c : prefix) add(static_cast<unsigned char>(c) & 31);
  for (int i = 0; i < 6; ++i) add(0);
  checksum ^= 1;
  constexpr char kCharset[] = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";
  std::string text = prefix + "1";
  for (int i = 0; i < 6; ++i) text += kCharset[checksum >> (5 * (5 - i)) & 31];
  for (char &c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

// Adds keys with `add`, naming `where` they came from when it refuses them.
template <typename Keys, typename Add>
void add_keys(Keys *keys, const std::string &text, const std::string &where, Add add) {
  const char *detail = nullptr;
  const wc_status status = add(keys, text.c_str(), &detail);
  if (status != WC_OK) throw CliError(where + ": " + (detail != nullptr ? detail : wc_status_string(status)));
}

// The key type of an SSH public key line whose first word is the type its
// key blob names ("ecdsa-sha2-nistp256 AAAA..."), as age's sshKeyType reads
// it; empty for any other line.
std::string ssh_key_type(std::string_view line) {
  const size_t type_end = line.find(' ');
  if (type_end == std::string_view::npos) return "";
  std::string_view blob_text = line.substr(type_end + 1);
  blob_text = blob_text.substr(0, blob_text.find(' '));
  wc_base64 *coder = nullptr;
  if (wc_base64_new(&coder, WC_DECRYPT, 1) != WC_OK) throw CliError("out of memory");
  const std::unique_ptr<wc_base64, decltype(&wc_base64_free)> owned(coder, wc_base64_free);
  std::vector<uint8_t> blob(wc_base64_update_bound(coder, blob_text.size()) + wc_base64_final_bound());
  size_t decoded = 0;
  size_t last = 0;
  if (wc_base64_update(coder, blob.data(), blob.size(), &decoded, reinterpret_cast<const uint8_t *>(blob_text.data()),
                       blob_text.size()) != WC_OK ||
      wc_base64_final(coder, blob.data() + decoded, blob.size() - decoded, &last) != WC_OK) {
    return "";
  }
  decoded += last;
  if (decoded < 4) return "";
  const size_t type_len = size_t{blob[0]} << 24 | size_t{blob[1]} << 16 | size_t{blob[2]} << 8 | blob[3];
  if (type_len > decoded - 4) return "";
  const std::string_view type = line.substr(0, type_end);
  return std::string_view(reinterpret_cast<const char *>(blob.data()) + 4, type_len) == type ? std::string(type) : "";
}

// A recipients file, a line at a time as age reads one: an SSH key that
// is no age recipient (ECDSA, DSA, sk-, a certificate, a short RSA key) is
// passed over with a warning, as age passes it over, so that an
// authorized_keys file serves as it is; any other line that is no
// recipient fails, and so does a file that gives none.
void add_recipients_file(wc_age_recipients *recipients, const std::string &path) {
  KeyText text;
  read_key_file(path, &text);
  const size_t before = wc_age_recipients_count(recipients);
  std::string_view rest = text.text;
  for (size_t number = 1; !rest.empty(); ++number) {
    const size_t end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (line.empty() || line.starts_with('#')) continue;
    KeyText key{std::string(line)};
    const char *detail = nullptr;
    const wc_status status = wc_age_recipients_add(recipients, key.text.c_str(), &detail);
    if (status == WC_OK) continue;
    const std::string type = ssh_key_type(line);
    if (type.empty()) {
      throw CliError(path + ": line " + std::to_string(number) + ": " +
                     (detail != nullptr ? detail : wc_status_string(status)));
    }
    std::fprintf(stderr, "warpcrypt: warning: recipients file \"%s\": ignoring unsupported SSH key of type \"%s\" at "
                 "line %zu\n", path.c_str(), type.c_str(), number);
  }
  if (wc_age_recipients_count(recipients) == before) throw CliError(path + ": the recipients file holds no recipient");
}

// With -e, the recipients of the identities of -i and -j, as age encrypts
// to them: each identity's own recipient, which the library derives (an SSH
// key file's public key is in clear, so no passphrase is asked). A type
// that has none, such as a plugin's, is refused in the library's words.
void add_identity_recipients(wc_age_recipients *recipients, const std::vector<IdentityFlag> &flags,
                             unsigned max_work_factor) {
  wc_age_identities *raw = nullptr;
  if (wc_age_identities_new(&raw) != WC_OK) throw CliError("out of memory");
  const std::unique_ptr<wc_age_identities, decltype(&wc_age_identities_free)> identities(raw, wc_age_identities_free);
  for (const IdentityFlag &flag : flags) {
    const size_t first = wc_age_identities_count(raw);
    const std::string where = flag.plugin ? "-j " + flag.value : flag.value;
    if (flag.plugin) {
      add_keys(raw, plugin_identity_without_data(flag.value), where, wc_age_identities_add);
    } else {
      KeyText text;
      read_identity_file(flag.value, max_work_factor, &text);
      add_keys(raw, text.text, where, wc_age_identities_add);
    }
    for (size_t i = first; i < wc_age_identities_count(raw); ++i) {
      char recipient[WC_AGE_KEY_MAX_LEN];
      const char *detail = nullptr;
      const wc_status status = wc_age_identity_recipient(raw, i, recipient, sizeof recipient, &detail);
      if (status != WC_OK) throw CliError(where + ": " + (detail != nullptr ? detail : wc_status_string(status)));
      add_keys(recipients, std::string(recipient), where, wc_age_recipients_add);
    }
  }
}

// A value given twice (`what`: "recipient", "recipients file", "identity
// file") is warned of once, as age 1.3 warns: it is harmless, but often a
// slip for another key that was meant.
void warn_of_duplicates(const std::vector<std::string> &values, const char *what) {
  std::set<std::string> seen;
  std::set<std::string> warned;
  for (const std::string &value : values) {
    if (!seen.insert(value).second && warned.insert(value).second) {
      std::fprintf(stderr, "warpcrypt: warning: duplicate %s \"%s\"\n", what, value.c_str());
    }
  }
}

void warn_of_duplicates(const AgeOptions &o) {
  warn_of_duplicates(o.recipients, "recipient");
  warn_of_duplicates(o.recipient_files, "recipients file");
  std::vector<std::string> identity_files;
  for (const IdentityFlag &flag : o.identities) {
    if (!flag.plugin) identity_files.push_back(flag.value);
  }
  warn_of_duplicates(identity_files, "identity file");
}

// The library's sentence for a failed job, exiting by its kind.
[[noreturn]] void fail(const AgeOptions &o, wc_status status, const wc_job &job) {
  const wc_status_kind kind = wc_status_kind_of(status);
  if (kind == WC_KIND_NO_DEVICE) {
    throw CliError(std::string("cannot run on backend ") + wc_backend_name(o.backend) + ": " + job.message, kind);
  }
  throw CliError(std::string(o.decrypt ? "decryption failed: " : "encryption failed: ") + job.message, kind);
}

void report(const AgeOptions &o, const wc_job &job) {
  if (o.json) print_json_result("age", job.bytes_in, job.bytes_out, job);
  if (!o.verbose || o.quiet) return;
  const uint64_t plaintext = o.decrypt ? job.bytes_out : job.bytes_in;
  std::fprintf(stderr, "warpcrypt: age %s: %llu plaintext bytes, %.3f s, %.2f GB/s\n",
               o.decrypt ? "decrypted" : "encrypted", static_cast<unsigned long long>(plaintext), job.seconds,
               job.seconds > 0 ? static_cast<double>(plaintext) / job.seconds / 1e9 : 0.0);
}

// Runs the library's call with the progress bar on the job, as seal and
// open do.
wc_status run_with_progress(const AgeOptions &o, const std::function<wc_status(wc_job *)> &run, wc_job *job) {
  ProgressBar progress(progress_wanted(o.progress, o.quiet), "age");
  progress.attach(job);
  const wc_status status = run(job);
  progress.finish();
  return status;
}

bool writes_stdout(const AgeOptions &o) { return !o.out_path || *o.out_path == "-"; }

int encrypt(const AgeOptions &o) {
  if (o.offset || o.length) throw CliError("--offset and --length are for -d");
  if (!o.identities.empty() && !o.encrypt) {
    throw CliError("-i and -j encrypt to their identities only with an explicit -e; to decrypt, add -d");
  }
  const bool to_keys = !o.recipients.empty() || !o.recipient_files.empty() || !o.identities.empty();
  if (o.passphrase && to_keys) throw CliError("-p cannot be combined with -r, -R, -i or -j");
  if (!o.passphrase && !to_keys && !o.pass_source) {
    throw CliError("give recipients with -r or -R (or -i or -j, with -e), or -p");
  }
  const bool batchpass = std::any_of(o.identities.begin(), o.identities.end(), is_batchpass);
  if (batchpass && (o.identities.size() > 1 || !o.recipients.empty() || !o.recipient_files.empty())) {
    throw CliError("incompatible recipients: -j batchpass encrypts with a passphrase, which must be a file's only "
                   "recipient");
  }
  if (batchpass && o.pass_source) throw CliError("-j batchpass reads AGE_PASSPHRASE or AGE_PASSPHRASE_FD, not -pass");
  check_json_output(o.json, writes_stdout(o), "-o");
  if (!o.out_path && !o.armor && isatty(STDOUT_FILENO)) {
    throw CliError("refusing to write binary output to a terminal: use -a or -o");
  }
  std::unique_ptr<wc_age_recipients, decltype(&wc_age_recipients_free)> recipients(nullptr, wc_age_recipients_free);
  wc_age_recipients *raw = nullptr;
  if (wc_age_recipients_new(&raw) != WC_OK) throw CliError("out of memory");
  recipients.reset(raw);
  wc_age_recipients_set_plugin_ui(raw, &terminal_plugin_ui());
  for (const std::string &text : o.recipients) add_keys(raw, text, "-r " + text, wc_age_recipients_add);
  for (const std::string &path : o.recipient_files) add_recipients_file(raw, path);
  if (batchpass) {
    Passphrase passphrase;
    read_batchpass_passphrase(&passphrase);
    add_passphrase_recipient(raw, passphrase, batchpass_work_factor("AGE_PASSPHRASE_WORK_FACTOR", o.work_factor));
  } else {
    add_identity_recipients(raw, o.identities, o.max_work_factor);
  }
  if (!to_keys) {
    Passphrase passphrase;
    read_age_passphrase(o, &passphrase);
    add_passphrase_recipient(raw, passphrase, o.work_factor);
  }
  InputFile input(o.in_path);
  OutputFile output(o.out_path);
  const wc_options options = library_options(o.backend, o.threads, o.engine);
  wc_job job;
  wc_job_init(&job);
  const wc_status status = run_with_progress(
      o, [&](wc_job *running) { return wc_age_encrypt_fd(&options, raw, o.armor ? 1 : 0, running, output.fd(), input.fd()); },
      &job);
  if (status != WC_OK) fail(o, status, job);
  output.commit();
  report(o, job);
  return 0;
}

// Before a passphrase is asked for a file in `fd` (a regular file, whose
// header can be read and read again), that the file has a passphrase's
// stanza: a file encrypted to keys needs an identity, and typing a
// passphrase for it would be for nothing, as age does not ask one. A pipe
// is read once, so its header is not read ahead; the library then says
// that the file is encrypted to keys.
void require_passphrase_stanza(const AgeOptions &o, int fd, const std::string &name) {
  struct stat status {};
  if (fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) return;
  const off_t start = lseek(fd, 0, SEEK_CUR);
  wc_job job;
  wc_job_init(&job);
  wc_age_info info{};
  const wc_status inspected = wc_age_inspect_fd(fd, &info, &job);
  if (inspected != WC_OK) fail(o, inspected, job);
  bool scrypt = false;
  for (size_t i = 0; i < info.stanza_count; ++i) scrypt = scrypt || std::string_view(info.stanza_types[i]) == "scrypt";
  wc_age_info_release(&info);
  if (lseek(fd, start, SEEK_SET) != start) throw_system_error("cannot read again", name);
  if (!scrypt) {
    throw CliError("the file is not passphrase-encrypted, identities are required: give them with -i or -j",
                   wc_status_kind_of(WC_ERR_NO_IDENTITY));
  }
}

int decrypt(const AgeOptions &o) {
  if (o.encrypt) throw CliError("-e and -d cannot be combined");
  if (!o.recipients.empty() || !o.recipient_files.empty()) throw CliError("-r and -R are for encrypting");
  if (o.armor) throw CliError("-a is for encrypting: -d reads armored files as they are");
  if (o.passphrase) throw CliError("-p is for encrypting: -d finds a passphrase-encrypted file out by itself");
  check_json_output(o.json, writes_stdout(o), "-o");
  wc_age_identities *raw = nullptr;
  if (wc_age_identities_new(&raw) != WC_OK) throw CliError("out of memory");
  std::unique_ptr<wc_age_identities, decltype(&wc_age_identities_free)> identities(raw, wc_age_identities_free);
  std::list<SshKeyPrompt> prompts;  // one per -i, at fixed addresses for the library's callbacks
  wc_age_identities_set_plugin_ui(raw, &terminal_plugin_ui());
  for (const IdentityFlag &flag : o.identities) {
    if (is_batchpass(flag)) {
      Passphrase passphrase;
      read_batchpass_passphrase(&passphrase);
      add_passphrase_identity(raw, passphrase,
                              batchpass_work_factor("AGE_PASSPHRASE_MAX_WORK_FACTOR", o.max_work_factor));
    } else if (flag.plugin) {
      add_keys(raw, plugin_identity_without_data(flag.value), "-j " + flag.value, wc_age_identities_add);
    } else {
      KeyText text;
      read_identity_file(flag.value, o.max_work_factor, &text);
      SshKeyPrompt *prompt = &prompts.emplace_back(flag.value);
      add_keys(raw, text.text, flag.value, [prompt](wc_age_identities *keys, const char *key_text, const char **detail) {
        return wc_age_identities_add_with_prompt(keys, key_text, SshKeyPrompt::ask, prompt, detail);
      });
    }
  }
  InputFile input(o.in_path);
  const bool ranged = o.offset || o.length;
  if (ranged && !S_ISREG(input.status().st_mode)) throw CliError("--offset and --length need a regular input file");
  // An armored file pasted at the terminal is read to its END line before
  // a passphrase is asked there, as age reads it.
  std::optional<Descriptor> typed;
  if (isatty(input.fd())) typed.emplace(read_typed_input(input.fd(), "-----END AGE ENCRYPTED FILE-----\n"));
  const int in_fd = typed ? typed->get() : input.fd();
  if (o.identities.empty()) {
    if (!o.pass_source) require_passphrase_stanza(o, in_fd, input.display_name());
    Passphrase passphrase;
    read_age_passphrase(o, &passphrase);
    add_passphrase_identity(raw, passphrase, o.max_work_factor);
  }
  OutputFile output(o.out_path);
  const wc_options options = library_options(o.backend, o.threads, o.engine);
  wc_job job;
  wc_job_init(&job);
  const wc_status status = run_with_progress(
      o,
      [&](wc_job *running) {
        return wc_age_decrypt_fd(&options, raw, o.offset.value_or(0), o.length.value_or(UINT64_MAX), running,
                                 output.fd(), in_fd);
      },
      &job);
  if (status != WC_OK) {
    for (const SshKeyPrompt &prompt : prompts) prompt.rethrow();
    fail(o, status, job);
  }
  output.commit();
  report(o, job);
  return 0;
}

void add_age(CommandLine &command_line) {
  auto o = std::make_shared<AgeOptions>();
  Command &command = command_line.add_command("age", "encrypt and decrypt age v1 files (age-encryption.org/v1)");
  command.add_flag("-e,--encrypt", "encrypt (the default); with -i and -j, to their identities' recipients",
                   [o] { o->encrypt = true; });
  command.add_flag("-d,--decrypt", "decrypt", [o] { o->decrypt = true; });
  command.add_option("-r,--recipient", "RECIPIENT", "encrypt to an age1..., ssh-ed25519 or ssh-rsa public key (repeatable)",
                     [o](const std::string &text) { o->recipients.push_back(text); });
  command.add_option("-R,--recipients-file", "PATH", "encrypt to the recipients listed in a file (repeatable)",
                     [o](const std::string &path) { o->recipient_files.push_back(path); });
  command.add_option("-i,--identity", "PATH",
                     "decrypt with the identities in a file; with -e, encrypt to their recipients (repeatable)",
                     [o](const std::string &path) { o->identities.push_back({false, path}); });
  command.add_option("-j", "PLUGIN",
                     "the default identity of plugin age-plugin-PLUGIN, as -i takes an identity; -j batchpass: "
                     "the passphrase in AGE_PASSPHRASE or AGE_PASSPHRASE_FD (repeatable)",
                     [o](const std::string &name) { o->identities.push_back({true, name}); });
  command.add_flag("-p,--passphrase", "encrypt with a passphrase (asked on the terminal, or from -pass)",
                   [o] { o->passphrase = true; });
  command.add_secret_option("-pass", "SOURCE",
                            "the passphrase for scripts: pass:TEXT, env:VAR, file:PATH, fd:N or stdin",
                            [o](const SecretText &source) { o->pass_source.emplace(source); });
  command.add_flag("-a,--armor", "encrypt to ASCII armor (PEM)", [o] { o->armor = true; });
  command.add_option("-o,--output", "OUT", "output (default stdout); a file is written atomically",
                     [o](const std::string &path) { o->out_path = path; });
  command.add_option("--work-factor", "N", "scrypt's log2(N) for -p (default 18)", [o](const std::string &text) {
    o->work_factor = static_cast<unsigned>(parse_unsigned(text, "--work-factor", WC_AGE_MAX_WORK_FACTOR));
  });
  command.add_option("--max-work-factor", "N",
                     "decrypt passphrase files whose scrypt work factor is up to N (default 22)",
                     [o](const std::string &text) {
                       o->max_work_factor =
                           static_cast<unsigned>(parse_unsigned(text, "--max-work-factor", WC_AGE_MAX_WORK_FACTOR));
                     });
  command.add_option("--offset", "SIZE",
                     "with -d: plaintext from byte SIZE on only, reading and authenticating only the "
                     "chunks that hold it (a regular input file)",
                     [o](const std::string &text) { o->offset = parse_size(text, "--offset"); });
  command.add_option("--length", "SIZE", "with -d: only SIZE bytes of plaintext (from --offset)",
                     [o](const std::string &text) { o->length = parse_size(text, "--length"); });
  command.add_option("--backend", "NAME", "where the chunks run: auto (the CPU), cpu, gpu or hybrid",
                     [o](const std::string &name) { o->backend = parse_backend(name); });
  command.add_option("--threads", "N", "CPU workers (default: all cores)",
                     [o](const std::string &text) { o->threads = parse_thread_count(text); });
  add_window_option(command, o->engine);
  add_device_options(command, o->engine);
  command.add_flag("-v", "verbose: a summary line", [o] { o->verbose = true; });
  command.add_flag("--progress", "a progress bar on stderr (default: when it is a terminal)",
                   [o] { o->progress = true; });
  command.add_flag("-q", "quiet: no summary line, no progress bar", [o] { o->quiet = true; });
  command.add_flag("--json", "one line of JSON on stdout at the end: bytes, seconds, backends, or the failure "
                   "(needs -o)",
                   [o] { o->json = true; });
  command.add_flag("-version,--version", "print the version of warpcrypt's library, as age prints its own",
                   [o] { o->version = true; });
  command.add_positional("INPUT", "the file to read (default stdin)",
                         [o](const std::string &path) { o->in_path = path; });
  command.set_footer("Files are byte-compatible with age and rage. Decrypting writes only authenticated "
                     "bytes; a failure leaves no output file.");
  command.print_help_on_stderr();
  command.print_help_when_bare();
  command.set_run([o] {
    if (o->version) {
      std::printf("%s\n", wc_version());
      return 0;
    }
    if (!o->quiet) warn_of_duplicates(*o);
    return run_reporting("age", o->json, [&] { return o->decrypt ? decrypt(*o) : encrypt(*o); });
  });
}

// The identity file age-keygen writes: when, the public key, the secret.
std::string identity_file_text(const wc_age_identities *identities, std::string *public_key) {
  char secret[WC_AGE_KEY_MAX_LEN];
  char recipient[WC_AGE_KEY_MAX_LEN];
  const char *detail = nullptr;
  if (wc_age_identity_format(identities, 0, secret, sizeof secret, &detail) != WC_OK ||
      wc_age_identity_recipient(identities, 0, recipient, sizeof recipient, &detail) != WC_OK) {
    throw CliError(std::string("cannot format the new key: ") + detail);
  }
  char created[32];
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &utc);
  *public_key = recipient;
  std::string text = std::string("# created: ") + created + "\n# public key: " + recipient + "\n" + secret + "\n";
  wc_memzero(secret, sizeof secret);
  return text;
}

// Writes `text` to the -o file, created 0600 and never over an existing
// file (a secret key must not land in a file others can read), or stdout.
// A file that could not be written whole is removed: half a key is no key.
void write_key_output(const std::optional<std::string> &path, const std::string &text) {
  const auto *bytes = reinterpret_cast<const uint8_t *>(text.data());
  if (!path) {
    write_all(STDOUT_FILENO, bytes, text.size(), "standard output");
    return;
  }
  int fd = ::open(path->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST) throw CliError(*path + ": refusing to overwrite an existing file");
    throw_system_error("cannot create", *path);
  }
  try {
    write_all(fd, bytes, text.size(), *path);
    const int closed = close(fd);
    fd = -1;
    if (closed != 0) throw_system_error("cannot write output", *path);
  } catch (const CliError &) {
    if (fd >= 0) close(fd);
    unlink(path->c_str());
    throw;
  }
}

int keygen(const KeygenOptions &o) {
  wc_age_identities *raw = nullptr;
  if (wc_age_identities_new(&raw) != WC_OK) throw CliError("out of memory");
  std::unique_ptr<wc_age_identities, decltype(&wc_age_identities_free)> identities(raw, wc_age_identities_free);
  if (o.convert && o.post_quantum) throw CliError("-pq is for generating a key; -y reads any identity file");
  if (o.convert) {
    KeyText text;
    read_key_file(o.in_path, &text);
    const std::string where = o.in_path.value_or("stdin");
    add_keys(raw, text.text, where, wc_age_identities_add);
    std::string lines;
    for (size_t i = 0; i < wc_age_identities_count(raw); ++i) {
      char recipient[WC_AGE_KEY_MAX_LEN];
      const char *detail = nullptr;
      if (wc_age_identity_recipient(raw, i, recipient, sizeof recipient, &detail) != WC_OK) {
        throw CliError(where + ": " + detail);
      }
      lines += std::string(recipient) + "\n";
    }
    write_key_output(o.out_path, lines);
    return 0;
  }
  if (o.in_path) throw CliError("an input file is only for -y");
  const wc_status generated = o.post_quantum ? wc_age_identities_generate_pq(raw) : wc_age_identities_generate(raw);
  if (generated != WC_OK) throw CliError("cannot generate a key");
  std::string public_key;
  KeyText text;
  text.text = identity_file_text(raw, &public_key);
  write_key_output(o.out_path, text.text);
  if (o.out_path || !isatty(STDOUT_FILENO)) std::fprintf(stderr, "Public key: %s\n", public_key.c_str());
  return 0;
}

void add_age_keygen(CommandLine &command_line) {
  auto o = std::make_shared<KeygenOptions>();
  Command &command = command_line.add_command(
      "age-keygen", "generate an age X25519 (or, with -pq, hybrid) key pair, as age-keygen does");
  command.add_option("-o,--output", "OUT", "write the identity to OUT (created 0600, never overwritten)",
                     [o](const std::string &path) { o->out_path = path; });
  command.add_flag("-pq", "generate a post-quantum hybrid (ML-KEM-768 + X25519) key pair, as age 1.3's -pq does",
                   [o] { o->post_quantum = true; });
  command.add_flag("-y", "print the recipients (public keys) of the identity file INPUT (default stdin)",
                   [o] { o->convert = true; });
  command.add_positional("INPUT", "with -y: the identity file", [o](const std::string &path) { o->in_path = path; });
  command.set_run([o] { return keygen(*o); });
}

}  // namespace

void add_age_command(CommandLine &command_line) {
  add_age(command_line);
  add_age_keygen(command_line);
}

}  // namespace warpcrypt::cli
