// `openssl enc -a`'s base64 (warpcrypt/text.h), on the host-crypto
// provider's coder.
#include <memory>
#include <new>

#include "core/host_crypto.h"
#include "warpcrypt/warpcrypt.h"

using warpcrypt::TextCoder;

struct wc_base64 {
  std::unique_ptr<TextCoder> coder;
  bool dead = false;  // after a failure: the coder's state is no longer trusted
};

wc_status wc_base64_new(wc_base64 **coder, wc_direction direction, int one_line) {
  if (coder == nullptr) return WC_ERR_INVALID_ARGUMENT;
  *coder = nullptr;
  if (direction != WC_ENCRYPT && direction != WC_DECRYPT) return WC_ERR_INVALID_ARGUMENT;
  auto made = std::unique_ptr<wc_base64>(new (std::nothrow) wc_base64);
  if (!made) return WC_ERR_OUT_OF_MEMORY;
  made->coder = warpcrypt::kHostCrypto.base64(direction == WC_ENCRYPT, one_line != 0);
  if (!made->coder) return WC_ERR_OUT_OF_MEMORY;
  *coder = made.release();
  return WC_OK;
}

size_t wc_base64_update_bound(const wc_base64 *coder, size_t in_len) {
  return coder != nullptr ? coder->coder->update_bound(in_len) : 0;
}

size_t wc_base64_final_bound(void) { return TextCoder::kFinalBound; }

wc_status wc_base64_update(wc_base64 *coder, uint8_t *out, size_t out_cap, size_t *out_len, const uint8_t *in,
                           size_t in_len) {
  if (out_len != nullptr) *out_len = 0;
  if (coder == nullptr || out_len == nullptr || (in == nullptr && in_len != 0) || out == nullptr) {
    return WC_ERR_INVALID_ARGUMENT;
  }
  if (coder->dead) return WC_ERR_FORMAT;
  if (out_cap < coder->coder->update_bound(in_len)) return WC_ERR_OUTPUT_TOO_SMALL;
  const wc_status status = coder->coder->update({in, in_len}, out, out_len);
  if (status != WC_OK) {
    coder->dead = true;
    *out_len = 0;
  }
  return status;
}

wc_status wc_base64_final(wc_base64 *coder, uint8_t *out, size_t out_cap, size_t *out_len) {
  if (out_len != nullptr) *out_len = 0;
  if (coder == nullptr || out_len == nullptr || out == nullptr) return WC_ERR_INVALID_ARGUMENT;
  if (coder->dead) return WC_ERR_FORMAT;
  if (out_cap < TextCoder::kFinalBound) return WC_ERR_OUTPUT_TOO_SMALL;
  const wc_status status = coder->coder->final(out, out_len);
  coder->dead = true;  // a coder ends once
  if (status != WC_OK) *out_len = 0;
  return status;
}

void wc_base64_free(wc_base64 *coder) { delete coder; }
