// How everything above the backends reaches them: one table of functions per
// backend, declared here and defined by the backend itself (cpu/, cuda/; a
// build without CUDA defines the CUDA table with entries that answer
// WC_ERR_NO_DEVICE). Core, the engine, the sealed format and the API call
// through these tables and include no backend header, so the dependencies
// point one way: every layer down to core, every backend up to core only.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/aead_backend.h"
#include "core/backend.h"

namespace warpcrypt {

struct CpuBackend {
  // A cipher bound to a key: random access for the parallel modes, otherwise
  // sequential; `options.threads` caps its threads.
  wc_status (*make_cipher)(BackendCipher *out, const wc_options &options, const wc_cipher &cipher,
                           wc_direction direction, const KeyMaterial &key);
  // One engine lane on a CPU thread, with a staging buffer of `capacity`.
  std::unique_ptr<Lane> (*make_lane)(const wc_cipher &cipher, wc_direction direction, const KeyMaterial &key,
                                     size_t capacity);
  // An AEAD bound to a key (nullptr if OpenSSL lacks it); batches spread over
  // `threads` threads (0: every core).
  std::unique_ptr<AeadCipher> (*make_aead)(const wc_aead &aead, std::span<const uint8_t> key, unsigned threads);
  // One AEAD message piece by piece (nullptr if OpenSSL refuses it).
  std::unique_ptr<AeadStream> (*make_aead_stream)(const wc_aead &aead, wc_direction direction,
                                                  std::span<const uint8_t> key, std::span<const uint8_t> nonce);
  // `openssl enc`'s key and IV from a passphrase, and bytes from the CSPRNG.
  wc_status (*derive_key_iv)(std::span<uint8_t> key_and_iv, wc_kdf kdf, const char *digest, uint32_t iterations,
                             std::span<const uint8_t> passphrase, std::span<const uint8_t> salt);
  wc_status (*random_bytes)(std::span<uint8_t> out);
};

struct CudaBackend {
  // `count` lanes on `device`, each a stream with pinned and device buffers
  // of `capacity`; WC_ERR_NO_DEVICE without a usable device.
  wc_status (*make_lanes)(std::vector<std::unique_ptr<Lane>> *out, int device, unsigned count, wc_backend backend,
                          const wc_cipher &cipher, wc_direction direction, const KeyMaterial &key, size_t capacity);
  // Whether host memory is page-locked (copies to and from it run at full
  // PCIe speed); false without CUDA.
  bool (*page_locked)(const void *host);
  // An AEAD for host memory run on the current device; WC_ERR_NO_DEVICE
  // without one.
  wc_status (*make_aead)(std::unique_ptr<AeadCipher> *out, const wc_aead &aead, std::span<const uint8_t> key);
};

extern const CpuBackend kCpuBackend;
extern const CudaBackend kCudaBackend;

}  // namespace warpcrypt
