#include "backends/cpu/base64.h"

#include <openssl/evp.h>

#include <climits>
#include <cstring>
#include <new>

namespace warpcrypt::cpu {
namespace {

using EncodeContext = std::unique_ptr<EVP_ENCODE_CTX, decltype(&EVP_ENCODE_CTX_free)>;

// OpenSSL's coder calls take an int length: input goes through in steps of
// at most this many bytes, a multiple of 48 (one line) and of 3 (a group).
constexpr size_t kStep = size_t{48} << 20;

// Lines of 64 characters, each ending in LF (EVP_EncodeUpdate's format).
class LineEncoder final : public TextCoder {
 public:
  explicit LineEncoder(EncodeContext context) : context_(std::move(context)) { EVP_EncodeInit(context_.get()); }

  // 4 characters per 3 bytes, a LF per 64 characters, and the line
  // OpenSSL holds back between calls.
  size_t update_bound(size_t in_len) const override { return in_len / 3 * 4 + in_len / 48 + kFinalBound; }

  wc_status update(std::span<const uint8_t> in, uint8_t *out, size_t *out_len) override {
    *out_len = 0;
    for (size_t done = 0; done < in.size();) {
      const size_t step = std::min(kStep, in.size() - done);
      int written = 0;
      if (EVP_EncodeUpdate(context_.get(), out + *out_len, &written, in.data() + done, static_cast<int>(step)) != 1) {
        return WC_ERR_CRYPTO_LIBRARY;
      }
      *out_len += static_cast<size_t>(written);
      done += step;
    }
    return WC_OK;
  }

  wc_status final(uint8_t *out, size_t *out_len) override {
    int written = 0;
    EVP_EncodeFinal(context_.get(), out, &written);
    *out_len = static_cast<size_t>(written);
    return WC_OK;
  }

 private:
  EncodeContext context_;
};

// One line with no LF (-A): whole groups as they come, the last one to two
// bytes carried to the next call.
class OneLineEncoder final : public TextCoder {
 public:
  size_t update_bound(size_t in_len) const override { return (in_len + 2) / 3 * 4 + 1; }

  wc_status update(std::span<const uint8_t> in, uint8_t *out, size_t *out_len) override {
    *out_len = 0;
    size_t at = 0;
    if (held_ != 0) {  // complete the carried group first
      while (held_ < 3 && at < in.size()) carry_[held_++] = in[at++];
      if (held_ < 3) return WC_OK;
      *out_len += static_cast<size_t>(EVP_EncodeBlock(out, carry_, 3));
      held_ = 0;
    }
    while (in.size() - at >= 3) {
      const size_t whole = std::min(kStep, (in.size() - at) / 3 * 3);
      *out_len += static_cast<size_t>(EVP_EncodeBlock(out + *out_len, in.data() + at, static_cast<int>(whole)));
      at += whole;
    }
    while (at < in.size()) carry_[held_++] = in[at++];
    return WC_OK;
  }

  wc_status final(uint8_t *out, size_t *out_len) override {
    *out_len = held_ != 0 ? static_cast<size_t>(EVP_EncodeBlock(out, carry_, static_cast<int>(held_))) : 0;
    held_ = 0;
    return WC_OK;
  }

 private:
  unsigned char carry_[3] = {};
  size_t held_ = 0;
};

class Decoder final : public TextCoder {
 public:
  explicit Decoder(EncodeContext context) : context_(std::move(context)) { EVP_DecodeInit(context_.get()); }

  size_t update_bound(size_t in_len) const override { return in_len / 4 * 3 + kFinalBound; }

  wc_status update(std::span<const uint8_t> in, uint8_t *out, size_t *out_len) override {
    *out_len = 0;
    for (size_t done = 0; done < in.size();) {
      const size_t step = std::min(kStep, in.size() - done);
      int written = 0;
      if (EVP_DecodeUpdate(context_.get(), out + *out_len, &written, in.data() + done, static_cast<int>(step)) < 0) {
        return WC_ERR_FORMAT;
      }
      *out_len += static_cast<size_t>(written);
      done += step;
    }
    return WC_OK;
  }

  wc_status final(uint8_t *out, size_t *out_len) override {
    int written = 0;
    const int ended = EVP_DecodeFinal(context_.get(), out, &written);
    *out_len = static_cast<size_t>(written);
    return ended == 1 ? WC_OK : WC_ERR_FORMAT;
  }

 private:
  EncodeContext context_;
};

}  // namespace

std::unique_ptr<TextCoder> make_base64(bool encode, bool one_line) {
  if (encode && one_line) return std::unique_ptr<TextCoder>(new (std::nothrow) OneLineEncoder);
  EncodeContext context(EVP_ENCODE_CTX_new(), EVP_ENCODE_CTX_free);
  if (!context) return nullptr;
  if (encode) return std::unique_ptr<TextCoder>(new (std::nothrow) LineEncoder(std::move(context)));
  return std::unique_ptr<TextCoder>(new (std::nothrow) Decoder(std::move(context)));
}

}  // namespace warpcrypt::cpu
