#include "backends/cpu/rsa_oaep.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/rsa.h>

#include <algorithm>
#include <memory>

namespace warpcrypt::cpu {
namespace {

struct BnDeleter {
  void operator()(BIGNUM *bn) const { BN_clear_free(bn); }
};
struct BnCtxDeleter {
  void operator()(BN_CTX *ctx) const { BN_CTX_free(ctx); }
};
struct ParamBuildDeleter {
  void operator()(OSSL_PARAM_BLD *build) const { OSSL_PARAM_BLD_free(build); }
};
struct ParamsDeleter {
  void operator()(OSSL_PARAM *params) const { OSSL_PARAM_free(params); }
};
struct PkeyDeleter {
  void operator()(EVP_PKEY *key) const { EVP_PKEY_free(key); }
};
struct PkeyCtxDeleter {
  void operator()(EVP_PKEY_CTX *ctx) const { EVP_PKEY_CTX_free(ctx); }
};
using Bn = std::unique_ptr<BIGNUM, BnDeleter>;
using Pkey = std::unique_ptr<EVP_PKEY, PkeyDeleter>;
using PkeyCtx = std::unique_ptr<EVP_PKEY_CTX, PkeyCtxDeleter>;

Bn big(std::span<const uint8_t> bytes) { return Bn(BN_bin2bn(bytes.data(), static_cast<int>(bytes.size()), nullptr)); }

// The key from its integers. A private key also gets its CRT exponents,
// which an SSH key file leaves out: OpenSSL checks and uses all of them.
Pkey make_key(const RsaPublicKey &public_key, const RsaPrivateKey *private_key) {
  std::unique_ptr<OSSL_PARAM_BLD, ParamBuildDeleter> build(OSSL_PARAM_BLD_new());
  const Bn n = big(public_key.n), e = big(public_key.e);
  if (!build || !n || !e || !OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_RSA_N, n.get()) ||
      !OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_RSA_E, e.get())) {
    return nullptr;
  }
  Bn d, p, q, dp, dq, qinv;
  if (private_key != nullptr) {
    std::unique_ptr<BN_CTX, BnCtxDeleter> ctx(BN_CTX_secure_new());
    d = big(private_key->d), p = big(private_key->p), q = big(private_key->q), qinv = big(private_key->iqmp);
    dp = Bn(BN_secure_new()), dq = Bn(BN_secure_new());
    Bn p1(BN_dup(p.get())), q1(BN_dup(q.get()));
    if (!ctx || !d || !p || !q || !qinv || !dp || !dq || !p1 || !q1 || !BN_sub_word(p1.get(), 1) ||
        !BN_sub_word(q1.get(), 1) || !BN_mod(dp.get(), d.get(), p1.get(), ctx.get()) ||
        !BN_mod(dq.get(), d.get(), q1.get(), ctx.get()) ||
        !OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_RSA_D, d.get()) ||
        !OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_RSA_FACTOR1, p.get()) ||
        !OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_RSA_FACTOR2, q.get()) ||
        !OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_RSA_EXPONENT1, dp.get()) ||
        !OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_RSA_EXPONENT2, dq.get()) ||
        !OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_RSA_COEFFICIENT1, qinv.get())) {
      return nullptr;
    }
  }
  std::unique_ptr<OSSL_PARAM, ParamsDeleter> params(OSSL_PARAM_BLD_to_param(build.get()));
  PkeyCtx ctx(EVP_PKEY_CTX_new_from_name(nullptr, "RSA", nullptr));
  EVP_PKEY *key = nullptr;
  if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) <= 0 ||
      EVP_PKEY_fromdata(ctx.get(), &key, private_key != nullptr ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY,
                        params.get()) <= 0) {
    return nullptr;
  }
  return Pkey(key);
}

// OAEP with `digest` for both the hash and MGF1, and `label`, on `ctx`
// after its encrypt or decrypt init.
bool set_oaep(EVP_PKEY_CTX *ctx, const char *digest, std::span<const uint8_t> label) {
  // OpenSSL takes ownership of the label it is handed.
  void *owned = OPENSSL_memdup(label.data(), label.size());
  if (owned == nullptr && !label.empty()) return false;
  if (EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) <= 0 ||
      EVP_PKEY_CTX_set_rsa_oaep_md_name(ctx, digest, nullptr) <= 0 ||
      EVP_PKEY_CTX_set_rsa_mgf1_md_name(ctx, digest, nullptr) <= 0 ||
      EVP_PKEY_CTX_set0_rsa_oaep_label(ctx, owned, static_cast<int>(label.size())) <= 0) {
    OPENSSL_free(owned);
    return false;
  }
  return true;
}

}  // namespace

wc_status rsa_oaep_encrypt(std::vector<uint8_t> *out, const RsaPublicKey &key, const char *digest,
                           std::span<const uint8_t> label, std::span<const uint8_t> message) {
  const Pkey pkey = make_key(key, nullptr);
  if (!pkey) return WC_ERR_INVALID_ARGUMENT;
  PkeyCtx ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, pkey.get(), nullptr));
  size_t len = 0;
  if (!ctx || EVP_PKEY_encrypt_init(ctx.get()) <= 0 || !set_oaep(ctx.get(), digest, label) ||
      EVP_PKEY_encrypt(ctx.get(), nullptr, &len, message.data(), message.size()) <= 0) {
    return WC_ERR_CRYPTO_LIBRARY;
  }
  out->resize(len);
  if (EVP_PKEY_encrypt(ctx.get(), out->data(), &len, message.data(), message.size()) <= 0) {
    return WC_ERR_CRYPTO_LIBRARY;
  }
  out->resize(len);
  return WC_OK;
}

wc_status rsa_oaep_decrypt(std::span<uint8_t> out, size_t *out_len, const RsaPrivateKey &key, const char *digest,
                           std::span<const uint8_t> label, std::span<const uint8_t> ciphertext) {
  const Pkey pkey = make_key(key.public_key, &key);
  if (!pkey) return WC_ERR_INVALID_ARGUMENT;
  PkeyCtx ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, pkey.get(), nullptr));
  if (!ctx || EVP_PKEY_decrypt_init(ctx.get()) <= 0 || !set_oaep(ctx.get(), digest, label)) {
    return WC_ERR_CRYPTO_LIBRARY;
  }
  // The plaintext passes through a buffer of the modulus' size (OAEP's
  // output is never longer), wiped before returning.
  std::vector<uint8_t> plain(static_cast<size_t>(EVP_PKEY_get_size(pkey.get())));
  size_t len = plain.size();
  const bool opened = EVP_PKEY_decrypt(ctx.get(), plain.data(), &len, ciphertext.data(), ciphertext.size()) > 0;
  wc_status status = WC_ERR_AUTH;
  if (opened && len <= out.size()) {
    std::copy_n(plain.begin(), len, out.begin());
    *out_len = len;
    status = WC_OK;
  }
  OPENSSL_cleanse(plain.data(), plain.size());
  // A ciphertext that does not open is an answer, not an error to leave
  // in OpenSSL's queue for a later call to find.
  if (!opened) ERR_clear_error();
  return status;
}

}  // namespace warpcrypt::cpu
