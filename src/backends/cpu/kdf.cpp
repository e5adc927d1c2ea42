#include "backends/cpu/kdf.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>
#include <sodium.h>

#include <algorithm>
#include <array>
#include <climits>
#include <memory>
#include <vector>

#include "backends/cpu/sodium_init.h"

namespace warpcrypt::cpu {
namespace {

struct DigestDeleter {
  void operator()(EVP_MD *md) const { EVP_MD_free(md); }
};
struct MdCtxDeleter {
  void operator()(EVP_MD_CTX *ctx) const { EVP_MD_CTX_free(ctx); }
};

// EVP_BytesToKey, written out because it needs only a digest and the output
// length, while OpenSSL's version wants an EVP_CIPHER and Salsa20 has none:
//   D_1 = H^n(passphrase || salt), D_i = H^n(D_{i-1} || passphrase || salt),
// concatenated until there are enough bytes for key || IV.
wc_status bytes_to_key(std::span<uint8_t> out, const EVP_MD *md, uint32_t iterations,
                       std::span<const uint8_t> passphrase, std::span<const uint8_t> salt) {
  std::unique_ptr<EVP_MD_CTX, MdCtxDeleter> ctx(EVP_MD_CTX_new());
  if (!ctx) return WC_ERR_OUT_OF_MEMORY;
  std::array<uint8_t, EVP_MAX_MD_SIZE> digest{};
  unsigned digest_len = 0;
  size_t produced = 0;
  wc_status status = WC_OK;
  for (bool first = true; produced < out.size(); first = false) {
    bool ok = EVP_DigestInit_ex2(ctx.get(), md, nullptr) == 1 &&
              (first || EVP_DigestUpdate(ctx.get(), digest.data(), digest_len) == 1) &&
              EVP_DigestUpdate(ctx.get(), passphrase.data(), passphrase.size()) == 1 &&
              EVP_DigestUpdate(ctx.get(), salt.data(), salt.size()) == 1 &&
              EVP_DigestFinal_ex(ctx.get(), digest.data(), &digest_len) == 1;
    for (uint32_t round = 1; ok && round < iterations; ++round) {
      ok = EVP_DigestInit_ex2(ctx.get(), md, nullptr) == 1 &&
           EVP_DigestUpdate(ctx.get(), digest.data(), digest_len) == 1 &&
           EVP_DigestFinal_ex(ctx.get(), digest.data(), &digest_len) == 1;
    }
    if (!ok) {
      status = WC_ERR_CRYPTO_LIBRARY;
      break;
    }
    const size_t take = std::min<size_t>(digest_len, out.size() - produced);
    std::copy_n(digest.begin(), take, out.begin() + static_cast<std::ptrdiff_t>(produced));
    produced += take;
  }
  OPENSSL_cleanse(digest.data(), digest.size());
  return status;
}

}  // namespace

wc_status derive_key_iv(std::span<uint8_t> key_and_iv, wc_kdf kdf, const char *digest,
                        uint32_t iterations, std::span<const uint8_t> passphrase,
                        std::span<const uint8_t> salt) {
  std::unique_ptr<EVP_MD, DigestDeleter> md(EVP_MD_fetch(nullptr, digest, nullptr));
  if (!md) return WC_ERR_DIGEST;
  if (iterations == 0 || passphrase.size() > INT_MAX || salt.size() > INT_MAX) {
    return WC_ERR_INVALID_ARGUMENT;
  }
  if (kdf == WC_KDF_LEGACY) return bytes_to_key(key_and_iv, md.get(), iterations, passphrase, salt);
  if (iterations > INT_MAX) return WC_ERR_INVALID_ARGUMENT;
  const int ok = PKCS5_PBKDF2_HMAC(reinterpret_cast<const char *>(passphrase.data()),
                                   static_cast<int>(passphrase.size()), salt.data(),
                                   static_cast<int>(salt.size()), static_cast<int>(iterations),
                                   md.get(), static_cast<int>(key_and_iv.size()), key_and_iv.data());
  return ok == 1 ? WC_OK : WC_ERR_CRYPTO_LIBRARY;
}

wc_status pbkdf2(std::span<uint8_t> out, const char *digest, uint32_t iterations, std::span<const uint8_t> passphrase,
                 std::span<const uint8_t> salt) {
  std::unique_ptr<EVP_MD, DigestDeleter> md(EVP_MD_fetch(nullptr, digest, nullptr));
  if (!md) return WC_ERR_DIGEST;
  if (iterations == 0 || iterations > INT_MAX || passphrase.size() > INT_MAX || salt.size() > INT_MAX ||
      out.size() > INT_MAX) {
    return WC_ERR_INVALID_ARGUMENT;
  }
  // OpenSSL reads the passphrase through a char pointer; an empty one still
  // needs a valid pointer.
  static const char kEmpty[] = "";
  const char *text = passphrase.empty() ? kEmpty : reinterpret_cast<const char *>(passphrase.data());
  return PKCS5_PBKDF2_HMAC(text, static_cast<int>(passphrase.size()), salt.data(), static_cast<int>(salt.size()),
                           static_cast<int>(iterations), md.get(), static_cast<int>(out.size()), out.data()) == 1
             ? WC_OK
             : WC_ERR_CRYPTO_LIBRARY;
}

wc_status argon2id(std::span<uint8_t> out, uint32_t ops, uint64_t memory, std::span<const uint8_t> passphrase,
                   std::span<const uint8_t> salt) {
  if (out.size() < crypto_pwhash_argon2id_BYTES_MIN || salt.size() != crypto_pwhash_argon2id_SALTBYTES ||
      passphrase.size() > crypto_pwhash_argon2id_PASSWD_MAX || ops < crypto_pwhash_argon2id_OPSLIMIT_MIN ||
      memory < crypto_pwhash_argon2id_MEMLIMIT_MIN || memory > crypto_pwhash_argon2id_MEMLIMIT_MAX ||
      memory % 1024 != 0) {
    return WC_ERR_INVALID_ARGUMENT;
  }
  if (!sodium_ready()) return WC_ERR_CRYPTO_LIBRARY;
  static const char kEmpty[] = "";
  const char *text = passphrase.empty() ? kEmpty : reinterpret_cast<const char *>(passphrase.data());
  // With the arguments in range, crypto_pwhash fails only when it cannot
  // allocate the memory.
  return crypto_pwhash(out.data(), out.size(), text, passphrase.size(), salt.data(), ops, static_cast<size_t>(memory),
                       crypto_pwhash_ALG_ARGON2ID13) == 0
             ? WC_OK
             : WC_ERR_OUT_OF_MEMORY;
}

wc_status hkdf(std::span<uint8_t> out, const char *digest, std::span<const uint8_t> secret,
               std::span<const uint8_t> salt, std::span<const uint8_t> info) {
  std::unique_ptr<EVP_MD, DigestDeleter> md(EVP_MD_fetch(nullptr, digest, nullptr));
  if (!md) return WC_ERR_DIGEST;
  if (out.empty() || out.size() > 255 * static_cast<size_t>(EVP_MD_get_size(md.get()))) {
    return WC_ERR_INVALID_ARGUMENT;
  }
  std::unique_ptr<EVP_KDF, decltype(&EVP_KDF_free)> kdf(EVP_KDF_fetch(nullptr, "HKDF", nullptr), &EVP_KDF_free);
  std::unique_ptr<EVP_KDF_CTX, decltype(&EVP_KDF_CTX_free)> ctx(kdf ? EVP_KDF_CTX_new(kdf.get()) : nullptr,
                                                               &EVP_KDF_CTX_free);
  if (!ctx) return WC_ERR_CRYPTO_LIBRARY;
  // OSSL_PARAM takes writable pointers, though HKDF only reads its inputs;
  // a zero-length octet string still needs a valid pointer.
  static uint8_t nothing = 0;
  auto octets = [](const char *key, std::span<const uint8_t> bytes) {
    return OSSL_PARAM_construct_octet_string(key, bytes.empty() ? &nothing : const_cast<uint8_t *>(bytes.data()),
                                             bytes.size());
  };
  const OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, const_cast<char *>(EVP_MD_get0_name(md.get())), 0),
      octets(OSSL_KDF_PARAM_KEY, secret), octets(OSSL_KDF_PARAM_SALT, salt), octets(OSSL_KDF_PARAM_INFO, info),
      OSSL_PARAM_construct_end()};
  return EVP_KDF_derive(ctx.get(), out.data(), out.size(), params) == 1 ? WC_OK : WC_ERR_CRYPTO_LIBRARY;
}

