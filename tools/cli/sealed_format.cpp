#include "sealed_format.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "cli_error.h"

namespace warpcrypt::cli::sealed {
namespace {

// The HKDF info string binds the derived key to this use and version.
constexpr char kHkdfInfo[] = "warpcrypt seal v1 file key";

constexpr const char *kAeadById[] = {nullptr, "aes-128-gcm", "aes-192-gcm", "aes-256-gcm", "chacha20-poly1305"};

void store_be32(uint8_t *out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(value >> (24 - 8 * i));
}
uint32_t load_be32(const uint8_t *in) {
  return uint32_t{in[0]} << 24 | uint32_t{in[1]} << 16 | uint32_t{in[2]} << 8 | in[3];
}

const char *digest_name(Digest digest) { return digest == Digest::sha512 ? "SHA512" : "SHA256"; }

bool all_zero(const uint8_t *bytes, size_t len) {
  return std::all_of(bytes, bytes + len, [](uint8_t b) { return b == 0; });
}

void hkdf(const Header &header, std::span<const uint8_t> ikm, FileKey *key) {
  std::unique_ptr<EVP_KDF, decltype(&EVP_KDF_free)> kdf(EVP_KDF_fetch(nullptr, "HKDF", nullptr), &EVP_KDF_free);
  std::unique_ptr<EVP_KDF_CTX, decltype(&EVP_KDF_CTX_free)> ctx(kdf ? EVP_KDF_CTX_new(kdf.get()) : nullptr,
                                                               &EVP_KDF_CTX_free);
  if (!ctx) throw CliError("key derivation failed: OpenSSL has no HKDF");
  std::array<uint8_t, kSaltLen> salt = header.salt;
  std::array<char, sizeof kHkdfInfo> info{};
  std::memcpy(info.data(), kHkdfInfo, sizeof kHkdfInfo);
  char digest[8] = {};
  std::snprintf(digest, sizeof digest, "%s", digest_name(header.digest));
  std::array<uint8_t, WC_MAX_KEY_LEN> secret{};
  std::copy(ikm.begin(), ikm.end(), secret.begin());
  const OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, secret.data(), ikm.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, salt.data(), salt.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info.data(), sizeof kHkdfInfo - 1),
      OSSL_PARAM_construct_end()};
  const bool ok = EVP_KDF_derive(ctx.get(), key->bytes.data(), key->len, params) == 1;
  wc_memzero(secret.data(), secret.size());
  if (!ok) throw CliError("key derivation failed (HKDF)");
}

void pbkdf2(const Header &header, std::span<const uint8_t> passphrase, FileKey *key) {
  const EVP_MD *md = header.digest == Digest::sha512 ? EVP_sha512() : EVP_sha256();
  if (PKCS5_PBKDF2_HMAC(reinterpret_cast<const char *>(passphrase.data()), static_cast<int>(passphrase.size()),
                        header.salt.data(), static_cast<int>(header.salt.size()),
                        static_cast<int>(header.iterations), md, static_cast<int>(key->len),
                        key->bytes.data()) != 1) {
    throw CliError("key derivation failed (PBKDF2)");
  }
}

}  // namespace

const wc_aead *aead_for_id(uint8_t id) {
  return id < std::size(kAeadById) && kAeadById[id] != nullptr ? wc_aead_by_name(kAeadById[id]) : nullptr;
}

uint8_t id_for_aead(const wc_aead *aead) {
  for (uint8_t id = 1; id < std::size(kAeadById); ++id) {
    if (aead_for_id(id) == aead) return id;
  }
  throw CliError("not a sealing AEAD");
}

Digest parse_digest(const std::string &name) {
  if (name == "sha256") return Digest::sha256;
  if (name == "sha512") return Digest::sha512;
  throw CliError("-md: seal takes sha256 or sha512, not '" + name + "'");
}

std::array<uint8_t, kHeaderLen> encode(const Header &header) {
  std::array<uint8_t, kHeaderLen> out{};
  std::copy(kMagic.begin(), kMagic.end(), out.begin());
  out[8] = kVersion;
  out[9] = id_for_aead(header.aead);
  out[10] = static_cast<uint8_t>(header.chunk_log2);
  out[11] = kTagLen;
  out[12] = static_cast<uint8_t>(header.key_source);
  out[13] = static_cast<uint8_t>(header.digest);
  store_be32(&out[16], header.iterations);
  std::copy(header.salt.begin(), header.salt.end(), out.begin() + 20);
  std::copy(header.nonce_prefix.begin(), header.nonce_prefix.end(), out.begin() + 36);
  return out;
}

