// `warpcrypt seal` and `warpcrypt open`: files sealed with an AEAD in the
// chunked format of docs/format.md. A window of chunks at a time goes to the
// library's AEAD batch call, which spreads it over the CPU threads or runs it
// as one GPU launch; a streaming engine can later drive the same batches.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arguments.h"
#include "cli_error.h"
#include "commands.h"
#include "file_io.h"
#include "key_setup.h"
#include "sealed_format.h"

namespace warpcrypt::cli {
namespace {

using sealed::Header;

// A window is this much plaintext, or one chunk if chunks are larger: enough
// for every CPU thread or a full GPU launch.
constexpr uint64_t kWindowBytes = uint64_t{64} << 20;

constexpr const char *kSealUsage =
    "usage: warpcrypt seal [options]\n"
    "  -aes-256-gcm, -c NAME  the AEAD: aes-128-gcm, aes-192-gcm, aes-256-gcm (default),\n"
    "                         chacha20-poly1305\n"
    "  -pass SOURCE           passphrase: pass:TEXT, env:VAR, file:PATH, fd:N, stdin\n"
    "  -kfile PATH            a key file instead: exactly the AEAD's key length of random bytes\n"
    "  -iter N                PBKDF2 iterations for -pass (default 600000)\n"
    "  -md sha256|sha512      the KDF's digest (default sha256)\n"
    "  --chunk-size N[K|M|G]  plaintext per chunk, a power of two from 4K to 1G (default 1M)\n"
    "  -in FILE, -out FILE    default stdin and stdout; output to a file is written atomically\n"
    "  --backend auto|cpu|gpu where the chunks are sealed (default auto: the CPU)\n"
    "  --threads N            CPU threads (default: all cores)\n"
    "  -v, -q                 verbose / quiet\n";

constexpr const char *kOpenUsage =
    "usage: warpcrypt open [options]\n"
    "  -pass SOURCE, -kfile PATH  the passphrase or key file the file was sealed with\n"
    "  -in FILE, -out FILE    default stdin and stdout; output to a file is written atomically\n"
    "  --offset N, --length M plaintext bytes [N, N + M) only; reads and authenticates only\n"
    "                         the chunks holding them (the input must be a regular file)\n"
    "  --backend auto|cpu|gpu where the chunks are opened (default auto: the CPU)\n"
    "  --threads N            CPU threads (default: all cores)\n"
    "  -v, -q                 verbose / quiet\n"
    "Every byte written has been authenticated; a failure leaves no output file.\n";

struct SealOptions {
  bool sealing = true;
  bool help = false;
  const wc_aead *aead = wc_aead_by_name("aes-256-gcm");
  std::optional<std::string> pass_source;
  std::optional<std::string> key_file;
  uint32_t iterations = sealed::kDefaultIterations;
  sealed::Digest digest = sealed::Digest::sha256;
  unsigned chunk_log2 = sealed::kDefaultChunkLog2;
  std::optional<std::string> in_path;
  std::optional<std::string> out_path;
  std::optional<uint64_t> offset;
  std::optional<uint64_t> length;
  wc_backend backend = WC_BACKEND_AUTO;
  unsigned threads = 0;
  bool verbose = false;
};

unsigned parse_chunk_log2(const std::string &text) {
  const uint64_t bytes = parse_size(text, "--chunk-size");
  for (unsigned log2 = sealed::kMinChunkLog2; log2 <= sealed::kMaxChunkLog2; ++log2) {
    if (bytes == uint64_t{1} << log2) return log2;
  }
  throw CliError("--chunk-size must be a power of two from 4K to 1G");
}

SealOptions parse_options(const std::vector<std::string> &args, bool sealing) {
  SealOptions o;
  o.sealing = sealing;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    auto value = [&]() -> const std::string & { return take_value(args, i); };
    if (arg == "-pass") o.pass_source = value();
    else if (arg == "-kfile") o.key_file = value();
    else if (arg == "-in") o.in_path = value();
    else if (arg == "-out") o.out_path = value();
    else if (arg == "--backend") o.backend = parse_backend(value());
    else if (arg == "--threads") o.threads = parse_thread_count(value());
    else if (arg == "-v") o.verbose = true;
    else if (arg == "-q") o.verbose = false;
    else if (arg == "-h" || arg == "-help" || arg == "--help") o.help = true;
    else if (sealing && arg == "-iter") {
      o.iterations = static_cast<uint32_t>(parse_unsigned(value(), "-iter", sealed::kMaxIterations));
      if (o.iterations == 0) throw CliError("-iter must be at least 1");
    } else if (sealing && arg == "-md") o.digest = sealed::parse_digest(value());
    else if (sealing && arg == "--chunk-size") o.chunk_log2 = parse_chunk_log2(value());
    else if (sealing && (arg == "-c" || arg == "-cipher")) {
      const std::string &name = value();
      o.aead = wc_aead_by_name(name.c_str());
      if (o.aead == nullptr) throw CliError("unknown AEAD '" + name + "' (aes-128/192/256-gcm, chacha20-poly1305)");
    } else if (sealing && arg.size() > 1 && arg[0] == '-' && wc_aead_by_name(arg.c_str() + 1) != nullptr) {
      o.aead = wc_aead_by_name(arg.c_str() + 1);
    } else if (!sealing && arg == "--offset") o.offset = parse_unsigned(value(), "--offset", UINT64_MAX);
    else if (!sealing && arg == "--length") o.length = parse_unsigned(value(), "--length", UINT64_MAX);
    else if (arg.rfind("-pass", 0) == 0 || arg.rfind("-kfile", 0) == 0) {
      throw CliError("unknown option starting with '" + arg.substr(0, arg[1] == 'p' ? 5 : 6) + "'");
    } else {
      throw CliError("unknown option '" + arg + "' (see 'warpcrypt " + (sealing ? "seal" : "open") + " --help')");
    }
  }
  if (!o.help && o.pass_source.has_value() == o.key_file.has_value()) {
    throw CliError("give exactly one of -pass and -kfile");
  }
  return o;
}

// The passphrase, or the key file's bytes.
struct Secret {
  Passphrase passphrase;
  std::vector<uint8_t> key_file;
  ~Secret() { wc_memzero(key_file.data(), key_file.size()); }