wc_status random_bytes(std::span<uint8_t> out) {
  // RAND_bytes counts in int.
  while (!out.empty()) {
    const size_t piece = std::min<size_t>(out.size(), INT_MAX);
    if (RAND_bytes(out.data(), static_cast<int>(piece)) != 1) return WC_ERR_CRYPTO_LIBRARY;
    out = out.subspan(piece);
  }
  return WC_OK;
}

wc_status hmac(std::span<uint8_t> out, const char *digest, std::span<const uint8_t> key,
               std::span<const uint8_t> message) {
  std::unique_ptr<EVP_MD, DigestDeleter> md(EVP_MD_fetch(nullptr, digest, nullptr));
  if (!md) return WC_ERR_DIGEST;
  if (out.size() != static_cast<size_t>(EVP_MD_get_size(md.get())) || key.size() > INT_MAX) {
    return WC_ERR_INVALID_ARGUMENT;
  }
  static const uint8_t kNothing = 0;
  unsigned len = 0;
  const uint8_t *mac = HMAC(md.get(), key.empty() ? &kNothing : key.data(), static_cast<int>(key.size()),
                            message.data(), message.size(), out.data(), &len);
  return mac != nullptr && len == out.size() ? WC_OK : WC_ERR_CRYPTO_LIBRARY;
}

