#include "enc_options.h"

#include "cli_error.h"
#include "command_line.h"

namespace warpcrypt::cli {

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
  command.add_value_words("-cipher", "cipher",
                          [](const std::string &name) { return wc_cipher_by_name(name.c_str()) != nullptr; });
  command.add_secret_option("-K", "HEX", "raw key, exactly the cipher's length",
                            [&o](const SecretText &hex) { o.key_hex.emplace(hex); });
  command.add_secret_option("-iv", "HEX", "raw IV, exactly the cipher's length",
                            [&o](const SecretText &hex) { o.iv_hex.emplace(hex); });
  command.add_secret_option("-pass", "SOURCE", "passphrase: pass:TEXT, env:VAR, file:PATH, fd:N or stdin",
                            [&o](const SecretText &source) { o.pass_source.emplace(source); });
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
  // openssl's -k PASSWORD and -kfile FILE, which enc does not take.
  command.hide_unknown_arguments_starting_with("-k");
  command.add_flag("-salt", "salt the key derivation, as openssl enc does by default", [&o] { o.use_salt = true; });
  command.add_flag("-nosalt", "no salt, and no Salted__ header", [&o] { o.use_salt = false; });
  command.add_flag("-p", "print the salt, key and IV", [&o] { o.key_print = KeyPrint::print_and_run; });
  command.add_flag("-P", "print the salt, key and IV, then exit", [&o] { o.key_print = KeyPrint::print_and_exit; });
  command.add_option("-in", "FILE", "input (default stdin)", [&o](const std::string &path) { o.in_path = path; });
  command.add_option("-out", "FILE", "output (default stdout); a file is written atomically",
                     [&o](const std::string &path) { o.out_path = path; });
  command.add_flag("-nopad", "no PKCS#7 padding for ECB and CBC", [&o] { o.padding = false; });
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
  command.add_flag("-v", "verbose (includes --stats)", [&o] { o.verbose = true; });
  command.add_flag("-q", "quiet: no progress bar, no warnings", [&o] { o.quiet = true; });
  command.add_flag("-list,-ciphers", "list the ciphers", [&o] { o.list_ciphers = true; });
}

}  // namespace warpcrypt::cli
