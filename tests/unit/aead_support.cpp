#include "aead_support.h"

#include <climits>
#include <memory>
#include <stdexcept>

#include <openssl/err.h>
#include <openssl/evp.h>

#include "support/warpcrypt_calls.h"

namespace wctest {
namespace {

// Our names are OpenSSL's, in lower case.
using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

CipherCtx openssl_start(const std::string &aead_name, bool encrypt, const AeadInput &input) {
  const std::unique_ptr<EVP_CIPHER, decltype(&EVP_CIPHER_free)> cipher(
      EVP_CIPHER_fetch(nullptr, aead_name.c_str(), nullptr), &EVP_CIPHER_free);
  if (!cipher) throw std::runtime_error("OpenSSL has no " + aead_name);
  CipherCtx ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  const int enc = encrypt ? 1 : 0;
  int aad_written = 0;
  if (!ctx || EVP_CipherInit_ex(ctx.get(), cipher.get(), nullptr, nullptr, nullptr, enc) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_IVLEN, static_cast<int>(input.nonce.size()), nullptr) != 1 ||
      EVP_CipherInit_ex(ctx.get(), nullptr, nullptr, input.key.data(), input.nonce.data(), enc) != 1 ||
      (!input.aad.empty() && EVP_CipherUpdate(ctx.get(), nullptr, &aad_written, input.aad.data(),
                                              static_cast<int>(input.aad.size())) != 1)) {
    throw std::runtime_error("cannot start OpenSSL " + aead_name);
  }
  return ctx;
}

// Whole messages go through one EVP_CipherUpdate, which counts in int.
int checked_int(size_t len) {
  if (len > static_cast<size_t>(INT_MAX)) throw std::runtime_error("oracle input too large");
  return static_cast<int>(len);
}

}  // namespace

const std::vector<std::string> &aead_names() {
  static const std::vector<std::string> names = {"aes-128-gcm", "aes-192-gcm", "aes-256-gcm", "chacha20-poly1305"};
  return names;
}

bool is_gcm(const std::string &aead_name) { return aead_name.ends_with("-gcm"); }

AeadInput random_aead_input(TestRng &rng, const std::string &aead_name, size_t plaintext_len, size_t aad_len,
                            size_t nonce_len, size_t tag_len) {
  AeadInput input;
  input.key = rng.bytes(wc_aead_key_len(wc_aead_by_name(aead_name.c_str())));
  input.nonce = rng.bytes(nonce_len == 0 ? 12 : nonce_len);
  input.aad = rng.bytes(aad_len);
  input.plaintext = rng.bytes(plaintext_len);
  input.tag_len = tag_len;
  return input;
}

AeadSealed lib_aead_seal(const std::string &aead_name, const AeadInput &input, const wc_options &options) {
  AeadSealed sealed;
  sealed.ciphertext.assign(input.plaintext.size() + 1, 0);
  sealed.tag.assign(input.tag_len, 0);
  size_t written = 0;
  sealed.status = wc_aead_seal(&options, wc_aead_by_name(aead_name.c_str()), sealed.ciphertext.data(),
                               input.plaintext.size(), &written, sealed.tag.data(), input.tag_len,
                               data_or_dummy(input.key), input.key.size(), data_or_dummy(input.nonce),
                               input.nonce.size(), data_or_dummy(input.aad), input.aad.size(),
                               data_or_dummy(input.plaintext), input.plaintext.size());
  sealed.ciphertext.resize(written);
  return sealed;
}

AeadOpened lib_aead_open(const std::string &aead_name, const AeadInput &input, const Bytes &ciphertext,
                         const Bytes &tag, const wc_options &options) {
  AeadOpened opened;
  // Filled with a marker, so a failure that leaves bytes behind shows up.
  opened.out.assign(ciphertext.size(), 0xA5);
  Bytes scratch = opened.out;
  scratch.push_back(0);  // a valid address for an empty message
  size_t written = 0;
  opened.status = wc_aead_open(&options, wc_aead_by_name(aead_name.c_str()), scratch.data(), ciphertext.size(),
                               &written, data_or_dummy(input.key), input.key.size(), data_or_dummy(input.nonce),
                               input.nonce.size(), data_or_dummy(input.aad), input.aad.size(),
                               data_or_dummy(ciphertext), ciphertext.size(), data_or_dummy(tag), tag.size());
  opened.out.assign(scratch.begin(), scratch.begin() + static_cast<ptrdiff_t>(ciphertext.size()));
  if (opened.status == WC_OK && written != ciphertext.size()) opened.status = WC_ERR_OUTPUT_TOO_SMALL;
  return opened;
}

AeadSealed openssl_aead_seal(const std::string &aead_name, const AeadInput &input) {
  const CipherCtx ctx = openssl_start(aead_name, true, input);
  AeadSealed sealed;
  sealed.ciphertext.assign(input.plaintext.size() + EVP_MAX_BLOCK_LENGTH, 0);
  sealed.tag.assign(input.tag_len, 0);
  int written = 0;
  int final_written = 0;
  if ((!input.plaintext.empty() && EVP_CipherUpdate(ctx.get(), sealed.ciphertext.data(), &written,
                                                    input.plaintext.data(), checked_int(input.plaintext.size())) != 1) ||
      EVP_CipherFinal_ex(ctx.get(), sealed.ciphertext.data() + written, &final_written) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_GET_TAG, static_cast<int>(input.tag_len), sealed.tag.data()) != 1) {
    throw std::runtime_error("OpenSSL " + aead_name + " sealing failed");
  }
  sealed.ciphertext.resize(static_cast<size_t>(written + final_written));
  return sealed;
}

std::optional<Bytes> openssl_aead_open(const std::string &aead_name, const AeadInput &input, const Bytes &ciphertext,
                                       const Bytes &tag) {
  const CipherCtx ctx = openssl_start(aead_name, false, input);
  Bytes plaintext(ciphertext.size() + EVP_MAX_BLOCK_LENGTH);
  Bytes expected_tag = tag;
  int written = 0;
  int final_written = 0;
  if ((!ciphertext.empty() && EVP_CipherUpdate(ctx.get(), plaintext.data(), &written, ciphertext.data(),
                                               checked_int(ciphertext.size())) != 1) ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_TAG, static_cast<int>(tag.size()), expected_tag.data()) != 1) {
    throw std::runtime_error("OpenSSL " + aead_name + " opening failed");
  }
  if (EVP_CipherFinal_ex(ctx.get(), plaintext.data() + written, &final_written) != 1) {
    ERR_clear_error();
    return std::nullopt;
  }
  plaintext.resize(static_cast<size_t>(written + final_written));
  return plaintext;
}

Bytes with_bit_flipped(Bytes bytes, size_t bit) {
  bytes.at(bit / 8) ^= static_cast<uint8_t>(1u << (bit % 8));
  return bytes;
}

}  // namespace wctest
