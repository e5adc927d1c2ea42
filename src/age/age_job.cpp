#include "age/age_job.h"

#include <algorithm>
#include <cerrno>
#include <span>
#include <string>
#include <vector>

#include "age/age_armor.h"
#include "core/secret_bytes.h"
#include "engine/memory_file.h"

namespace warpcrypt::age {
namespace {

using engine::Endpoint;
using engine::JobMonitor;
using engine::JobTotals;
using engine::MemoryFile;

constexpr size_t kArmorPiece = size_t{1} << 20;


wc_status fail(JobMonitor &monitor, wc_status status, const char *detail) {
  monitor.fail_with_detail(status, detail);
  return status;
}

// Whether the last line of `bytes`, which ends with a newline, is the
// header's closing line.
bool ends_with_closing_line(std::string_view bytes) {
  const size_t previous = bytes.size() < 2 ? std::string_view::npos : bytes.rfind('\n', bytes.size() - 2);
  return bytes.substr(previous == std::string_view::npos ? 0 : previous + 1).starts_with("---");
}

// The header's bytes from the input's start: a regular file is read in
// growing pieces at offsets; a pipe a byte at a time, so nothing past the
// header is consumed.
wc_status read_header(const Endpoint &in, std::string *bytes, Header *header, JobMonitor &monitor) {
  bool need_more = true;
  const char *detail = nullptr;
  size_t want = in.seekable ? 4096 : 1;
  // parse_header starts from the first byte each time. A regular file's
  // reads double, so its parses cost twice the header in all; a pipe's
  // header is parsed at its closing line, and at any line once what was
  // read has doubled since the last parse, so that a long header costs
  // linear time too and a stream that is no age file is refused early.
  size_t parse_from = 0;
  while (true) {
    const size_t have = bytes->size();
    bytes->resize(have + want);
    size_t got = 0;
    if (!engine::read_at(in, reinterpret_cast<uint8_t *>(bytes->data() + have), want, have, &got)) {
      return monitor.fail_io(WC_IO_INPUT, errno);
    }
    bytes->resize(have + got);
    if (got != 0 && !in.seekable && bytes->size() < kMaxHeaderLen &&
        (bytes->back() != '\n' || (bytes->size() < parse_from && !ends_with_closing_line(*bytes)))) {
      continue;
    }
    parse_from = 2 * bytes->size();
    const wc_status status = parse_header(*bytes, header, &need_more, &detail);
    if (status == WC_OK) return WC_OK;
    if (!need_more || got == 0) return fail(monitor, WC_ERR_FORMAT, detail);
    if (in.seekable) want = std::min(want * 2, kMaxHeaderLen - bytes->size() + 1);
  }
}

// Copies in_fd's bytes through `step` (armoring or dearmoring) to `out`.
template <typename Step>
wc_status pump(const Endpoint &in, uint64_t *consumed, JobMonitor &monitor, Step step) {
  std::string piece(kArmorPiece, '\0');
  while (true) {
    size_t got = 0;
    if (!engine::read_at(in, reinterpret_cast<uint8_t *>(piece.data()), piece.size(), *consumed, &got)) {
      return monitor.fail_io(WC_IO_INPUT, errno);
    }
    *consumed += got;
    const wc_status status = step(std::string_view(piece.data(), got));
    if (status != WC_OK || got == 0) {
      secure_wipe(piece.data(), piece.size());
      return status;
    }
  }
}

// Enough of the start to tell armor from binary: past any whitespace, a
// '-' can only begin the armor, an 'a' only the binary header.
wc_status read_start(const Endpoint &in, std::string *start, JobMonitor &monitor) {
  while (start->size() < kMaxHeaderLen) {
    uint8_t byte = 0;
    size_t got = 0;
    if (!engine::read_at(in, &byte, 1, start->size(), &got)) return monitor.fail_io(WC_IO_INPUT, errno);
    if (got == 0) break;
    start->push_back(static_cast<char>(byte));
    if (byte != ' ' && byte != '\t' && byte != '\r' && byte != '\n') break;
  }
  return WC_OK;
}

// Decodes the armored file read from `in`, handing each piece of the binary
// file to `sink` as it comes. `start` is what read_start read: on a pipe it
// is the armor's first bytes, which cannot be read again. *consumed counts
// the armor's bytes read.
template <class Sink>
wc_status decode_armor(const Endpoint &in, const std::string &start, JobMonitor &monitor, uint64_t *consumed,
                       Sink sink) {
  ArmorDecoder decoder;
  std::vector<uint8_t> bytes;
  const char *detail = nullptr;
  *consumed = in.seekable ? 0 : start.size();
  auto decode = [&](std::string_view text) {
    bytes.clear();
    const wc_status status = text.empty() ? decoder.finish(&detail) : decoder.feed(text, &bytes, &detail);
    if (status != WC_OK) return fail(monitor, status, detail);
    return sink(std::span<const uint8_t>(bytes));
  };
  wc_status status = in.seekable ? WC_OK : decode(start);
  if (status == WC_OK) status = pump(in, consumed, monitor, decode);
  secure_wipe(bytes.data(), bytes.capacity());  // as every buffer a decryption passes its data through
  return status;
}

// The sizes that follow from a binary file of `binary_len` bytes whose
// header is `header`.
wc_status fill_inspection(const Header &header, uint64_t binary_len, Inspection *out, JobMonitor &monitor) {
  out->header_len = header.encoded_len;
  out->stanza_types.clear();
  out->stanza_types.reserve(header.stanzas.size());
  for (const Stanza &stanza : header.stanzas) out->stanza_types.push_back(stanza.type);
  out->postquantum = postquantum_of(header.stanzas);
  const char *detail = nullptr;
  // A regular file that shrank below its header since fstat is no payload.
  const uint64_t payload_len = binary_len > header.encoded_len ? binary_len - header.encoded_len : 0;
  if (payload_size(payload_len, &out->payload, &detail) != WC_OK) {
    return fail(monitor, WC_ERR_FORMAT, detail);
  }
  return WC_OK;
}

// A binary file: the header read as decrypting reads it, the rest counted
// (a regular file's length is its size).
wc_status inspect_binary(const Endpoint &in, std::string start, Inspection *out, JobMonitor &monitor,
                         JobTotals *totals) {
  std::string bytes = in.seekable ? std::string() : std::move(start);
  Header header;
  wc_status status = read_header(in, &bytes, &header, monitor);
  if (status != WC_OK) return status;
  uint64_t file_len = in.size;
  if (!in.seekable) {
    file_len = bytes.size();
    status = pump(in, &file_len, monitor, [](std::string_view) { return WC_OK; });
    if (status != WC_OK) return status;
  }
  totals->bytes_in = file_len;
  out->file_len = file_len;
  return fill_inspection(header, file_len, out, monitor);
}

// An armored file: decoded whole, so that the armor's every rule is
// checked, keeping only as much of the binary file as a header may take.
wc_status inspect_armored(const Endpoint &in, const std::string &start, Inspection *out, JobMonitor &monitor,
                          JobTotals *totals) {
  std::string kept;
  uint64_t binary_len = 0;
  uint64_t consumed = 0;
  const wc_status status = decode_armor(in, start, monitor, &consumed, [&](std::span<const uint8_t> piece) {
    const size_t keep = std::min(piece.size(), kMaxHeaderLen + 1 - std::min(kept.size(), kMaxHeaderLen + 1));
    kept.append(reinterpret_cast<const char *>(piece.data()), keep);
    binary_len += piece.size();
    return WC_OK;
  });
  if (status != WC_OK) return status;
  totals->bytes_in = consumed;
  Header header;
  bool need_more = false;
  const char *detail = nullptr;
  if (parse_header(kept, &header, &need_more, &detail) != WC_OK) return fail(monitor, WC_ERR_FORMAT, detail);
  out->file_len = consumed;
  out->armor_len = consumed - binary_len;
  return fill_inspection(header, binary_len, out, monitor);
}

wc_status encrypt_binary(const HostCrypto &crypto, const engine::Placement &plan, std::span<const Recipient> recipients,
                         const Endpoint &out, const Endpoint &in, JobMonitor &monitor, JobTotals *totals) {
  FileKey file_key;
  std::vector<Stanza> stanzas;
  const char *detail = nullptr;
  wc_status status = crypto.random->fill(file_key.bytes);
  if (status == WC_OK) status = wrap_all(crypto, recipients, file_key, &stanzas, &detail);
  std::string header;
  if (status == WC_OK) status = encode_header(crypto, stanzas, file_key, &header, &detail);
  std::array<uint8_t, kNonceLen> nonce{};
  if (status == WC_OK) status = crypto.random->fill(nonce);
  DerivedKey key;
  if (status == WC_OK) status = payload_key(crypto, file_key, nonce, &key);
  if (status != WC_OK) return fail(monitor, status, detail);
  header.append(nonce.begin(), nonce.end());
  if (!engine::write_at(out, reinterpret_cast<const uint8_t *>(header.data()), header.size(), 0)) {
    return monitor.fail_io(WC_IO_OUTPUT, errno);
  }
  totals->bytes_out += header.size();
  return engine::seal_stream(plan, payload_shape(header.size()), key.bytes, out, in, monitor, totals);
}

wc_status decrypt_binary(const HostCrypto &crypto, const engine::Placement &plan, std::span<const Identity> identities,
                         uint64_t offset, uint64_t length, std::string header_bytes, const Endpoint &out,
                         const Endpoint &in, JobMonitor &monitor, JobTotals *totals) {
  Header header;
  wc_status status = read_header(in, &header_bytes, &header, monitor);
  if (status != WC_OK) return status;
  // What the header read took beyond the header (a regular file's pieces).
  std::array<uint8_t, kNonceLen> nonce{};
  size_t got = std::min(kNonceLen, header_bytes.size() - header.encoded_len);
  std::copy_n(header_bytes.begin() + static_cast<std::ptrdiff_t>(header.encoded_len), got, nonce.begin());
  size_t more = 0;
  if (!engine::read_at(in, nonce.data() + got, kNonceLen - got, header.encoded_len + got, &more)) {
    return monitor.fail_io(WC_IO_INPUT, errno);
  }
  if (got + more != kNonceLen) return fail(monitor, WC_ERR_FORMAT, "truncated age file: no payload nonce after the header");
  totals->bytes_in = header.encoded_len + kNonceLen;
  FileKey file_key;
  const char *detail = nullptr;
  status = unwrap_file_key(crypto, header, identities, &file_key, &detail);
  if (status != WC_OK) return fail(monitor, status, detail);
  DerivedKey key;
  status = payload_key(crypto, file_key, nonce, &key);
  if (status != WC_OK) return status;
  // The header's MAC proved the file key: a chunk that fails was changed.
  monitor.set_chunk_failure("the payload was modified, truncated or reordered (the header authenticated)");
  return engine::open_stream(plan, payload_shape(header.encoded_len + kNonceLen), key.bytes, offset, length, out,
                             in, monitor, totals);
}

}  // namespace

wc_status run_encrypt_fd(const HostCrypto &crypto, const engine::Placement &plan, std::span<const Recipient> recipients,
                         bool armor, int out_fd, int in_fd, JobMonitor &monitor, JobTotals *totals) {
  if (recipients.empty()) return fail(monitor, WC_ERR_INVALID_ARGUMENT, "an age file needs at least one recipient");
  if (const char *detail = nullptr; check_recipients(recipients, &detail) != WC_OK) {
    return fail(monitor, WC_ERR_INVALID_ARGUMENT, detail);
  }
  Endpoint in;
  Endpoint out;
  if (engine::open_input_endpoint(&in, in_fd) != WC_OK) return monitor.fail_io(WC_IO_INPUT, errno);
  if (engine::open_endpoint(&out, out_fd) != WC_OK) return monitor.fail_io(WC_IO_OUTPUT, errno);
  if (!armor) {
    const wc_status status = encrypt_binary(crypto, plan, recipients, out, in, monitor, totals);
    engine::settle_offsets(in, out, *totals);
    return status;
  }
  // The binary file goes to memory, then out through the armor.
  MemoryFile binary;
  Endpoint middle;
  if (binary.fd() < 0 || engine::open_endpoint(&middle, binary.fd()) != WC_OK) return monitor.fail_io(WC_IO_OUTPUT, errno);
  JobTotals sealed;
  if (const wc_status status = encrypt_binary(crypto, plan, recipients, middle, in, monitor, &sealed);
      status != WC_OK) {
    return status;
  }
  if (engine::open_endpoint(&middle, binary.fd()) != WC_OK) return monitor.fail_io(WC_IO_OUTPUT, errno);
  ArmorEncoder encoder;
  std::string text;
  uint64_t read = 0;
  const wc_status status = pump(middle, &read, monitor, [&](std::string_view piece) {
    text.clear();
    encoder.feed({reinterpret_cast<const uint8_t *>(piece.data()), piece.size()}, &text);
    if (piece.empty()) encoder.finish(&text);
    if (!engine::write_at(out, reinterpret_cast<const uint8_t *>(text.data()), text.size(), totals->bytes_out)) {
      return monitor.fail_io(WC_IO_OUTPUT, errno);
    }
    totals->bytes_out += text.size();
    return WC_OK;
  });
  totals->bytes_in = sealed.bytes_in;
  if (status != WC_OK) return status;
  engine::settle_offsets(in, out, *totals);
  return monitor.status();
}

wc_status run_decrypt_fd(const HostCrypto &crypto, const engine::Placement &plan, std::span<const Identity> identities,
                         uint64_t offset, uint64_t length, int out_fd, int in_fd, JobMonitor &monitor,
                         JobTotals *totals) {
  if (identities.empty()) return fail(monitor, WC_ERR_INVALID_ARGUMENT, "decrypting needs at least one identity");
  Endpoint in;
  Endpoint out;
  if (engine::open_input_endpoint(&in, in_fd) != WC_OK) return monitor.fail_io(WC_IO_INPUT, errno);
  if (engine::open_endpoint(&out, out_fd) != WC_OK) return monitor.fail_io(WC_IO_OUTPUT, errno);
  const bool whole = offset == 0 && length == UINT64_MAX;
  if (!whole && !in.seekable) {
    return fail(monitor, WC_ERR_INVALID_ARGUMENT, "decrypting a range of an age file needs a regular input file");
  }
  std::string start;
  if (const wc_status status = read_start(in, &start, monitor); status != WC_OK) return status;
  if (!looks_armored(start)) {
    const wc_status status = decrypt_binary(crypto, plan, identities, offset, length,
                                            in.seekable ? std::string() : start, out, in, monitor, totals);
    engine::settle_offsets(in, out, *totals);
    return status;
  }
  MemoryFile binary;
  Endpoint middle;
  if (binary.fd() < 0 || engine::open_endpoint(&middle, binary.fd()) != WC_OK) return monitor.fail_io(WC_IO_INPUT, errno);
  uint64_t written = 0;
  uint64_t consumed = 0;
  wc_status status = decode_armor(in, start, monitor, &consumed, [&](std::span<const uint8_t> bytes) {
    if (!engine::write_at(middle, bytes.data(), bytes.size(), written)) return monitor.fail_io(WC_IO_INPUT, errno);
    written += bytes.size();
    return WC_OK;
  });
  if (status != WC_OK) return status;
  if (engine::open_endpoint(&middle, binary.fd()) != WC_OK) return monitor.fail_io(WC_IO_INPUT, errno);
  JobTotals opened;
  status = decrypt_binary(crypto, plan, identities, offset, length, std::string(), out, middle, monitor, &opened);
  totals->bytes_in = consumed;
  totals->bytes_out = opened.bytes_out;
  engine::settle_offsets(in, out, *totals);
  return status;
}

wc_status run_inspect_fd(int in_fd, Inspection *out, JobMonitor &monitor, JobTotals *totals) {
  Endpoint in;
  if (engine::open_input_endpoint(&in, in_fd) != WC_OK) return monitor.fail_io(WC_IO_INPUT, errno);
  std::string start;
  wc_status status = read_start(in, &start, monitor);
  if (status != WC_OK) return status;
  out->armored = looks_armored(start);
  status = out->armored ? inspect_armored(in, start, out, monitor, totals)
                        : inspect_binary(in, std::move(start), out, monitor, totals);
  // A regular file was read at offsets: its own offset stays where it was.
  if (status != WC_OK) return status;
  return monitor.status();
}

}  // namespace warpcrypt::age
