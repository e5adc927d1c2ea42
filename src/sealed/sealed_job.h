// Sealing and opening files of the sealed format on the engine's lanes:
// each lane, an AEAD bound to the file key, claims windows of whole chunks
// from the engine's lane scheduler; regular files are read and written at
// each window's offset by all lanes at once, pipes in order. Arguments are
// checked by the caller; failures are recorded in the monitor and returned.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "core/aead_backend.h"
#include "engine/endpoint.h"
#include "engine/job_monitor.h"
#include "sealed/sealed_format.h"

namespace warpcrypt::sealed {

// Reads the header at the endpoint's offset: pread for a regular file, which
// leaves the offset alone; a pipe's header is consumed.
wc_status read_header(const engine::Endpoint &in, Header *header, std::array<uint8_t, kHeaderLen> *bytes,
                      const char **detail);

wc_status run_seal_fd(const wc_options &options, const Header &header, std::span<const uint8_t> secret, int out_fd,
                      int in_fd, engine::JobMonitor &monitor, engine::JobTotals *totals);

// Plaintext [params.offset, params.offset + params.length), cut at the end;
// the whole file when offset is 0 and length UINT64_MAX (the only range a
// pipe allows). `key_source` is the kind of secret the caller holds; it must
// be the file's. A header asking for more KDF work than params allow
// (max_iterations, max_argon2_ops, max_argon2_memory) is refused before the
// KDF runs.
wc_status run_open_fd(const wc_options &options, const wc_open_params &params, wc_seal_key_source key_source,
                      std::span<const uint8_t> secret, int out_fd, int in_fd, engine::JobMonitor &monitor,
                      engine::JobTotals *totals);

// What a reader checks in a header before it runs the KDF: the caller's kind
// of secret (`key_source`) must be the file's, and the KDF's costs must be
// within `params`' limits (check_kdf_cost). Failures are recorded in the
// monitor.
wc_status accept_header(const Header &header, const wc_open_params &params, wc_seal_key_source key_source,
                        engine::JobMonitor &monitor);

// One chunk at a time, for callers that read and write the bytes themselves
// (wc_sealed_stream): the nonce, associated data and length rules the lanes
// apply. Sealing takes exactly chunk_size bytes, or for the last chunk 1 to
// chunk_size (0 only as chunk 0, the empty file's one chunk), and writes
// len + kTagLen bytes to `out`.
wc_status seal_chunk(const AeadCipher &cipher, const Header &header,
                     const std::array<uint8_t, kHeaderLen> &header_bytes, uint64_t index, bool last,
                     uint8_t *out, const uint8_t *in, size_t len, engine::JobMonitor &monitor);
// Opens a sealed chunk of `sealed_len` bytes into sealed_len - kTagLen bytes
// of `out`: WC_ERR_FORMAT for a length no sealing gives that chunk (a short
// chunk that is not the last, an empty final chunk after chunk 0),
// WC_ERR_AUTH (the chunk recorded in the monitor) with `out` zeroed when the
// tag does not match.
wc_status open_chunk(const AeadCipher &cipher, const Header &header,
                     const std::array<uint8_t, kHeaderLen> &header_bytes, uint64_t index, bool last,
                     uint8_t *out, const uint8_t *in, size_t sealed_len, engine::JobMonitor &monitor);

}  // namespace warpcrypt::sealed
