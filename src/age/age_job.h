// Encrypting and decrypting age files on descriptors: the header here (its
// stanzas from age_keys), the payload as the engine's STREAM
// (engine/aead_stream.h) on its lanes, so chunks are sealed and opened on
// every lane at once. Armored files pass through an anonymous memory file
// (memfd), which the payload then reads or writes at any offset. Arguments
// are checked by the caller, and the job's plan made by it
// (engine::plan_stream_job) before any stanza is wrapped or unwrapped;
// failures are recorded in the monitor and returned.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "age/age_keys.h"
#include "engine/endpoint.h"
#include "engine/job_monitor.h"
#include "engine/placement.h"

namespace warpcrypt::age {

// Encrypts from in_fd's offset to its end to every recipient, writing the
// file (armored when `armor`) at out_fd's offset; the file key and the
// payload nonce come from crypto's random source. An scrypt recipient must
// be the only one.
wc_status run_encrypt_fd(const HostCrypto &crypto, const engine::Placement &plan, std::span<const Recipient> recipients,
                         bool armor, int out_fd, int in_fd, engine::JobMonitor &monitor, engine::JobTotals *totals);

// Decrypts the age file (binary or armored) read from in_fd's offset,
// writing plaintext [offset, offset + length) at out_fd's offset; anything
// but the whole file needs a regular input file. Only authenticated chunks
// are written.
wc_status run_decrypt_fd(const HostCrypto &crypto, const engine::Placement &plan, std::span<const Identity> identities,
                         uint64_t offset, uint64_t length, int out_fd, int in_fd, engine::JobMonitor &monitor,
                         engine::JobTotals *totals);

// What age-inspect tells of a file without any identity: its header's
// stanzas and the sizes that follow from its length.
struct Inspection {
  bool armored = false;
  std::vector<std::string> stanza_types;  // in the header's order
  PostQuantum postquantum = PostQuantum::unknown;
  uint64_t file_len = 0;    // the input's bytes, armor included
  uint64_t header_len = 0;  // the binary header, through the MAC line
  uint64_t armor_len = 0;   // file_len less the binary file's length
  PayloadSize payload;      // from the binary file's length after the header
};

// Reads the age file (binary or armored) from in_fd's offset to its end
// and fills *out: the header is parsed (never authenticated: that needs the
// file key) and the armor decoded whole, while the payload is only counted.
// A header, armor or payload length that breaks the format is WC_ERR_FORMAT
// with the monitor's detail naming the rule.
wc_status run_inspect_fd(int in_fd, Inspection *out, engine::JobMonitor &monitor, engine::JobTotals *totals);

}  // namespace warpcrypt::age
