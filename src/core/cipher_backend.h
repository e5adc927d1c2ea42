// The contract between the mode logic in core/ and a backend (cpu/, cuda/).
// A backend knows how to run a cipher; core knows where in the stream each
// byte sits, what to hold back, and how padding works.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "core/cipher_registry.h"

namespace warpcrypt {

// Key material handed to a backend. The backend copies what it keeps and
// wipes its copy when destroyed.
struct KeyMaterial {
  std::span<const uint8_t> key;
  std::span<const uint8_t> iv;
};

// A cipher bound to a key, an IV and a direction, for the modes that can start
// anywhere in the stream (is_parallel). The backend is free to split a call
// across threads or GPU blocks.
class RandomAccessCipher {
 public:
  virtual ~RandomAccessCipher() = default;

  // Transforms `len` bytes that start at stream byte `position`. `chain` holds
  // the 16 bytes of IV || ciphertext just before `position`; only the modes
  // that chain_on_ciphertext read it. `position` and, except for the last
  // piece of a stream, `len` are multiples of segment_granularity(). `out`
  // may equal `in`.
  virtual wc_status transform_at(uint64_t position, const uint8_t chain[16], const uint8_t *in,
                                 uint8_t *out, size_t len) = 0;

  // The backend that ran the last transform_at (the automatic policy picks
  // per call).
  virtual wc_backend last_backend() const = 0;
};

// A cipher whose output depends on everything before it (OFB, and CBC and
// CFB encryption): each call continues where the last stopped.
class SequentialCipher {
 public:
  virtual ~SequentialCipher() = default;
  virtual wc_status transform_next(const uint8_t *in, uint8_t *out, size_t len) = 0;
};

// A plain cipher keyed on one device, for the engine's GPU lanes: it queues
// the transform of a chunk in that device's memory on a lane's stream (the
// transfer lane, engine/transfer_lane.h, moves the chunk up and back).
class DeviceCipher {
 public:
  virtual ~DeviceCipher() = default;
  // transform_at's work on `len` bytes of device memory, in place, queued on
  // `stream` (of the cipher's device).
  virtual wc_status queue(uint64_t position, const uint8_t chain[16], uint8_t *device, size_t len,
                          wc_cuda_stream stream) const = 0;
};

// One worker of the streaming engine: a CPU thread, or a CUDA stream with
// page-locked and device buffers of its own (a transfer lane and a
// DeviceCipher). The engine hands a lane whole chunks, from one thread at a
// time.
// A page of host memory: what a lane's staging buffer, and the engine's
// I/O buffers, are aligned to, so that file bytes can be placed in them by
// their offset within a page (engine/io_buffer.h).
inline constexpr size_t kHostPageBytes = 4096;

class Lane {
 public:
  virtual ~Lane() = default;

  // Host memory for one chunk (the capacity the lane was made with) that the
  // lane transforms from and to at full speed: page-locked for a GPU lane.
  // The engine reads file input straight into it, so it starts on a page:
  // the kernel's copy from the page cache into memory a few bytes into a
  // page is the slow case (engine/io_buffer.h). nullptr when memory for it
  // runs out.
  virtual uint8_t *staging() = 0;
  // Whether transform() takes this host memory as it is; if not, the engine
  // copies it through staging() (a GPU lane and pageable memory).
  virtual bool reaches(const void *host) const = 0;
  // RandomAccessCipher::transform_at for one chunk, at most the capacity.
  virtual wc_status transform(uint64_t position, const uint8_t chain[16], const uint8_t *in, uint8_t *out,
                              size_t len) = 0;
  virtual wc_backend backend() const = 0;
};

// When a backend cuts transform_at's range into pieces every `piece` bytes,
// the chain bytes of each: piece 0 takes `chain`; in the modes that chain on
// ciphertext, piece i takes the 16 input bytes before it. They are read
// before any piece runs, because in-place work overwrites them. 16 bytes per
// piece.
inline std::vector<uint8_t> piece_chains(const wc_cipher &cipher, const uint8_t chain[16], const uint8_t *in,
                                         size_t len, size_t piece) {
  const size_t pieces = (len + piece - 1) / piece;
  std::vector<uint8_t> chains(16 * pieces);
  if (chain != nullptr && pieces != 0) std::memcpy(chains.data(), chain, 16);
  if (chains_on_ciphertext(cipher)) {
    for (size_t i = 1; i < pieces; ++i) std::memcpy(&chains[16 * i], in + i * piece - 16, 16);
  }
  return chains;
}

struct BackendCipher {
  std::unique_ptr<RandomAccessCipher> random_access;  // set for is_parallel modes
  std::unique_ptr<SequentialCipher> sequential;       // set otherwise
};

}  // namespace warpcrypt