  std::span<const uint8_t> bytes() const {
    if (!key_file.empty()) return key_file;
    return {reinterpret_cast<const uint8_t *>(passphrase.text.data()), passphrase.text.size()};
  }
};

void read_secret(const SealOptions &o, Secret *secret) {
  if (o.pass_source) {
    read_passphrase(*o.pass_source, &secret->passphrase);
    return;
  }
  InputFile file(*o.key_file);
  secret->key_file.resize(WC_MAX_KEY_LEN + 1);
  secret->key_file.resize(file.read_up_to(secret->key_file.data(), secret->key_file.size()));
}

void check_key_file_length(const SealOptions &o, const Secret &secret, const wc_aead *aead) {
  if (o.key_file && secret.key_file.size() != wc_aead_key_len(aead)) {
    const std::string held = secret.key_file.size() > WC_MAX_KEY_LEN ? "more" : std::to_string(secret.key_file.size());
    throw CliError("-kfile: " + std::string(wc_aead_name(aead)) + " needs a key file of exactly " +
                   std::to_string(wc_aead_key_len(aead)) + " bytes, not " + held);
  }
}

wc_options library_options(const SealOptions &o) {
  wc_options options;
  wc_options_init(&options);
  options.backend = o.backend;
  options.threads = o.threads;
  return options;
}

// Reads fixed-size records, the last possibly shorter, a window at a time.
// One byte beyond the window is read to learn whether the input ends with
// it, and carried into the next window. The buffer is not zero-filled, so a
// small input touches only the pages it uses.
class RecordReader {
 public:
  RecordReader(InputFile &input, uint64_t record_len, uint64_t records_per_window)
      : input_(input), window_len_(record_len * records_per_window),
        buffer_(std::make_unique_for_overwrite<uint8_t[]>(window_len_ + 1)) {}
  ~RecordReader() { wc_memzero(buffer_.get(), used_); }
  RecordReader(const RecordReader &) = delete;
  RecordReader &operator=(const RecordReader &) = delete;

