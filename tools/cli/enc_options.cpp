#include "enc_options.h"

#include "arguments.h"
#include "cli_error.h"

namespace warpcrypt::cli {

const char *const kEncUsage =
    "usage: warpcrypt enc [options]\n"
    "  -e / -d               encrypt (default) / decrypt\n"
    "  -<cipher>, -c NAME    cipher, e.g. -aes-256-ctr (see -list)\n"
    "  -K HEX, -iv HEX       raw key and IV, exactly the cipher's lengths\n"
    "  -pass SOURCE          passphrase: pass:TEXT, env:VAR, file:PATH, fd:N, stdin\n"
    "  -pbkdf2, -iter N      derive with PBKDF2 (default 10000 iterations)\n"
    "  -md NAME              KDF digest (default sha256)\n"
    "  -S HEX, -salt, -nosalt  salt handling, as openssl enc\n"
    "  -p, -P                print salt, key and IV (-P: then exit)\n"
    "  -in FILE, -out FILE   default stdin and stdout; output is written atomically\n"
    "  -nopad                no PKCS#7 padding for ECB and CBC\n"
    "  --offset N, --length M  with -d: decrypt only plaintext bytes [N, N+M),\n"
    "                        reading only the blocks they need (not OFB)\n"
    "  --backend auto|cpu|gpu|hybrid  where the work runs (default auto)\n"
    "  --threads N           CPU threads (default: the cores the GPUs leave)\n"
    "%s"
    "  --progress            progress bar on stderr (default: when it is a terminal)\n"
    "  --stats               a summary line: bytes, seconds, GB/s, share per backend\n"
    "  -v, -q                verbose (includes --stats) / quiet (no progress bar)\n"
    "  -list                 list the ciphers\n";

namespace {

// An unrecognised argument is echoed back to help spot typos, unless it could
// be a key or passphrase glued to its flag (say "-K0011...").
std::string quoted_for_error(const std::string &arg) {
  for (const char *secret_flag : {"-K", "-iv", "-S", "-pass", "-k"}) {
    if (arg.rfind(secret_flag, 0) == 0) return "starting with '" + std::string(secret_flag) + "'";
  }
  return "'" + arg + "'";
}

}  // namespace

EncOptions parse_enc_options(const std::vector<std::string> &args) {
  EncOptions o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    auto value = [&]() -> const std::string & { return take_value(args, i); };
    if (arg == "-e") o.direction = WC_ENCRYPT;
    else if (arg == "-d") o.direction = WC_DECRYPT;
    else if (arg == "-K") o.key_hex.emplace(value());
    else if (arg == "-iv") o.iv_hex.emplace(value());
    else if (arg == "-S") o.salt_hex = value();
    else if (arg == "-pass") o.pass_source.emplace(value());
    else if (arg == "-in") o.in_path = value();
    else if (arg == "-out") o.out_path = value();
    else if (arg == "-nopad") o.padding = false;
    else if (arg == "-salt") o.use_salt = true;
    else if (arg == "-nosalt") o.use_salt = false;
    else if (arg == "-pbkdf2") o.pbkdf2 = true;
    else if (arg == "-iter") {
      o.iterations = static_cast<uint32_t>(parse_unsigned(value(), "-iter", INT32_MAX));
      if (o.iterations == 0) throw CliError("-iter must be at least 1");
      o.pbkdf2 = true;  // as in openssl enc, -iter implies -pbkdf2
    } else if (arg == "-md") o.digest = value();
    else if (arg == "-p") o.key_print = KeyPrint::print_and_run;
    else if (arg == "-P") o.key_print = KeyPrint::print_and_exit;
    else if (arg == "--backend") o.backend = parse_backend(value());
    else if (arg == "--threads") o.threads = parse_thread_count(value());
    else if (parse_engine_flag(args, i, o.engine)) continue;
    else if (arg == "--offset") o.range_offset = parse_size(value(), arg);
    else if (arg == "--length") o.range_length = parse_size(value(), arg);
    else if (arg == "--progress") o.progress = true;
    else if (arg == "--stats") o.stats = true;
    else if (arg == "-v") o.verbose = true;
    else if (arg == "-q") o.quiet = true;
    else if (arg == "-list" || arg == "-ciphers") o.list_ciphers = true;
    else if (arg == "-h" || arg == "-help" || arg == "--help") o.help = true;
    else if (arg == "-c" || arg == "-cipher") {
      const std::string &name = value();
      o.cipher = wc_cipher_by_name(name.c_str());
      if (o.cipher == nullptr) {
        throw CliError("unknown cipher '" + name + "' (see 'warpcrypt enc -list')");
      }
    } else if (arg.size() > 1 && arg[0] == '-' && wc_cipher_by_name(arg.c_str() + 1) != nullptr) {
      o.cipher = wc_cipher_by_name(arg.c_str() + 1);
    } else {
      throw CliError("unknown option or cipher " + quoted_for_error(arg) +
                     " (see 'warpcrypt enc -list' and 'warpcrypt enc --help')");
    }
  }
  // -nopad picks the cipher's unpadded twin, whichever came first.
  if (!o.padding) o.cipher = wc_cipher_unpadded(o.cipher);
  return o;
}

}  // namespace warpcrypt::cli