Header decode(std::span<const uint8_t, kHeaderLen> in) {
  if (!std::equal(kMagic.begin(), kMagic.end(), in.begin())) {
    throw CliError("not a sealed file: bad magic number (was it made by 'warpcrypt seal'?)");
  }
  if (in[8] != kVersion) throw CliError("unsupported sealed-file version " + std::to_string(in[8]));
  Header header;
  header.aead = aead_for_id(in[9]);
  if (header.aead == nullptr) throw CliError("bad header: unknown AEAD id " + std::to_string(in[9]));
  header.chunk_log2 = in[10];
  if (header.chunk_log2 < kMinChunkLog2 || header.chunk_log2 > kMaxChunkLog2) {
    throw CliError("bad header: chunk size 2^" + std::to_string(in[10]) + " out of range");
  }
  if (in[11] != kTagLen) throw CliError("bad header: tag length " + std::to_string(in[11]));
  if (in[12] != static_cast<uint8_t>(KeySource::passphrase) && in[12] != static_cast<uint8_t>(KeySource::key_file)) {
    throw CliError("bad header: unknown key source " + std::to_string(in[12]));
  }
  header.key_source = static_cast<KeySource>(in[12]);
  if (in[13] != static_cast<uint8_t>(Digest::sha256) && in[13] != static_cast<uint8_t>(Digest::sha512)) {
    throw CliError("bad header: unknown digest " + std::to_string(in[13]));
  }
  header.digest = static_cast<Digest>(in[13]);
  header.iterations = load_be32(&in[16]);
  const bool iterations_valid = header.key_source == KeySource::passphrase
                                    ? header.iterations >= 1 && header.iterations <= kMaxIterations
                                    : header.iterations == 0;
  if (!iterations_valid) throw CliError("bad header: implausible iteration count " + std::to_string(header.iterations));
  if (!all_zero(&in[14], 2) || !all_zero(&in[43], 5)) throw CliError("bad header: reserved bytes are not zero");
  std::copy_n(in.begin() + 20, kSaltLen, header.salt.begin());
  std::copy_n(in.begin() + 36, kNoncePrefixLen, header.nonce_prefix.begin());
  return header;
}

std::array<uint8_t, 12> chunk_nonce(const Header &header, uint64_t index, bool last) {
  std::array<uint8_t, 12> nonce{};
  std::copy(header.nonce_prefix.begin(), header.nonce_prefix.end(), nonce.begin());
  store_be32(&nonce[kNoncePrefixLen], static_cast<uint32_t>(index));
  nonce[11] = last ? 1 : 0;
  return nonce;
}

FileKey::~FileKey() { wc_memzero(bytes.data(), bytes.size()); }

void derive_file_key(const Header &header, std::span<const uint8_t> secret, FileKey *key) {
  key->len = wc_aead_key_len(header.aead);
  if (header.key_source == KeySource::passphrase) {
    pbkdf2(header, secret, key);
  } else {
    hkdf(header, secret, key);
  }
}

Layout layout_of(const Header &header, uint64_t body_len) {
  const uint64_t sealed_chunk = header.chunk_size() + kTagLen;
  if (body_len < kTagLen) throw CliError("truncated sealed file: no complete chunk after the header");
  Layout layout;
  layout.chunks = (body_len + sealed_chunk - 1) / sealed_chunk;
  const uint64_t last_sealed = body_len - (layout.chunks - 1) * sealed_chunk;
  if (last_sealed < kTagLen) throw CliError("truncated sealed file: the last chunk is shorter than its tag");
  if (layout.chunks > kMaxChunks) throw CliError("sealed file too long: more than 2^32 chunks");
  layout.last_chunk_len = last_sealed - kTagLen;
  layout.plaintext_len = (layout.chunks - 1) * header.chunk_size() + layout.last_chunk_len;
  return layout;
}

}  // namespace warpcrypt::cli::sealed
