// A chunked AEAD STREAM (Hoang, Reyhanitabar, Rogaway and Vizar, 2015) on
// the engine's lanes: the plaintext in fixed-size chunks, each sealed under
// nonce = fixed bytes || big-endian chunk counter || last-chunk flag, so
// truncation, reordering and splicing are detected. The sealed format and
// age's payload are both this construction with their own parameters
// (StreamShape); the format around the chunks (its header, where the chunks
// start) stays the caller's. Each lane, an AEAD bound to the stream's key,
// claims windows of whole chunks from the lane scheduler; regular files are
// read and written at each window's offset by all lanes at once, pipes in
// order. Failures are recorded in the monitor and returned.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "core/aead_backend.h"
#include "core/aead_registry.h"
#include "engine/endpoint.h"
#include "engine/job_monitor.h"
#include "engine/placement.h"

namespace warpcrypt::engine {

inline constexpr size_t kStreamTagLen = 16;
inline constexpr size_t kStreamNonceLen = 12;

// The sentences a reader fails with, in the format's own words (static,
// secret-free: they go to wc_job.detail).
struct StreamMessages {
  const char *no_chunk;     // the body holds not even one tag
  const char *short_chunk;  // the last chunk is shorter than its tag
  const char *too_long;     // more chunks than the counter can number
  const char *empty_final;  // an empty final chunk after the first
};

// One format's STREAM.
struct StreamShape {
  const wc_aead *aead = nullptr;  // its nonce is kStreamNonceLen bytes, its tag kStreamTagLen
  uint64_t chunk_size = 0;        // plaintext per chunk
  // nonce = fixed[0, 11 - counter_len) || counter (counter_len bytes,
  // big-endian) || flag (1 for the last chunk, else 0).
  std::array<uint8_t, kStreamNonceLen> fixed{};
  unsigned counter_len = 4;
  std::span<const uint8_t> aad;  // every chunk's associated data
  // Where the first chunk starts in the file: the input when opening, the
  // output when sealing (what comes before is the caller's).
  uint64_t body_offset = 0;
  StreamMessages messages{};

  uint64_t sealed_chunk_size() const { return chunk_size + kStreamTagLen; }
  // The counter's limit: 2^(8 * counter_len) chunks, at most 2^63.
  uint64_t max_chunks() const { return counter_len >= 8 ? uint64_t{1} << 63 : uint64_t{1} << (8 * counter_len); }
  std::array<uint8_t, kStreamNonceLen> chunk_nonce(uint64_t index, bool last) const;
};

// What a body of `body_len` bytes (the file after body_offset) holds: every
// chunk but the last is chunk_size + 16 bytes; the last is the rest, at
// least a tag.
struct StreamLayout {
  uint64_t chunks = 0;
  uint64_t last_chunk_len = 0;  // plaintext bytes in the last chunk
  uint64_t plaintext_len = 0;
};
// WC_ERR_FORMAT (and *detail) for a body no sealing could have produced.
wc_status layout_of(const StreamShape &shape, uint64_t body_len, StreamLayout *layout, const char **detail);

// The STREAM rule a reader checks when it reaches the end: the final chunk
// is empty only when the whole plaintext is. Without it, a file cut after
// any chunk and given 16 bytes of "empty final chunk" would look whole to a
// reader that skips empty chunks. WC_ERR_FORMAT (and *detail) if broken.
wc_status check_final_chunk(const StreamShape &shape, uint64_t index, uint64_t plaintext_len, const char **detail);

// One chunk at a time, for callers that read and write the bytes themselves
// (wc_sealed_stream), under the rules the lanes apply. Sealing takes exactly
// chunk_size bytes, or for the last chunk 1 to chunk_size (0 only as chunk
// 0, an empty plaintext's one chunk), and writes len + kStreamTagLen bytes
// to `out`. Failures are recorded in the monitor.
wc_status seal_chunk(const AeadCipher &cipher, const StreamShape &shape, uint64_t index, bool last, uint8_t *out,
                     const uint8_t *in, size_t len, JobMonitor &monitor);
// Opens a sealed chunk of `sealed_len` bytes into sealed_len - kStreamTagLen
// bytes of `out`: WC_ERR_FORMAT for a length no sealing gives that chunk (a
// short chunk that is not the last, an empty final chunk after chunk 0),
// WC_ERR_AUTH (the chunk recorded in the monitor) with `out` zeroed when the
// tag does not match.
wc_status open_chunk(const AeadCipher &cipher, const StreamShape &shape, uint64_t index, bool last, uint8_t *out,
                     const uint8_t *in, size_t sealed_len, JobMonitor &monitor);

// Seals everything the input holds from its position into chunks written
// from shape.body_offset of the output on. The caller opened the endpoints
// and wrote whatever precedes the body; `totals` counts what this call adds.
wc_status seal_stream(const Placement &plan, const StreamShape &shape, std::span<const uint8_t> key,
                      const Endpoint &out, const Endpoint &in, JobMonitor &monitor, JobTotals *totals);

// Opens the chunks from shape.body_offset of the input, writing plaintext
// [offset, offset + length) (cut at the end; anything but 0 and UINT64_MAX
// needs a seekable input) from the output's position on. Only the chunks
// that hold the range are read and authenticated, the final one whenever
// the range reaches the end; an empty range opens the last chunk, so a
// wrong key or a damaged file fails all the same. Nothing from a chunk that
// did not authenticate is written.
wc_status open_stream(const Placement &plan, const StreamShape &shape, std::span<const uint8_t> key,
                      uint64_t offset, uint64_t length, const Endpoint &out, const Endpoint &in,
                      JobMonitor &monitor, JobTotals *totals);

}  // namespace warpcrypt::engine
