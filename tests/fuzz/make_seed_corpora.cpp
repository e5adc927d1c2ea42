// Writes the seed corpora of the fuzz targets, one directory per target
// (after scripts/fuzz.sh has configured build-fuzz/):
//
//   cmake --build build-fuzz --target make_seed_corpora
//   build-fuzz/tests/fuzz/make_seed_corpora tests/fuzz/corpus
//
// open_fd: genuine sealed files, sealed with the secrets of fuzz_secrets.h
// in 4 KiB chunks (the format's smallest, so a few KiB span several chunks),
// with every AEAD, every key source and KDF (Argon2id at its cheapest), and
// both digests. sealed_header: their
// headers, each followed by its body length (64 bits, big-endian).
// cli_arguments and passphrase_source: argument vectors (a command's name
// first) and -pass sources, NUL-separated. Salts and nonce prefixes are
// random, so each run writes different sealed bytes.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz_secrets.h"
#include "warpcrypt/warpcrypt.h"

namespace {

namespace fs = std::filesystem;
namespace fuzz = warpcrypt::fuzz;

struct SealedSeed {
  const char *name;
  const char *aead;
  wc_seal_key_source key_source;
  wc_seal_kdf kdf;  // a passphrase's
  const char *digest;
  size_t plaintext_len;
};

constexpr size_t kChunk = 4096;

const SealedSeed kSealedSeeds[] = {
    {"key-aes-256-gcm-3-chunks", "aes-256-gcm", WC_SEAL_KEY, WC_SEAL_PBKDF2, "sha256", 2 * kChunk + 100},
    {"key-aes-128-gcm-empty", "aes-128-gcm", WC_SEAL_KEY, WC_SEAL_PBKDF2, "sha256", 0},
    {"key-chacha20-poly1305-sha512-1-chunk", "chacha20-poly1305", WC_SEAL_KEY, WC_SEAL_PBKDF2, "sha512", 1000},
    {"pass-aes-192-gcm-2-full-chunks", "aes-192-gcm", WC_SEAL_PASSPHRASE, WC_SEAL_PBKDF2, "sha256", 2 * kChunk},
    {"pass-chacha20-poly1305-sha512-2-chunks", "chacha20-poly1305", WC_SEAL_PASSPHRASE, WC_SEAL_PBKDF2, "sha512",
     kChunk + 1},
    {"argon2id-aes-256-gcm-2-chunks", "aes-256-gcm", WC_SEAL_PASSPHRASE, WC_SEAL_ARGON2ID, "sha256", kChunk + 7},
    {"argon2id-chacha20-poly1305-empty", "chacha20-poly1305", WC_SEAL_PASSPHRASE, WC_SEAL_ARGON2ID, "sha256", 0},
};

struct ArgumentSeed {
  const char *name;
  std::vector<std::string> words;  // written NUL-separated
};

// What `warpcrypt` gets after its name: a command's name, then its arguments.
const std::vector<ArgumentSeed> kCliArgumentSeeds = {
    {"raw-key-decrypt",
     {"enc", "-d", "-aes-256-ctr", "-K", std::string(64, 'a'), "-iv", std::string(32, '0'), "-in", "in.bin", "-out",
      "out.bin"}},
    {"passphrase-pbkdf2",
     {"enc", "-aes-128-cbc", "-pass", "pass:secret", "-pbkdf2", "-iter", "20000", "-md", "sha512", "-S",
      "0011223344556677", "-p"}},
    {"engine-flags",
     {"enc", "-c", "chacha20", "--backend", "hybrid", "--threads", "4", "--chunk-size", "8M", "--streams", "2",
      "--devices", "0,1"}},
    {"range",
     {"enc", "-d", "-aes-192-ctr", "--offset", "1K", "--length", "3G", "-nopad", "-nosalt", "-v", "--stats"}},
    {"listing-and-help", {"enc", "-list", "--help", "-q", "-P", "-e", "--progress", "-salt"}},
    {"seal-flags",
     {"seal", "-chacha20-poly1305", "-pass", "env:PW", "-iter", "1000", "-md", "sha512", "--chunk-size", "64K",
      "--window", "1M", "--backend", "cpu", "-in", "plain", "-out", "sealed"}},
    {"open-flags", {"open", "-kfile", "key", "--offset", "4096", "--length", "100", "--max-iter", "5000", "-v"}},
    {"seal-argon2id-flags",
     {"seal", "-pass", "pass:x", "--kdf", "argon2id", "--kdf-ops", "2", "--kdf-memory", "64K", "-in", "plain"}},
    {"open-kdf-limits", {"open", "-pass", "env:PW", "--max-kdf-ops", "8", "--max-kdf-memory", "2G", "-in", "sealed"}},
    {"speed-flags",
     {"speed", "-evp", "aes-256-gcm", "-evp", "salsa20", "-bytes", "1M", "-bytes", "16", "-seconds", "0.5", "--runs",
      "7", "-decrypt", "--resident", "device", "--memory", "pageable", "--json"}},
    // CLI11's spellings beside openssl's: two dashes, attached values.
    {"two-dash-forms", {"enc", "--in=plain", "--pass", "pass:x", "--K=00", "--cipher=aes-128-ctr", "--nopad", "-h"}},
    {"openssl-enc-flags",
     {"enc", "-aes-128-cbc", "-a", "-A", "-base64", "-k", "pw", "-kfile", "kf", "-bufsize", "4k", "-debug", "-none",
      "-in", "-", "-out", "-", "--json"}},
    {"refused-openssl-flags", {"enc", "-engine", "e", "-provider", "legacy", "-z"}},
    {"seal-terminal-flags", {"seal", "-keyfile", "key", "-f", "--progress", "--json", "-q"}},
    {"manual-page", {"--help-man"}},
    {"completion", {"--completion", "zsh"}},
    {"devices", {"devices", "-help"}},
    {"help-command", {"help", "enc"}},
    {"version", {"--version"}},
    // CLI11 enters a command named after a word it finds unknown: this one
    // once parsed --K untranslated (found by cli_arguments_fuzzer).
    {"regression-command-after-unknown-word", {"x", "enc", "--K", "00"}},
};

// A -pass source, then (after a NUL) what the file, descriptor or stdin it
// names holds in passphrase_source_fuzzer.
const std::vector<ArgumentSeed> kPassphraseSourceSeeds = {
    {"pass", {"pass:correct horse battery staple"}},
    {"env", {"env:WARPCRYPT_FUZZ_PASSPHRASE"}},
    {"env-unset", {"env:WARPCRYPT_FUZZ_UNSET"}},
    {"file", {"file:passphrase", "first line\r\nsecond line\n"}},
    {"file-missing", {"file:missing"}},
    {"fd", {"fd:3", "from a pipe\n"}},
    {"fd-without-number", {"fd:", "from descriptor 0\n"}},
    {"fd-too-large", {"fd:99999999999"}},
    {"stdin", {"stdin", "typed at the terminal"}},
    {"stdin-empty", {"stdin", ""}},
    {"unknown-form", {"password:hunter2"}},
};

void check(bool ok, const std::string &what) {
  if (!ok) throw std::runtime_error(what);
}

void write_file(const fs::path &path, std::span<const uint8_t> bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  check(out.good(), "cannot write " + path.string());
}

std::vector<uint8_t> read_file(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  check(!in.bad(), "cannot read " + path.string());
  return bytes;
}

void write_words(const fs::path &path, const std::vector<std::string> &words) {
  std::string joined;
  for (size_t i = 0; i < words.size(); ++i) joined += (i == 0 ? "" : std::string(1, '\0')) + words[i];
  write_file(path, {reinterpret_cast<const uint8_t *>(joined.data()), joined.size()});
}

std::vector<uint8_t> seal(const SealedSeed &seed, const fs::path &path) {
  std::vector<uint8_t> plaintext(seed.plaintext_len);
  for (size_t i = 0; i < plaintext.size(); ++i) plaintext[i] = static_cast<uint8_t>(i * 131 % 251);
  const int in_fd = memfd_create("plaintext", MFD_CLOEXEC);
  check(in_fd >= 0, "memfd_create failed");
  check(write(in_fd, plaintext.data(), plaintext.size()) == static_cast<ssize_t>(plaintext.size()) &&
            lseek(in_fd, 0, SEEK_SET) == 0,
        "cannot fill the memfd");

  wc_seal_params params;
  wc_seal_params_init(&params);
  params.aead = wc_aead_by_name(seed.aead);
  params.key_source = seed.key_source;
  params.kdf = seed.kdf;
  params.argon2_ops = fuzz::kSeedArgon2Ops;
  params.argon2_memory = fuzz::kSeedArgon2Memory;
  params.iterations = fuzz::kSeedIterations;
  params.digest = seed.digest;
  params.chunk_bytes = kChunk;
  const std::span<const uint8_t> secret =
      seed.key_source == WC_SEAL_KEY
          ? std::span<const uint8_t>(fuzz::kKey.data(), wc_aead_key_len(params.aead))
          : std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(fuzz::kPassphrase.data()),
                                     fuzz::kPassphrase.size());
  const int out_fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  check(out_fd >= 0, "cannot create " + path.string());
  const wc_status status = wc_seal_fd(nullptr, &params, nullptr, out_fd, in_fd, secret.data(), secret.size());
  close(out_fd);
  close(in_fd);
  check(status == WC_OK, std::string("sealing ") + seed.name + " failed: " + wc_status_string(status));
  return read_file(path);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  const fs::path corpus = argv[1];
  try {
    for (const char *target : {"open_fd", "sealed_header", "cli_arguments", "passphrase_source"}) {
      fs::create_directories(corpus / target);
    }
    for (const SealedSeed &seed : kSealedSeeds) {
      const std::vector<uint8_t> sealed = seal(seed, corpus / "open_fd" / seed.name);
      std::vector<uint8_t> header(sealed.begin(), sealed.begin() + WC_SEAL_HEADER_LEN);
      const uint64_t body_len = sealed.size() - WC_SEAL_HEADER_LEN;
      for (int shift = 56; shift >= 0; shift -= 8) header.push_back(static_cast<uint8_t>(body_len >> shift));
      write_file(corpus / "sealed_header" / seed.name, header);
    }
    for (const ArgumentSeed &seed : kCliArgumentSeeds) write_words(corpus / "cli_arguments" / seed.name, seed.words);
    for (const ArgumentSeed &seed : kPassphraseSourceSeeds) {
      write_words(corpus / "passphrase_source" / seed.name, seed.words);
    }
  } catch (const std::exception &error) {
    std::fprintf(stderr, "make_seed_corpora: %s\n", error.what());
    return 1;
  }
  return 0;
}
