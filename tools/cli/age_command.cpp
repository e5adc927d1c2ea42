// `warpcrypt age` and `warpcrypt age-keygen`: age v1 files with the flags
// of `age` and `age-keygen`, through the library's wc_age_* calls, which
// run the payload on the engine's workers.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <ctime>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

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

struct AgeOptions {
  bool decrypt = false;
  bool armor = false;
  bool passphrase = false;
  std::vector<std::string> recipients;
  std::vector<std::string> recipient_files;
  std::vector<std::string> identity_files;
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

// The passphrase from -pass, or asked on the terminal as every command
// asks (twice when encrypting).
void read_age_passphrase(const AgeOptions &o, bool confirm, Passphrase *out) {
  if (!o.pass_source) {
    ask_passphrase("Enter passphrase:", confirm, "use -pass (pass:, env:, file:, fd:)", out);
    return;
  }
  read_passphrase(o.pass_source->value, out);
  if (out->empty()) throw CliError("refusing an empty passphrase: anyone could decrypt the file");
}

// Adds keys with `add`, naming `where` they came from when it refuses them.
template <typename Keys, typename Add>
void add_keys(Keys *keys, const std::string &text, const std::string &where, Add add) {
  const char *detail = nullptr;
  const wc_status status = add(keys, text.c_str(), &detail);
  if (status != WC_OK) throw CliError(where + ": " + (detail != nullptr ? detail : wc_status_string(status)));
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
  if (!o.identity_files.empty()) throw CliError("-i is for -d; encrypt to a recipient with -r or -R");
  const bool to_keys = !o.recipients.empty() || !o.recipient_files.empty();
  if (o.passphrase && to_keys) throw CliError("-p cannot be combined with -r or -R");
  if (!o.passphrase && !to_keys && !o.pass_source) throw CliError("give recipients with -r or -R, or -p");
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
  for (const std::string &path : o.recipient_files) {
    KeyText text;
    read_key_file(path, &text);
    add_keys(raw, text.text, path, wc_age_recipients_add);
  }
  if (!to_keys) {
    Passphrase passphrase;
    read_age_passphrase(o, true, &passphrase);
    const auto bytes = passphrase.bytes();
    if (wc_age_recipients_add_passphrase(raw, bytes.data(), bytes.size(), o.work_factor) != WC_OK) {
      throw CliError("the scrypt work factor must be 1 to " + std::to_string(WC_AGE_MAX_WORK_FACTOR));
    }
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

int decrypt(const AgeOptions &o) {
  if (!o.recipients.empty() || !o.recipient_files.empty()) throw CliError("-r and -R are for encrypting");
  if (o.armor) throw CliError("-a is for encrypting: -d reads armored files as they are");
  check_json_output(o.json, writes_stdout(o), "-o");
  wc_age_identities *raw = nullptr;
  if (wc_age_identities_new(&raw) != WC_OK) throw CliError("out of memory");
  std::unique_ptr<wc_age_identities, decltype(&wc_age_identities_free)> identities(raw, wc_age_identities_free);
  std::list<SshKeyPrompt> prompts;  // one per -i, at fixed addresses for the library's callbacks
  wc_age_identities_set_plugin_ui(raw, &terminal_plugin_ui());
  for (const std::string &path : o.identity_files) {
    KeyText text;
    read_key_file(path, &text);
    SshKeyPrompt *prompt = &prompts.emplace_back(path);
    add_keys(raw, text.text, path, [prompt](wc_age_identities *keys, const char *key_text, const char **detail) {
      return wc_age_identities_add_with_prompt(keys, key_text, SshKeyPrompt::ask, prompt, detail);
    });
  }
  InputFile input(o.in_path);
  const bool ranged = o.offset || o.length;
  if (ranged && !S_ISREG(input.status().st_mode)) throw CliError("--offset and --length need a regular input file");
  if (o.identity_files.empty()) {
    Passphrase passphrase;
    read_age_passphrase(o, false, &passphrase);
    const auto bytes = passphrase.bytes();
    if (wc_age_identities_add_passphrase(raw, bytes.data(), bytes.size(), o.max_work_factor) != WC_OK) {
      throw CliError("--max-work-factor must be 1 to " + std::to_string(WC_AGE_MAX_WORK_FACTOR));
    }
  }
  OutputFile output(o.out_path);
  const wc_options options = library_options(o.backend, o.threads, o.engine);
  wc_job job;
  wc_job_init(&job);
  const wc_status status = run_with_progress(
      o,
      [&](wc_job *running) {
        return wc_age_decrypt_fd(&options, raw, o.offset.value_or(0), o.length.value_or(UINT64_MAX), running,
                                 output.fd(), input.fd());
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
  command.add_flag("-e,--encrypt", "encrypt (the default)", [o] { o->decrypt = false; });
  command.add_flag("-d,--decrypt", "decrypt", [o] { o->decrypt = true; });
  command.add_option("-r,--recipient", "RECIPIENT", "encrypt to an age1..., ssh-ed25519 or ssh-rsa public key (repeatable)",
                     [o](const std::string &text) { o->recipients.push_back(text); });
  command.add_option("-R,--recipients-file", "PATH", "encrypt to the recipients listed in a file (repeatable)",
                     [o](const std::string &path) { o->recipient_files.push_back(path); });
  command.add_option("-i,--identity", "PATH", "decrypt with the identities in a file (repeatable)",
                     [o](const std::string &path) { o->identity_files.push_back(path); });
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
  command.add_positional("INPUT", "the file to read (default stdin)",
                         [o](const std::string &path) { o->in_path = path; });
  command.set_footer("Files are byte-compatible with age and rage. Decrypting writes only authenticated "
                     "bytes; a failure leaves no output file.");
  command.set_run([o] { return run_reporting("age", o->json, [&] { return o->decrypt ? decrypt(*o) : encrypt(*o); }); });
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
