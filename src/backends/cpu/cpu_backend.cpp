#include "backends/cpu/cpu_backend.h"

#include <openssl/crypto.h>

#include <new>

#include "core/secret_bytes.h"
#include "backends/cpu/evp_cipher.h"
#include "backends/cpu/salsa20.h"

namespace warpcrypt::cpu {
namespace {

std::unique_ptr<RandomAccessCipher> make_random_access(const wc_cipher &cipher, wc_direction direction,
                                                       const KeyMaterial &key) {
  if (cipher.primitive == Primitive::salsa20) return make_salsa20(key);
  return make_evp_random_access(cipher, direction, key);
}

// A CPU lane is the cipher on whichever thread runs it: the engine supplies
// the parallelism, one lane per thread.
class CpuLane final : public Lane {
 public:
  CpuLane(std::unique_ptr<RandomAccessCipher> cipher, size_t capacity)
      : cipher_(std::move(cipher)), capacity_(capacity) {}
  // The staging buffer held plaintext.
  ~CpuLane() override {
    if (staging_ == nullptr) return;
    secure_wipe(staging_, capacity_);
    ::operator delete(staging_, std::align_val_t{kHostPageBytes});
  }
  CpuLane(const CpuLane &) = delete;
  CpuLane &operator=(const CpuLane &) = delete;

  // Allocated on first use: work on host buffers never stages.
  uint8_t *staging() override {
    if (staging_ == nullptr) {
      staging_ = static_cast<uint8_t *>(::operator new(capacity_, std::align_val_t{kHostPageBytes}, std::nothrow));
    }
    return staging_;
  }
  bool reaches(const void *) const override { return true; }
  wc_status transform(uint64_t position, const uint8_t chain[16], const uint8_t *in, uint8_t *out,
                      size_t len) override {
    return cipher_->transform_at(position, chain, in, out, len);
  }
  wc_backend backend() const override { return WC_BACKEND_CPU; }

 private:
  std::unique_ptr<RandomAccessCipher> cipher_;
  uint8_t *staging_ = nullptr;
  size_t capacity_;
};

}  // namespace

wc_status make_cipher(BackendCipher *out, const wc_cipher &cipher, wc_direction direction, const KeyMaterial &key) {
  if (!is_parallel(cipher, direction)) {
    out->sequential = make_evp_sequential(cipher, direction, key);
    return out->sequential ? WC_OK : WC_ERR_CRYPTO_LIBRARY;
  }
  out->random_access = make_random_access(cipher, direction, key);
  return out->random_access ? WC_OK : WC_ERR_CRYPTO_LIBRARY;
}

std::unique_ptr<Lane> make_lane(const wc_cipher &cipher, wc_direction direction, const KeyMaterial &key,
                                size_t capacity) {
  std::unique_ptr<RandomAccessCipher> random_access = make_random_access(cipher, direction, key);
  if (!random_access) return nullptr;
  return std::make_unique<CpuLane>(std::move(random_access), capacity);
}

const char *openssl_version() { return OpenSSL_version(OPENSSL_VERSION); }

}  // namespace warpcrypt::cpu