wc_status digest(std::span<uint8_t> out, const char *digest, std::span<const uint8_t> message) {
  std::unique_ptr<EVP_MD, DigestDeleter> md(EVP_MD_fetch(nullptr, digest, nullptr));
  if (!md) return WC_ERR_DIGEST;
  if (out.size() != static_cast<size_t>(EVP_MD_get_size(md.get()))) return WC_ERR_INVALID_ARGUMENT;
  unsigned len = 0;
  return EVP_Digest(message.data(), message.size(), out.data(), &len, md.get(), nullptr) == 1 && len == out.size()
             ? WC_OK
             : WC_ERR_CRYPTO_LIBRARY;
}

wc_status scrypt(std::span<uint8_t> out, std::span<const uint8_t> passphrase, std::span<const uint8_t> salt,
                 unsigned log2_n) {
  if (log2_n < 1 || log2_n > 30) return WC_ERR_INVALID_ARGUMENT;
  constexpr uint64_t kR = 8;
  const uint64_t n = uint64_t{1} << log2_n;
  // OpenSSL refuses to allocate more than maxmem; the caller bounded N, so
  // allow what N needs (128 r N for V, plus the small blocks).
  const uint64_t max_memory = 128 * kR * (n + 2) + (uint64_t{1} << 20);
  static const char kEmpty[] = "";
  const char *text = passphrase.empty() ? kEmpty : reinterpret_cast<const char *>(passphrase.data());
  ERR_clear_error();
  if (EVP_PBE_scrypt(text, passphrase.size(), salt.data(), salt.size(), n, kR, 1, max_memory, out.data(),
                     out.size()) == 1) {
    return WC_OK;
  }
  // The parameters are valid, so what is left to fail is the allocation of
  // V (1 KiB times N), which OpenSSL reports as a malloc failure.
  const bool no_memory = ERR_GET_REASON(ERR_peek_last_error()) == ERR_R_MALLOC_FAILURE;
  ERR_clear_error();
  return no_memory ? WC_ERR_OUT_OF_MEMORY : WC_ERR_CRYPTO_LIBRARY;
}

wc_status x25519(std::span<uint8_t, 32> out, std::span<const uint8_t, 32> scalar, std::span<const uint8_t> point) {
  static_assert(crypto_scalarmult_BYTES == 32 && crypto_scalarmult_SCALARBYTES == 32);
  if (!point.empty() && point.size() != crypto_scalarmult_BYTES) return WC_ERR_INVALID_ARGUMENT;
  if (sodium_init() < 0) return WC_ERR_CRYPTO_LIBRARY;
  // libsodium refuses an all-zero shared secret itself (-1).
  const int failed = point.empty() ? crypto_scalarmult_base(out.data(), scalar.data())
                                   : crypto_scalarmult(out.data(), scalar.data(), point.data());
  return failed == 0 ? WC_OK : WC_ERR_CRYPTO_LIBRARY;
}

}  // namespace warpcrypt::cpu
