#include "support/warpcrypt_calls.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

void PrintTo(wc_status status, std::ostream *os) {
  *os << static_cast<int>(status) << " (" << wc_status_string(status) << ")";
}

namespace wctest {

wc_options make_options(unsigned threads, wc_backend backend) {
  wc_options options;
  wc_options_init(&options);
  options.threads = threads;
  options.backend = backend;
  return options;
}

wc_seal_params key_seal_params(const char *aead, uint64_t chunk_bytes) {
  wc_seal_params params;
  wc_seal_params_init(&params);
  params.aead = wc_aead_by_name(aead);
  params.key_source = WC_SEAL_KEY;
  params.chunk_bytes = chunk_bytes;
  return params;
}

const wc_cipher *with_padding(const wc_cipher *cipher, bool padding) {
  return padding ? cipher : wc_cipher_unpadded(cipher);
}

const wc_cipher *lookup(const std::string &name) { return wc_cipher_by_name(name.c_str()); }

const uint8_t *data_or_dummy(const Bytes &bytes) {
  static const uint8_t dummy = 0;
  return bytes.empty() ? &dummy : bytes.data();
}

LibResult lib_crypt(wc_direction direction, const wc_cipher *cipher, const Bytes &key,
                    const Bytes &iv, const Bytes &in, const wc_options &options) {
  LibResult result;
  const bool encrypting = direction == WC_ENCRYPT;
  const size_t cap = encrypting ? wc_encrypt_bound(cipher, in.size()) : in.size();
  // One spare byte so a zero-capacity buffer still has a valid address.
  result.out.assign(cap + 1, 0);
  size_t out_len = 0;
  auto *call = encrypting ? wc_encrypt : wc_decrypt;
  result.status = call(&options, cipher, result.out.data(), cap, &out_len, data_or_dummy(key),
                       key.size(), data_or_dummy(iv), iv.size(), data_or_dummy(in), in.size());
  result.out.resize(result.status == WC_OK ? out_len : 0);
  return result;
}

LibResult lib_stream(wc_direction direction, const wc_cipher *cipher, const Bytes &key,
                     const Bytes &iv, const Bytes &in, const std::vector<size_t> &pieces,
                     const wc_options &options) {
  if (std::accumulate(pieces.begin(), pieces.end(), size_t{0}) != in.size()) {
    throw std::invalid_argument("lib_stream: pieces do not add up to the input length");
  }
  LibResult result;
  wc_ctx *ctx = nullptr;
  result.status = wc_ctx_new(&ctx, &options, cipher, direction, data_or_dummy(key), key.size(),
                             data_or_dummy(iv), iv.size());
  if (result.status != WC_OK) {
    wc_ctx_free(ctx);
    return result;
  }
  size_t consumed = 0;
  Bytes scratch;
  for (size_t piece : pieces) {
    const size_t bound = wc_ctx_update_bound(ctx, piece);
    scratch.assign(bound + 1, 0);
    size_t written = 0;
    result.status = wc_ctx_update(ctx, scratch.data(), bound, &written, data_or_dummy(in) + consumed,
                                  piece);
    if (result.status != WC_OK) break;
    if (written > bound) {
      result.status = WC_ERR_OUTPUT_TOO_SMALL;
      break;
    }
    result.out.insert(result.out.end(), scratch.begin(),
                      scratch.begin() + static_cast<ptrdiff_t>(written));
    consumed += piece;
    if (consumed > result.out.size()) {
      result.max_lag = std::max(result.max_lag, consumed - result.out.size());
    }
  }
  if (result.status == WC_OK) {
    uint8_t tail[WC_MAX_BLOCK_LEN] = {};
    size_t written = 0;
    result.status = wc_ctx_final(ctx, tail, sizeof tail, &written);
    if (result.status == WC_OK) result.out.insert(result.out.end(), tail, tail + written);
  }
  wc_ctx_free(ctx);
  if (result.status != WC_OK) result.out.clear();
  return result;
}

RangeWindow lib_range_window(const wc_cipher *cipher,
                             uint64_t ciphertext_len, uint64_t offset, uint64_t length) {
  RangeWindow window;
  window.status = wc_range_window(cipher, &window.offset, &window.length,
                                  ciphertext_len, offset, length);
  return window;
}

LibResult lib_decrypt_range(const wc_options &options, const wc_cipher *cipher, const Bytes &key,
                            const Bytes &iv, const Bytes &window, uint64_t ciphertext_len,
                            uint64_t offset, uint64_t length) {
  LibResult result;
  result.out.assign(static_cast<size_t>(length) + 1, 0);
  size_t out_len = 0;
  result.status = wc_decrypt_range(&options, cipher, result.out.data(),
                                   static_cast<size_t>(length), &out_len, data_or_dummy(key),
                                   key.size(), data_or_dummy(iv), iv.size(),
                                   data_or_dummy(window), window.size(), ciphertext_len, offset,
                                   length);
  result.out.resize(result.status == WC_OK ? out_len : 0);
  return result;
}

const char *direction_name(wc_direction direction) {
  return direction == WC_ENCRYPT ? "encrypt" : "decrypt";
}

}  // namespace wctest
