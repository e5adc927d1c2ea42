#include "sealed/sealed_format.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>

#include "core/aead_registry.h"
#include "core/backends.h"
#include "core/secret_bytes.h"

namespace warpcrypt::sealed {
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

bool all_zero(const uint8_t *bytes, size_t len) {
  return std::all_of(bytes, bytes + len, [](uint8_t b) { return b == 0; });
}

const wc_aead *aead_for_id(uint8_t id) {
  return id < std::size(kAeadById) && kAeadById[id] != nullptr ? find_aead(kAeadById[id]) : nullptr;
}

uint8_t id_for_aead(const wc_aead *aead) {
  for (uint8_t id = 1; id < std::size(kAeadById); ++id) {
    if (aead_for_id(id) == aead) return id;
  }
  return 0;
}

}  // namespace

const char *digest_name(Digest digest) { return digest == Digest::sha512 ? "sha512" : "sha256"; }

wc_status make_header(const wc_seal_params &params, Header *header, const char **detail) {
  auto invalid = [detail](const char *why) {
    *detail = why;
    return WC_ERR_INVALID_ARGUMENT;
  };
  header->aead = params.aead != nullptr ? params.aead : find_aead("aes-256-gcm");
  if (id_for_aead(header->aead) == 0) return invalid("the format has no id for this AEAD");
  // Zero is as invalid as any other wrong value: wc_seal_params_init gives
  // the defaults, and a zero that silently became one would hide a caller's
  // mistake.
  header->chunk_log2 = 0;
  for (unsigned log2 = kMinChunkLog2; log2 <= kMaxChunkLog2; ++log2) {
    if (params.chunk_bytes == uint64_t{1} << log2) header->chunk_log2 = log2;
  }
  if (header->chunk_log2 == 0) return invalid("the chunk size must be a power of two from 4 KiB to 1 GiB");
  header->key_source = params.key_source;
  if (header->key_source == WC_SEAL_PASSPHRASE) {
    header->iterations = params.iterations;
    if (header->iterations == 0 || header->iterations > kMaxIterations) {
      return invalid("PBKDF2 iterations must be 1 to 100,000,000");
    }
  } else if (header->key_source == WC_SEAL_KEY) {
    header->iterations = 0;
  } else {
    return invalid("the key source must be WC_SEAL_PASSPHRASE or WC_SEAL_KEY");
  }
  const std::string_view digest = params.digest != nullptr ? params.digest : "sha256";
  if (digest == "sha256") {
    header->digest = Digest::sha256;
  } else if (digest == "sha512") {
    header->digest = Digest::sha512;
  } else {
    *detail = "the format's KDF digest is sha256 or sha512";
    return WC_ERR_DIGEST;
  }
  if (kCpuBackend.random_bytes(header->salt) != WC_OK ||
      kCpuBackend.random_bytes(header->nonce_prefix) != WC_OK) {
    return WC_ERR_CRYPTO_LIBRARY;
  }
  return WC_OK;
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

wc_status decode(std::span<const uint8_t, kHeaderLen> in, Header *header, const char **detail) {
  auto bad = [detail](const char *why) {
    *detail = why;
    return WC_ERR_FORMAT;
  };
  if (!std::equal(kMagic.begin(), kMagic.end(), in.begin())) {
    return bad("not a sealed file: bad magic number (was it made by 'warpcrypt seal'?)");
  }
  if (in[8] != kVersion) return bad("unsupported sealed-file version");
  header->aead = aead_for_id(in[9]);
  if (header->aead == nullptr) return bad("bad header: unknown AEAD id");
  header->chunk_log2 = in[10];
  if (header->chunk_log2 < kMinChunkLog2 || header->chunk_log2 > kMaxChunkLog2) {
    return bad("bad header: chunk size out of range");
  }
  if (in[11] != kTagLen) return bad("bad header: tag length is not 16");
  if (in[12] != WC_SEAL_PASSPHRASE && in[12] != WC_SEAL_KEY) return bad("bad header: unknown key source");
  header->key_source = static_cast<wc_seal_key_source>(in[12]);
  if (in[13] != static_cast<uint8_t>(Digest::sha256) && in[13] != static_cast<uint8_t>(Digest::sha512)) {
    return bad("bad header: unknown digest");
  }
  header->digest = static_cast<Digest>(in[13]);
  header->iterations = load_be32(&in[16]);
  const bool iterations_valid = header->key_source == WC_SEAL_PASSPHRASE
                                    ? header->iterations >= 1 && header->iterations <= kMaxIterations
                                    : header->iterations == 0;
  if (!iterations_valid) return bad("bad header: implausible iteration count");
  if (!all_zero(&in[14], 2) || !all_zero(&in[43], 5)) return bad("bad header: reserved bytes are not zero");
  std::copy_n(in.begin() + 20, kSaltLen, header->salt.begin());
  std::copy_n(in.begin() + 36, kNoncePrefixLen, header->nonce_prefix.begin());
  return WC_OK;
}

engine::StreamShape stream_shape(const Header &header, std::span<const uint8_t, kHeaderLen> header_bytes) {
  engine::StreamShape shape;
  shape.aead = header.aead;
  shape.chunk_size = header.chunk_size();
  std::copy(header.nonce_prefix.begin(), header.nonce_prefix.end(), shape.fixed.begin());
  shape.counter_len = 4;
  shape.aad = header_bytes;
  shape.body_offset = kHeaderLen;
  shape.messages = {
      .no_chunk = "truncated sealed file: no complete chunk after the header",
      .short_chunk = "truncated sealed file: the last chunk is shorter than its tag",
      .too_long = "sealed file too long: more than 2^32 chunks",
      .empty_final = "truncated sealed file: an empty final chunk after chunk 0 (only an empty file ends with one)",
  };
  return shape;
}

FileKey::~FileKey() { secure_wipe(bytes.data(), bytes.size()); }

wc_status derive_file_key(const Header &header, std::span<const uint8_t> secret, FileKey *key) {
  key->len = header.aead->key_len;
  const std::span<uint8_t> out(key->bytes.data(), key->len);
  const char *digest = digest_name(header.digest);
  if (header.key_source == WC_SEAL_PASSPHRASE) {
    return kCpuBackend.pbkdf2(out, digest, header.iterations, secret, header.salt);
  }
  if (secret.size() != key->len) return WC_ERR_KEY_LEN;
  const std::span<const uint8_t> info(reinterpret_cast<const uint8_t *>(kHkdfInfo), sizeof kHkdfInfo - 1);
  return kCpuBackend.hkdf(out, digest, secret, header.salt, info);
}

wc_status layout_of(const Header &header, uint64_t body_len, Layout *layout, const char **detail) {
  const std::array<uint8_t, kHeaderLen> bytes = encode(header);
  return engine::layout_of(stream_shape(header, bytes), body_len, layout, detail);
}

}  // namespace warpcrypt::sealed
