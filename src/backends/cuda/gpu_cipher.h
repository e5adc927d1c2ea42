// The GPU backend's view of one keyed cipher, and the calls that queue its
// kernels on a stream. Host code only; included by the CUDA sources.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "core/aes_key_schedule.h"
#include "core/cipher_backend.h"
#include "backends/cuda/arx_device.cuh"

namespace warpcrypt::cuda {

// The optimised kernels, or the one-thread-per-block reference (the
// benchmarks compare the two).
enum class Implementation { optimized, reference };

// The reference kernels where the environment says
// WARPCRYPT_GPU_KERNELS=reference (benchmarks and cross-checks, as
// OPENSSL_ia32cap steers OpenSSL), else the optimised ones. Read at each
// keying, so a test may switch it between calls.
Implementation selected_implementation();

// Modes the GPU runs: ECB, CTR, Salsa20 and ChaCha20 both ways, CBC and CFB128
// decryption. CBC/CFB encryption run only as batches.
bool gpu_supports(const wc_cipher &cipher, wc_direction direction);

// Plain data describing a keyed cipher, passed by value into kernel
// parameters; wiped on destruction.
struct KeyedGpuCipher {
  const wc_cipher *cipher = nullptr;
  wc_direction direction = WC_ENCRYPT;
  Implementation implementation = Implementation::optimized;
  aes::RoundKeys encrypt_keys{};
  aes::RoundKeys decrypt_keys{};
  uint8_t iv[16]{};
  ArxKey arx{};

  KeyedGpuCipher() = default;
  KeyedGpuCipher(const wc_cipher &c, wc_direction d, const KeyMaterial &key, Implementation impl);
  ~KeyedGpuCipher();
  KeyedGpuCipher(const KeyedGpuCipher &) = delete;
  KeyedGpuCipher &operator=(const KeyedGpuCipher &) = delete;
};

// Queues the transform of `len` bytes of device memory at stream byte
// `position` on `stream`. `chain` is the 16 bytes of IV || ciphertext before
// `position` (CBC and CFB). Returns without synchronising.
wc_status transform_device(const KeyedGpuCipher &keyed, uint64_t position, const uint8_t chain[16],
                           const uint8_t *in, uint8_t *out, size_t len, cudaStream_t stream);

// Queues a CBC/CFB encryption batch; `messages` and `ivs` are host memory.
wc_status batch_encrypt_device(const KeyedGpuCipher &keyed, bool padding, const uint8_t *in,
                               uint8_t *out, const wc_batch_message *messages, size_t count,
                               const uint8_t *ivs, cudaStream_t stream);

}  // namespace warpcrypt::cuda
