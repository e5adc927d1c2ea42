// Sealing and opening files of the sealed format: the header here, the
// chunks as the engine's STREAM (engine/aead_stream.h) on its lanes.
// Arguments are checked by the caller, and the job's plan made by it
// (engine::plan_stream_job) before anything here runs; failures are
// recorded in the monitor and returned.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "core/aead_backend.h"
#include "engine/endpoint.h"
#include "engine/job_monitor.h"
#include "engine/placement.h"
#include "sealed/sealed_format.h"

namespace warpcrypt::sealed {

// Reads the header at the endpoint's offset: pread for a regular file, which
// leaves the offset alone; a pipe's header is consumed.
wc_status read_header(const engine::Endpoint &in, Header *header, std::array<uint8_t, kHeaderLen> *bytes,
                      const char **detail);

wc_status run_seal_fd(const HostCrypto &crypto, const engine::Placement &plan, const Header &header,
                      std::span<const uint8_t> secret, int out_fd, int in_fd, engine::JobMonitor &monitor,
                      engine::JobTotals *totals);

// Plaintext [params.offset, params.offset + params.length), cut at the end;
// the whole file when offset is 0 and length UINT64_MAX (the only range a
// pipe allows). `key_source` is the kind of secret the caller holds; it must
// be the file's. A header asking for more KDF work than params allow
// (max_iterations, max_argon2_ops, max_argon2_memory) is refused before the
// KDF runs.
wc_status run_open_fd(const HostCrypto &crypto, const engine::Placement &plan, const wc_open_params &params,
                      wc_seal_key_source key_source, std::span<const uint8_t> secret, int out_fd, int in_fd,
                      engine::JobMonitor &monitor, engine::JobTotals *totals);

// What a reader checks in a header before it runs the KDF: the caller's kind
// of secret (`key_source`) must be the file's, and the KDF's costs must be
// within `params`' limits (check_kdf_cost). Failures are recorded in the
// monitor.
wc_status accept_header(const Header &header, const wc_open_params &params, wc_seal_key_source key_source,
                        engine::JobMonitor &monitor);

}  // namespace warpcrypt::sealed
