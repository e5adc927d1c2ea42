// AES-GCM with 12-byte nonces for x86-64 CPUs with VAES, VPCLMULQDQ and
// AVX-512 (F, VL, BW) enabled by the OS: 16 blocks a step, four to a zmm
// register, GHASH over 16 blocks with one reduction. The CPU AEAD
// (evp_aead.cpp) runs a message here when the CPU has it and the message
// fits; everything else stays on OpenSSL.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::cpu {

// True when cpuid reports the instructions and xgetbv shows the OS saves
// the opmask and zmm registers.
bool vaes_gcm_supported();

// The one nonce length this implementation takes (J0 = nonce || 1).
inline constexpr size_t kVaesGcmNonceLen = 12;

// AES round keys and the powers H^1..H^16 of GCM's hash key, computed once
// per key and wiped on destruction. Const calls may run from many threads.
class VaesGcmKey {
 public:
  // nullptr when the CPU lacks the instructions or the key is not 16, 24 or
  // 32 bytes.
  static std::unique_ptr<VaesGcmKey> make(std::span<const uint8_t> key);
  ~VaesGcmKey();
  VaesGcmKey(const VaesGcmKey &) = delete;
  VaesGcmKey &operator=(const VaesGcmKey &) = delete;

  // As the API checked it: `nonce` is kVaesGcmNonceLen bytes, len at most
  // aead_max_message_len (so the 32-bit counter never wraps), out equals in
  // or does not overlap it, tag_len at most 16.
  void seal(const uint8_t *nonce, const uint8_t *aad, size_t aad_len, const uint8_t *in, uint8_t *out, size_t len,
            uint8_t *tag, size_t tag_len) const;

  // Decrypts into `out` and compares the tag in constant time: WC_OK, or
  // WC_ERR_AUTH with `out` holding the unauthenticated plaintext, which the
  // caller zeroes (as with OpenSSL's EVP path).
  wc_status open(const uint8_t *nonce, const uint8_t *aad, size_t aad_len, const uint8_t *in, uint8_t *out, size_t len,
                 const uint8_t *tag, size_t tag_len) const;

  // The same, for one message cut into up to `workers` segments of whole
  // 256-byte steps (the last takes the rest) that run on the thread pool:
  // each runs CTR from its own counter and hashes its ciphertext from zero,
  // and the hashes are combined with powers of H. The output is the same as
  // seal/open's; opening checks the tag only after every segment is done.
  // Not from inside a ThreadPool::parallel_for task.
  void seal_segmented(const uint8_t *nonce, const uint8_t *aad, size_t aad_len, const uint8_t *in, uint8_t *out,
                      size_t len, uint8_t *tag, size_t tag_len, unsigned workers) const;
  wc_status open_segmented(const uint8_t *nonce, const uint8_t *aad, size_t aad_len, const uint8_t *in, uint8_t *out,
                           size_t len, const uint8_t *tag, size_t tag_len, unsigned workers) const;

 private:
  VaesGcmKey() = default;

  // Laid out as 16-byte blocks so the vector code loads them directly.
  // powers_[16 - k] holds H^k (pre-multiplied by x for the reflected
  // GHASH); the three zero blocks after H^1 let a masked tail load four
  // powers past the end.
  alignas(64) uint8_t round_keys_[15][16] = {};
  alignas(64) uint8_t powers_[19][16] = {};
  int rounds_ = 0;
};

}  // namespace warpcrypt::cpu