  // The next window's bytes (whole records unless it is the last), and
  // whether the input ends with them.
  std::span<const uint8_t> next(bool *last) {
    const size_t got = carried_ + input_.read_up_to(buffer_.get() + carried_, window_len_ + 1 - carried_);
    used_ = std::max(used_, got);
    *last = got <= window_len_;
    carried_ = *last ? 0 : 1;
    return {buffer_.get(), std::min(got, window_len_)};
  }
  // Before the next call: moves the byte read beyond the window to the front.
  void advance() {
    if (carried_ != 0) buffer_[0] = buffer_[window_len_];
  }

 private:
  InputFile &input_;
  size_t window_len_;
  std::unique_ptr<uint8_t[]> buffer_;
  size_t used_ = 0;  // bytes that held data, to wipe
  size_t carried_ = 0;
};

struct Totals {
  uint64_t plaintext = 0;
  uint64_t chunks = 0;
};

void report(const SealOptions &o, const wc_aead *aead, const Totals &totals,
            std::chrono::steady_clock::time_point started) {
  if (!o.verbose) return;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::fprintf(stderr, "warpcrypt: %s %s: %llu plaintext bytes in %llu chunks on %s, %.3f s, %.2f GB/s\n",
               o.sealing ? "sealed with" : "opened", wc_aead_name(aead),
               static_cast<unsigned long long>(totals.plaintext), static_cast<unsigned long long>(totals.chunks),
               wc_backend_name(o.backend == WC_BACKEND_GPU ? WC_BACKEND_GPU : WC_BACKEND_CPU), seconds,
               seconds > 0 ? static_cast<double>(totals.plaintext) / seconds / 1e9 : 0.0);
}

uint64_t records_per_window(uint64_t record_len) { return std::max<uint64_t>(1, kWindowBytes / record_len); }

// ---- seal ----------------------------------------------------------------

int seal(const SealOptions &o) {
  InputFile input(o.in_path);
  Secret secret;
  read_secret(o, &secret);
  check_key_file_length(o, secret, o.aead);

  Header header;
  header.aead = o.aead;
  header.chunk_log2 = o.chunk_log2;
  header.key_source = o.pass_source ? sealed::KeySource::passphrase : sealed::KeySource::key_file;
  header.digest = o.digest;
  header.iterations = o.pass_source ? o.iterations : 0;
  check(wc_random_bytes(header.salt.data(), header.salt.size()), "cannot generate a salt");
  check(wc_random_bytes(header.nonce_prefix.data(), header.nonce_prefix.size()), "cannot generate a nonce");
  sealed::FileKey key;
  sealed::derive_file_key(header, secret.bytes(), &key);
  const std::array<uint8_t, sealed::kHeaderLen> header_bytes = sealed::encode(header);

  OutputFile output(o.out_path, input);
  output.write(header_bytes.data(), header_bytes.size());
  const wc_options options = library_options(o);
  const uint64_t chunk = header.chunk_size();
  RecordReader reader(input, chunk, records_per_window(chunk));
  std::vector<uint8_t> sealed_window;
  std::vector<wc_aead_message> messages;
  std::vector<std::array<uint8_t, 12>> nonces;
  Totals totals;
  const auto started = std::chrono::steady_clock::now();
  for (bool last = false; !last; reader.advance()) {
    const std::span<const uint8_t> plain = reader.next(&last);
    // An empty input still gets its one, empty, last chunk.
    const uint64_t count = std::max<uint64_t>((plain.size() + chunk - 1) / chunk, last && totals.chunks == 0 ? 1 : 0);
    if (totals.chunks + count > sealed::kMaxChunks) throw CliError("input too long: more than 2^32 chunks");
    sealed_window.resize(plain.size() + count * sealed::kTagLen);
    messages.resize(count);
    nonces.resize(count);
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t begin = i * chunk;
      const size_t len = static_cast<size_t>(std::min<uint64_t>(chunk, plain.size() - begin));
      uint8_t *out = sealed_window.data() + begin + i * sealed::kTagLen;
      nonces[i] = sealed::chunk_nonce(header, totals.chunks + i, last && i + 1 == count);
      messages[i] = {out, plain.data() + begin, len, nonces[i].data(), nonces[i].size(), header_bytes.data(),
                     header_bytes.size(), out + len};
    }
    check(wc_aead_seal_batch(&options, o.aead, messages.data(), messages.size(), sealed::kTagLen, key.bytes.data(),
                             key.len),
          "sealing failed");
    output.write(sealed_window.data(), sealed_window.size());
    totals.plaintext += plain.size();
    totals.chunks += count;
  }
  output.commit();
  wc_memzero(sealed_window.data(), sealed_window.size());
  report(o, o.aead, totals, started);
  return 0;
}

