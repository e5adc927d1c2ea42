// How everything above the backends reaches them: one table of functions per
// backend, declared here and defined by the backend itself (backends/cpu/,
// backends/cuda/; a build without CUDA links backends/cuda/absent_table.cpp,
// whose entries answer WC_ERR_NO_DEVICE). Core, the engine, the sealed format and the API call
// through these tables and include no backend header, so the dependencies
// point one way: every layer down to core, every backend up to core only.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/aead_backend.h"
#include "core/cipher_backend.h"

namespace warpcrypt {

struct CpuBackend {
  // A cipher bound to a key: random access for the parallel modes, otherwise
  // sequential. Each call runs on the calling thread: the engine's lanes
  // spread the work over threads.
  wc_status (*make_cipher)(BackendCipher *out, const wc_cipher &cipher, wc_direction direction,
                           const KeyMaterial &key);
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
  // PBKDF2-HMAC and HKDF (RFC 5869) with a named digest, for the formats.
  wc_status (*pbkdf2)(std::span<uint8_t> out, const char *digest, uint32_t iterations,
                      std::span<const uint8_t> passphrase, std::span<const uint8_t> salt);
  wc_status (*hkdf)(std::span<uint8_t> out, const char *digest, std::span<const uint8_t> secret,
                    std::span<const uint8_t> salt, std::span<const uint8_t> info);
  // Argon2id (libsodium's crypto_pwhash, one lane): `ops` passes over
  // `memory` bytes, a multiple of 1 KiB.
  wc_status (*argon2id)(std::span<uint8_t> out, uint32_t ops, uint64_t memory, std::span<const uint8_t> passphrase,
                        std::span<const uint8_t> salt);
  wc_status (*random_bytes)(std::span<uint8_t> out);
  // HMAC with a named digest; `out` is the digest's length.
  wc_status (*hmac)(std::span<uint8_t> out, const char *digest, std::span<const uint8_t> key,
                    std::span<const uint8_t> message);
  // scrypt (RFC 7914) with N = 2^log2_n, r = 8 and p = 1, as age uses it;
  // WC_ERR_OUT_OF_MEMORY where its 2^log2_n KiB cannot be allocated.
  wc_status (*scrypt)(std::span<uint8_t> out, std::span<const uint8_t> passphrase, std::span<const uint8_t> salt,
                      unsigned log2_n);
  // X25519 (RFC 7748): scalar * point, or scalar * the base point when
  // `point` is empty. WC_ERR_CRYPTO_LIBRARY for an all-zero result (a
  // low-order point), which RFC 7748 tells a protocol to refuse.
  wc_status (*x25519)(std::span<uint8_t, 32> out, std::span<const uint8_t, 32> scalar,
                      std::span<const uint8_t> point);
  // Ed25519 (RFC 8032) from a 32-byte seed: its public key, a signature,
  // and the check of one (WC_ERR_AUTH for a signature that does not verify,
  // non-canonical encodings and small-order keys included).
  wc_status (*ed25519_public_key)(std::span<uint8_t, 32> public_key, std::span<const uint8_t, 32> seed);
  wc_status (*ed25519_sign)(std::span<uint8_t, 64> signature, std::span<const uint8_t> message,
                            std::span<const uint8_t, 32> seed);
  wc_status (*ed25519_verify)(std::span<const uint8_t, 64> signature, std::span<const uint8_t> message,
                              std::span<const uint8_t, 32> public_key);
};

struct CudaBackend {
  // False in a build without CUDA, whose table answers WC_ERR_NO_DEVICE
  // (and zero devices) everywhere.
  bool compiled_in;
  // The number of usable devices (0 without a driver or GPU), and the
  // properties of one, given a valid ordinal.
  int (*device_count)();
  // Whether the CUDA driver's library loads: a millisecond to find out, where
  // counting the devices starts the driver, which takes a fifth of a second
  // on a GPU machine. False on a machine without NVIDIA's driver.
  bool (*driver_present)();
  wc_status (*device_info)(wc_device_info *info, int device);
  // The runtime's and the driver's CUDA versions (wc_cuda_versions).
  wc_status (*versions)(int *runtime, int *driver);
  // `count` lanes on `device`, each a stream with pinned and device buffers
  // of `capacity`; WC_ERR_NO_DEVICE without a usable device.
  wc_status (*make_lanes)(std::vector<std::unique_ptr<Lane>> *out, int device, unsigned count,
                          const wc_cipher &cipher, wc_direction direction, const KeyMaterial &key, size_t capacity);
  // Whether this process has started `device` (a valid ordinal) for lanes
  // already: its context and tables are up, so more lanes cost only their
  // buffers, which are pooled.
  bool (*device_started)(int device);
  // Whether host memory is page-locked (copies to and from it run at full
  // PCIe speed); false without CUDA.
  bool (*page_locked)(const void *host);
  // An AEAD for host memory, run on `devices` (valid ordinals; empty: the
  // caller's current device at each call), and for device memory, worked
  // where it lives (AeadCipher::queue_device); WC_ERR_NO_DEVICE without a
  // device.
  wc_status (*make_aead)(std::unique_ptr<AeadCipher> *out, const wc_aead &aead, std::span<const uint8_t> key,
                         std::span<const int> devices);
  // Work on device memory, queued on the caller's stream once the api layer
  // has checked every argument: a plain cipher at a stream offset
  // (WC_ERR_BACKEND_UNAVAILABLE for modes the GPU does not run), and a
  // CBC/CFB encryption batch.
  wc_status (*transform_device_async)(const wc_cipher &cipher, wc_direction direction, const KeyMaterial &key,
                                      uint64_t stream_offset, const uint8_t *in, uint8_t *out, size_t len,
                                      wc_cuda_stream stream);
  wc_status (*batch_encrypt_device_async)(const wc_cipher &cipher, std::span<const uint8_t> key, bool padding,
                                          const uint8_t *in, uint8_t *out,
                                          std::span<const wc_batch_message> messages, const uint8_t *ivs,
                                          wc_cuda_stream stream);
};

extern const CpuBackend kCpuBackend;
extern const CudaBackend kCudaBackend;

}  // namespace warpcrypt
