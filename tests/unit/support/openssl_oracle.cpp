#include "support/openssl_oracle.h"

#include <climits>
#include <memory>
#include <stdexcept>

#include <openssl/err.h>
#include <openssl/evp.h>

namespace wctest {

std::optional<Bytes> openssl_crypt(const std::string &cipher_name, wc_direction direction,
                                   const Bytes &key, const Bytes &iv, const Bytes &in,
                                   bool padding) {
  // An explicit fetch (OpenSSL 3), freed here, rather than the implicit one
  // EVP_CipherInit_ex does for legacy EVP_CIPHER pointers.
  const std::unique_ptr<EVP_CIPHER, decltype(&EVP_CIPHER_free)> fetched(
      EVP_CIPHER_fetch(nullptr, cipher_name.c_str(), nullptr), &EVP_CIPHER_free);
  const EVP_CIPHER *cipher = fetched.get();
  if (cipher == nullptr) throw std::runtime_error("OpenSSL has no cipher " + cipher_name);
  if (key.size() != static_cast<size_t>(EVP_CIPHER_get_key_length(cipher)) ||
      iv.size() != static_cast<size_t>(EVP_CIPHER_get_iv_length(cipher))) {
    throw std::runtime_error("oracle called with the wrong key or IV length for " + cipher_name);
  }
  if (in.size() > static_cast<size_t>(INT_MAX) - 64) {
    throw std::runtime_error("oracle input too large for one EVP_CipherUpdate");
  }
  std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)> ctx(EVP_CIPHER_CTX_new(),
                                                                        &EVP_CIPHER_CTX_free);
  const int enc = direction == WC_ENCRYPT ? 1 : 0;
  if (!ctx || EVP_CipherInit_ex(ctx.get(), cipher, nullptr, key.data(),
                                iv.empty() ? nullptr : iv.data(), enc) != 1 ||
      EVP_CIPHER_CTX_set_padding(ctx.get(), padding ? 1 : 0) != 1) {
    throw std::runtime_error("EVP_CipherInit_ex failed for " + cipher_name);
  }
  Bytes out(in.size() + 2 * EVP_MAX_BLOCK_LENGTH);
  int update_len = 0;
  int final_len = 0;
  const bool ok = (in.empty() || EVP_CipherUpdate(ctx.get(), out.data(), &update_len, in.data(),
                                                  static_cast<int>(in.size())) == 1) &&
                  EVP_CipherFinal_ex(ctx.get(), out.data() + update_len, &final_len) == 1;
  if (!ok) {
    // A rejected input is an expected answer here, not an error to leave
    // queued for whatever OpenSSL call comes next.
    ERR_clear_error();
    return std::nullopt;
  }
  out.resize(static_cast<size_t>(update_len + final_len));
  return out;
}

std::string openssl_base64(const Bytes &bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int len =
      EVP_EncodeBlock(reinterpret_cast<uint8_t *>(out.data()), bytes.data(), static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(len));
  return out;
}

}  // namespace wctest