// ---- open ----------------------------------------------------------------

// Opens the sealed chunks in `window`, the first being chunk `first_index`
// and the last the file's last chunk when `ends_file`, into `plain`.
// Throws CliError naming the first chunk that fails to authenticate.
void open_window(const wc_options &options, const Header &header, std::span<const uint8_t, sealed::kHeaderLen> aad,
                 const sealed::FileKey &key, std::span<const uint8_t> window, uint64_t first_index, bool ends_file,
                 std::vector<uint8_t> &plain) {
  const uint64_t sealed_chunk = header.chunk_size() + sealed::kTagLen;
  const uint64_t count = (window.size() + sealed_chunk - 1) / sealed_chunk;
  if (count == 0 || window.size() - (count - 1) * sealed_chunk < sealed::kTagLen) {
    throw CliError("truncated sealed file: chunk " + std::to_string(first_index + count) + " is shorter than its tag");
  }
  plain.resize(window.size() - count * sealed::kTagLen);
  std::vector<wc_aead_message> messages(count);
  std::vector<std::array<uint8_t, 12>> nonces(count);
  std::vector<wc_status> results(count);
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t at = i * sealed_chunk;
    const size_t len = static_cast<size_t>(std::min<uint64_t>(sealed_chunk, window.size() - at) - sealed::kTagLen);
    nonces[i] = sealed::chunk_nonce(header, first_index + i, ends_file && i + 1 == count);
    // The tag member is only read when opening.
    messages[i] = {plain.data() + i * header.chunk_size(), window.data() + at, len, nonces[i].data(), nonces[i].size(),
                   aad.data(), aad.size(), const_cast<uint8_t *>(window.data() + at + len)};
  }
  const wc_status status = wc_aead_open_batch(&options, header.aead, results.data(), messages.data(), count,
                                              sealed::kTagLen, key.bytes.data(), key.len);
  if (status == WC_ERR_AUTH) {
    const auto failed = static_cast<uint64_t>(
        std::find_if(results.begin(), results.end(), [](wc_status s) { return s != WC_OK; }) - results.begin());
    throw CliError("authentication failed at chunk " + std::to_string(first_index + failed) +
                   ": wrong passphrase or key, or the file was modified, truncated or reordered");
  }
  check(status, "opening failed");
}

struct OpenedHeader {
  Header header;
  std::array<uint8_t, sealed::kHeaderLen> bytes{};
};

OpenedHeader read_header(const SealOptions &o, InputFile &input, const Secret &secret, sealed::FileKey *key) {
  OpenedHeader opened;
  if (input.read_up_to(opened.bytes.data(), opened.bytes.size()) != opened.bytes.size()) {
    throw CliError("not a sealed file: shorter than the 48-byte header");
  }
  opened.header = sealed::decode(opened.bytes);
  const bool file_uses_passphrase = opened.header.key_source == sealed::KeySource::passphrase;
  if (file_uses_passphrase != o.pass_source.has_value()) {
    throw CliError(file_uses_passphrase ? "this file was sealed with a passphrase: use -pass"
                                        : "this file was sealed with a key file: use -kfile");
  }
  check_key_file_length(o, secret, opened.header.aead);
  sealed::derive_file_key(opened.header, secret.bytes(), key);
  return opened;
}

