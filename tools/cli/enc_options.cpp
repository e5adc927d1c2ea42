#include "enc_options.h"

#include "cli_error.h"
#include "command_line.h"

namespace warpcrypt::cli {

namespace {

// The options of `openssl enc -help` that warpcrypt does not take, each
// refused with the reason.
void add_refused_openssl_options(Command &command) {
  command.refuse("-engine", true, "warpcrypt runs its own CPU and GPU backends, not OpenSSL engines (see --backend)");
  command.refuse("-provider,-provider-path,-propquery", true,
                 "warpcrypt's ciphers are its own, not fetched from OpenSSL providers");
  command.refuse("-rand,-writerand", true, "warpcrypt takes its salts from OpenSSL's default random generator only");
  command.refuse("-z", false, "zlib compression is not built into warpcrypt; compress before encrypting");
}

}  // namespace

void add_enc_options(Command &command, EncOptions &o) {
  command.add_flag("-e", "encrypt (the default)", [&o] { o.direction = WC_ENCRYPT; });
  command.add_flag("-d", "decrypt", [&o] { o.direction = WC_DECRYPT; });
  command.add_option("-c,-cipher", "NAME", "the cipher, also written -NAME: -aes-256-ctr (see -list)",
                     [&o](const std::string &name) {
                       o.cipher = wc_cipher_by_name(name.c_str());
                       if (o.cipher == nullptr) {
                         throw CliError("unknown cipher '" + name + "' (see 'warpcrypt enc -list')");
                       }
                     });
  // As in openssl 3, a cipher named anywhere on the line wins over -none.
  command.add_flag("-none", "no cipher, unless one is named: copy the input (with -a, only base64)",
                   [&o] { o.no_cipher = true; });
  command.add_value_words("-cipher", "cipher",
                          [](const std::string &name) { return wc_cipher_by_name(name.c_str()) != nullptr; });
  command.add_secret_option("-K", "HEX", "raw key, exactly the cipher's length",
                            [&o](const SecretText &hex) { o.key_hex.emplace(hex); });
  command.add_secret_option("-iv", "HEX", "raw IV, exactly the cipher's length",
                            [&o](const SecretText &hex) { o.iv_hex.emplace(hex); });
  command.add_secret_option("-pass", "SOURCE",
                            "passphrase: pass:TEXT, env:VAR, file:PATH, fd:N or stdin (without echo at a "
                            "terminal); with no -pass, -k, -kfile or -K, enc asks on the terminal",
                            [&o](const SecretText &source) { o.pass_source.emplace(source); });
  command.add_secret_option("-k", "TEXT", "the passphrase itself (as -pass pass:TEXT, but before any -pass)",
                            [&o](const SecretText &text) {
                              o.k_text.emplace(text);
                              o.kfile_path.reset();
                            });
  command.add_option("-kfile", "FILE",
                     "the passphrase is FILE's first line, CR and LF removed from its end (before any -pass)",
                     [&o](const std::string &path) {
                       o.kfile_path = path;
                       o.k_text.reset();
                     });
  command.add_flag("-pbkdf2", "derive the key and IV from -pass with PBKDF2", [&o] { o.pbkdf2 = true; });
  command.add_option("-iter", "N", "PBKDF2 iterations (default 10000); implies -pbkdf2", [&o](const std::string &text) {
    o.iterations = static_cast<uint32_t>(parse_unsigned(text, "-iter", INT32_MAX));
    if (o.iterations == 0) throw CliError("-iter must be at least 1");
    o.pbkdf2 = true;  // as in openssl enc
  });
  command.add_option("-md", "NAME", "the key derivation's digest (default sha256)",
                     [&o](const std::string &name) { o.digest = name; });
  command.add_option("-S", "HEX", "the salt, 8 bytes, instead of a random one",
                     [&o](const std::string &hex) { o.salt_hex = hex; });
  command.hide_unknown_arguments_starting_with("-S");
  // A glued "-kPASSWORD" is reported without its passphrase.
  command.hide_unknown_arguments_starting_with("-k");
  command.add_flag("-salt", "salt the key derivation, as openssl enc does by default", [&o] { o.use_salt = true; });
  command.add_flag("-nosalt", "no salt, and no Salted__ header", [&o] { o.use_salt = false; });
  command.add_flag("-p", "print the salt, key and IV", [&o] { o.key_print = KeyPrint::print_and_run; });
  command.add_flag("-P", "print the salt, key and IV, then exit", [&o] { o.key_print = KeyPrint::print_and_exit; });
  command.add_option("-in", "FILE", "input (default stdin)", [&o](const std::string &path) { o.in_path = path; });
  command.add_option("-out", "FILE", "output (default stdout); a file is written atomically",
                     [&o](const std::string &path) { o.out_path = path; });
  command.add_flag("-nopad", "no PKCS#7 padding for ECB and CBC", [&o] { o.padding = false; });
  command.add_flag("-a,-base64", "base64: write it when encrypting, read it when decrypting",
                   [&o] { o.base64 = true; });
  command.add_flag("-A", "with -a: base64 in one line, with no line break", [&o] { o.base64_one_line = true; });
  command.add_option("-bufsize", "SIZE", "accepted for openssl's scripts; the engine sizes its own buffers",
                     [&o](const std::string &text) {
                       // openssl takes a count with an optional k.
                       o.bufsize = parse_size(text, "-bufsize");
                       if (o.bufsize == 0) throw CliError("-bufsize must be at least 1");
                     });
  command.add_flag("-debug", "accepted for openssl's scripts; prints nothing more", [] {});
  command.add_option("--offset", "SIZE",
                     "with -d: decrypt only plaintext from byte SIZE on, reading only the blocks "
                     "it needs (not OFB); sizes take K, M and G",
                     [&o](const std::string &text) { o.range_offset = parse_size(text, "--offset"); });
  command.add_option("--length", "SIZE", "with -d: decrypt only SIZE bytes of plaintext (from --offset)",
                     [&o](const std::string &text) { o.range_length = parse_size(text, "--length"); });
  command.add_option("--backend", "NAME", "where the work runs: auto (the default), cpu, gpu or hybrid",
                     [&o](const std::string &name) { o.backend = parse_backend(name); });
  command.add_option("--threads", "N", "CPU threads (default: the cores the GPUs leave)",
                     [&o](const std::string &text) { o.threads = parse_thread_count(text); });
  add_engine_options(command, o.engine);
  command.add_flag("--progress", "a progress bar on stderr (default: when it is a terminal)",
                   [&o] { o.progress = true; });
  command.add_flag("--stats", "a summary line: bytes, seconds, GB/s, share per backend", [&o] { o.stats = true; });
  command.add_flag("--json", "one line of JSON on stdout at the end: bytes, seconds, backends, or the failure "
                   "(needs -out)",
                   [&o] { o.json = true; });
  command.add_flag("-v", "verbose: openssl's buffer size and byte counts, and --stats",
                   [&o] { o.verbose = true; });
  command.add_flag("-q", "quiet: no progress bar, no warnings", [&o] { o.quiet = true; });
  command.add_flag("-list,-ciphers", "list the ciphers", [&o] { o.list_ciphers = true; });
  add_refused_openssl_options(command);
}

}  // namespace warpcrypt::cli
