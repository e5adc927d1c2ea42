// Fuzzes wc_open_fd on arbitrary input: the fuzz input is the sealed file,
// opened with the fixed key and with the fixed passphrase of fuzz_secrets.h
// (the seeds of corpus/open_fd are sealed with them), each in three ways:
//  - whole, from a memfd (a regular file to the library: windows read at
//    offsets by two workers at once) into another;
//  - two byte ranges of it from the memfd: one from the middle, and an empty
//    one past the end, which still authenticates the last chunk;
//  - whole, from a pipe into a pipe: the streamed path, in order;
//  - whole, chunk by chunk through wc_sealed_stream, as a reader that moves
//    the bytes itself (Python's SealedReader on a pipe) reads it: each chunk
//    with one byte of lookahead, which says whether it is the last.
// Windows are two 4 KiB chunks, so that small inputs span several. Besides
// the sanitizers' checks, the ways must agree: an input opens from the memfd
// exactly when it opens from the pipe, both give the same plaintext, each
// range is its slice of it, and wc_sealed_inspect reported its length.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "fuzz_secrets.h"
#include "fuzz_support.h"
#include "warpcrypt/warpcrypt.h"

namespace {

namespace fuzz = warpcrypt::fuzz;
using fuzz::Pipe;
using fuzz::require;
using fuzz::write_all;

// The header's PBKDF2 count is only authenticated after the KDF has run,
// so a mutated one would stall the fuzzer: wc_open_fd refuses counts above
// params.max_iterations, whose default (2,000,000) costs over a second per
// open. Ten times the seeds' count keeps executions fast, and inputs above
// it fuzz the refusal.
constexpr uint32_t kMaxIterations = 10 * fuzz::kSeedIterations;
// Argon2id's costs likewise: limits a little above the seeds' keep each KDF
// run under a millisecond, and the rest of the range fuzzes the refusals.
constexpr uint32_t kMaxArgon2Ops = 4 * fuzz::kSeedArgon2Ops;
constexpr uint64_t kMaxArgon2Memory = 8 * fuzz::kSeedArgon2Memory;

struct Secret {
  wc_seal_key_source source;
  std::span<const uint8_t> bytes;
};

struct Opened {
  wc_status status = WC_OK;
  std::vector<uint8_t> plaintext;
};

const wc_options &engine_options() {
  static const wc_options options = [] {
    wc_options o;
    wc_options_init(&o);
    o.backend = WC_BACKEND_CPU;
    o.threads = 2;
    o.chunk_bytes = 2 * 4096;
    return o;
  }();
  return options;
}

// The whole file, with the KDF caps.
wc_open_params open_params() {
  wc_open_params params;
  wc_open_params_init(&params);
  params.max_iterations = kMaxIterations;
  params.max_argon2_ops = kMaxArgon2Ops;
  params.max_argon2_memory = kMaxArgon2Memory;
  return params;
}

std::vector<uint8_t> read_to_end(int fd) {
  std::vector<uint8_t> bytes;
  uint8_t buffer[4096];
  for (;;) {
    const ssize_t got = read(fd, buffer, sizeof buffer);
    require(got >= 0, "read failed");
    if (got == 0) return bytes;
    bytes.insert(bytes.end(), buffer, buffer + got);
  }
}

int make_memfd(const char *name) {
  const int fd = memfd_create(name, MFD_CLOEXEC);
  require(fd >= 0, "memfd_create failed");
  return fd;
}

// Empties the memfd and rewinds it.
void reset(int fd) { require(ftruncate(fd, 0) == 0 && lseek(fd, 0, SEEK_SET) == 0, "cannot reset a memfd"); }

std::vector<uint8_t> memfd_contents(int fd) {
  require(lseek(fd, 0, SEEK_SET) == 0, "cannot rewind a memfd");
  return read_to_end(fd);
}

// Plaintext bytes [offset, offset + length) of the sealed file in `in_fd`
// (a memfd), through the memfd `out_fd`.
Opened open_memfd(int in_fd, int out_fd, const Secret &secret, uint64_t offset, uint64_t length) {
  // Each open leaves the input's offset past its end.
  require(lseek(in_fd, 0, SEEK_SET) == 0, "cannot rewind the input");
  reset(out_fd);
  wc_open_params params = open_params();
  params.offset = offset;
  params.length = length;
  Opened opened;
  opened.status = wc_open_fd(&engine_options(), &params, nullptr, out_fd, in_fd, secret.source, secret.bytes.data(),
                             secret.bytes.size());
  opened.plaintext = memfd_contents(out_fd);
  return opened;
}

// The whole file from a pipe into a pipe. Both pipes are made to hold the
// whole input (the plaintext is shorter), so that writing the input before
// the call and reading the output after it cannot block; nullopt where the
// kernel will not make them that large.
std::optional<Opened> open_pipe(std::span<const uint8_t> file, const Secret &secret) {
  Pipe in;
  Pipe out;
  if (!in.holds(file.size()) || !out.holds(file.size())) return std::nullopt;
  write_all(in.write_end(), file);
  in.close_write();
  Opened opened;
  const wc_open_params params = open_params();
  opened.status = wc_open_fd(&engine_options(), &params, nullptr, out.write_end(), in.read_end(), secret.source,
                             secret.bytes.data(), secret.bytes.size());
  out.close_write();
  opened.plaintext = read_to_end(out.read_end());
  return opened;
}

// The whole file chunk by chunk through wc_sealed_stream, reading it in
// order as from a pipe: a chunk is the last when fewer than a sealed chunk
// and one byte follow it.
Opened open_by_chunks(std::span<const uint8_t> file, const Secret &secret) {
  Opened opened;
  wc_sealed_stream *stream = nullptr;
  const wc_open_params params = open_params();
  const size_t header = std::min<size_t>(file.size(), WC_SEAL_HEADER_LEN);
  opened.status = wc_sealed_stream_open_new(&stream, &engine_options(), &params, nullptr, file.data(), header,
                                            secret.source, secret.bytes.data(), secret.bytes.size());
  if (opened.status != WC_OK) return opened;
  const size_t sealed_chunk = wc_sealed_stream_chunk_bytes(stream) + WC_SEAL_TAG_LEN;
  std::vector<uint8_t> chunk;
  for (size_t at = header, index = 0; opened.status == WC_OK; at += sealed_chunk, ++index) {
    const size_t rest = file.size() - std::min(at, file.size());
    const bool last = rest <= sealed_chunk;
    const size_t len = std::min(rest, sealed_chunk);
    // Room for what arrived, never what the unauthenticated chunk size asks.
    chunk.assign(len > WC_SEAL_TAG_LEN ? len - WC_SEAL_TAG_LEN : 0, 0xA5);
    size_t written = 0;
    opened.status = wc_sealed_stream_open(stream, nullptr, chunk.data(), chunk.size(), &written, index, last,
                                          file.data() + std::min(at, file.size()), len);
    if (opened.status != WC_OK) {
      require(written == 0 && std::all_of(chunk.begin(), chunk.end(), [](uint8_t b) { return b == 0 || b == 0xA5; }),
              "a chunk that failed released bytes");
    }
    opened.plaintext.insert(opened.plaintext.end(), chunk.begin(), chunk.begin() + static_cast<ptrdiff_t>(written));
    if (last) break;
  }
  wc_sealed_stream_free(stream);
  return opened;
}

// What a range open must give: [offset, offset + length) cut at the end.
std::vector<uint8_t> slice(const std::vector<uint8_t> &plaintext, uint64_t offset, uint64_t length) {
  const uint64_t begin = std::min<uint64_t>(offset, plaintext.size());
  const uint64_t end = begin + std::min<uint64_t>(length, plaintext.size() - begin);
  return {plaintext.begin() + static_cast<ptrdiff_t>(begin), plaintext.begin() + static_cast<ptrdiff_t>(end)};
}

void open_every_way(int in_fd, int out_fd, std::span<const uint8_t> file, const Secret &secret,
                    const std::optional<wc_sealed_info> &info) {
  const Opened whole = open_memfd(in_fd, out_fd, secret, 0, UINT64_MAX);
  const bool opens = whole.status == WC_OK;
  if (opens) {
    require(info.has_value(), "a file that opens failed wc_sealed_inspect");
    require(info->plaintext_len == whole.plaintext.size(), "wc_sealed_inspect's plaintext length is wrong");
  }

  if (const std::optional<Opened> streamed = open_pipe(file, secret)) {
    require((streamed->status == WC_OK) == opens, "the pipe and the memfd disagree on whether the file opens");
    if (opens) require(streamed->plaintext == whole.plaintext, "the pipe and the memfd give different plaintext");
  }

  const Opened by_chunks = open_by_chunks(file, secret);
  require((by_chunks.status == WC_OK) == opens, "chunk by chunk and the engine disagree on whether the file opens");
  if (opens) require(by_chunks.plaintext == whole.plaintext, "chunk by chunk gives different plaintext");

  // The input's length places the middle range, so the fuzzer moves it by
  // growing or shrinking the input; it spans chunks in the larger seeds.
  const uint64_t middle_offset = file.size() / 3;
  const uint64_t middle_length = file.size() / 3;
  const uint64_t past_end = file.size();
  const Opened middle = open_memfd(in_fd, out_fd, secret, middle_offset, middle_length);
  const Opened empty = open_memfd(in_fd, out_fd, secret, past_end, 1);
  if (opens) {
    require(middle.status == WC_OK && empty.status == WC_OK, "a range of a file that opens failed");
    require(middle.plaintext == slice(whole.plaintext, middle_offset, middle_length),
            "a range is not its slice of the plaintext");
    require(empty.plaintext.empty(), "a range past the end gave bytes");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const int in_fd = make_memfd("sealed-file");
  static const int out_fd = make_memfd("plaintext");
  const std::span<const uint8_t> file(data, size);
  reset(in_fd);
  write_all(in_fd, file);
  require(lseek(in_fd, 0, SEEK_SET) == 0, "cannot rewind the input");

  // As the CLI does, the key's length is that of the AEAD the header names.
  wc_sealed_info info{};
  std::optional<wc_sealed_info> inspected;
  if (wc_sealed_inspect(in_fd, &info, nullptr) == WC_OK) inspected = info;
  const size_t key_len = inspected ? wc_aead_key_len(inspected->aead) : fuzz::kKey.size();
  open_every_way(in_fd, out_fd, file, {WC_SEAL_KEY, {fuzz::kKey.data(), key_len}}, inspected);
  const std::span<const uint8_t> passphrase(reinterpret_cast<const uint8_t *>(fuzz::kPassphrase.data()),
                                            fuzz::kPassphrase.size());
  open_every_way(in_fd, out_fd, file, {WC_SEAL_PASSPHRASE, passphrase}, inspected);
  return 0;
}