// The whole file, a window at a time; the last chunk is known by the end of
// the input, so pipes work as well as files.
void open_all(const SealOptions &o, InputFile &input, const OpenedHeader &opened, const sealed::FileKey &key,
              Totals *totals) {
  const Header &header = opened.header;
  const wc_options options = library_options(o);
  const uint64_t sealed_chunk = header.chunk_size() + sealed::kTagLen;
  OutputFile output(o.out_path, input);
  RecordReader reader(input, sealed_chunk, records_per_window(header.chunk_size()));
  std::vector<uint8_t> plain;
  for (bool last = false; !last; reader.advance()) {
    const std::span<const uint8_t> window = reader.next(&last);
    open_window(options, header, opened.bytes, key, window, totals->chunks, last, plain);
    output.write(plain.data(), plain.size());
    totals->plaintext += plain.size();
    totals->chunks += (window.size() + sealed_chunk - 1) / sealed_chunk;
  }
  output.commit();
  wc_memzero(plain.data(), plain.size());
}

// Plaintext [offset, offset + length): only the chunks holding it are read
// and authenticated. An empty range still authenticates the last chunk, so
// a wrong key, a damaged header or a truncated file is reported all the same.
void open_range(const SealOptions &o, InputFile &input, const OpenedHeader &opened, const sealed::FileKey &key,
                Totals *totals) {
  if (!S_ISREG(input.status().st_mode)) throw CliError("--offset and --length need a regular input file");
  const Header &header = opened.header;
  const sealed::Layout layout =
      sealed::layout_of(header, static_cast<uint64_t>(input.status().st_size) - sealed::kHeaderLen);
  const uint64_t begin = std::min(o.offset.value_or(0), layout.plaintext_len);
  const uint64_t end = begin + std::min(o.length.value_or(UINT64_MAX), layout.plaintext_len - begin);
  const uint64_t chunk = header.chunk_size();
  const uint64_t sealed_chunk = chunk + sealed::kTagLen;
  const uint64_t first = begin < end ? begin / chunk : layout.chunks - 1;
  const uint64_t last = begin < end ? (end - 1) / chunk : layout.chunks - 1;
  const wc_options options = library_options(o);
  OutputFile output(o.out_path, input);
  std::vector<uint8_t> window;
  std::vector<uint8_t> plain;
  const uint64_t per_window = records_per_window(chunk);
  for (uint64_t index = first; index <= last; index += per_window) {
    const uint64_t count = std::min(per_window, last + 1 - index);
    const bool ends_file = index + count == layout.chunks;
    const uint64_t bytes = (count - 1) * sealed_chunk + (ends_file ? layout.last_chunk_len + sealed::kTagLen : sealed_chunk);
    window.resize(bytes);
    const off_t at = static_cast<off_t>(sealed::kHeaderLen + index * sealed_chunk);
    const ssize_t got = pread(input.fd(), window.data(), bytes, at);
    if (got < 0) throw_system_error("cannot read input", input.display_name());
    if (static_cast<uint64_t>(got) != bytes) throw CliError("the input changed size while it was read");
    open_window(options, header, opened.bytes, key, window, index, ends_file, plain);
    // The requested bytes of this window's plaintext, if any.
    const uint64_t window_begin = index * chunk;
    const uint64_t from = std::clamp(begin, window_begin, window_begin + plain.size()) - window_begin;
    const uint64_t to = std::clamp(end, window_begin, window_begin + plain.size()) - window_begin;
    output.write(plain.data() + from, to - from);
    totals->plaintext += to - from;
    totals->chunks += count;
  }
  output.commit();
  wc_memzero(plain.data(), plain.size());
}

int open(const SealOptions &o) {
  InputFile input(o.in_path);
  Secret secret;
  read_secret(o, &secret);
  sealed::FileKey key;
  const OpenedHeader opened = read_header(o, input, secret, &key);
  Totals totals;
  const auto started = std::chrono::steady_clock::now();
  if (o.offset || o.length) {
    open_range(o, input, opened, key, &totals);
  } else {
    open_all(o, input, opened, key, &totals);
  }
  report(o, opened.header.aead, totals, started);
  return 0;
}

}  // namespace

int run_seal(const std::vector<std::string> &args) {
  const SealOptions options = parse_options(args, true);
  if (options.help) {
    std::fputs(kSealUsage, stdout);
    return 0;
  }
  return seal(options);
}

int run_open(const std::vector<std::string> &args) {
  const SealOptions options = parse_options(args, false);
  if (options.help) {
    std::fputs(kOpenUsage, stdout);
    return 0;
  }
  return open(options);
}

}  // namespace warpcrypt::cli
