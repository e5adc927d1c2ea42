#include "sealed/sealed_format.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>

#include "core/aead_registry.h"
#include "core/secret_bytes.h"

namespace warpcrypt::sealed {
namespace {

// The HKDF info string binds the derived key to this use and version.
constexpr char kHkdfInfo[] = "warpcrypt seal v1 file key";

// Byte 12 names the secret and the KDF that makes it the file key.
// Argon2id came after the first files: a reader that predates it refuses
// its files as an unknown key source.
constexpr uint8_t kPassphrasePbkdf2 = 1;
constexpr uint8_t kKeyHkdf = 2;
constexpr uint8_t kPassphraseArgon2id = 3;

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

bool uses_argon2id(const Header &header) {
  return header.key_source == WC_SEAL_PASSPHRASE && header.kdf == WC_SEAL_ARGON2ID;
}

}  // namespace

const char *digest_name(Digest digest) {
  switch (digest) {
    case Digest::sha256:
      return "sha256";
    case Digest::sha512:
      return "sha512";
    case Digest::none:
      break;
  }
  return nullptr;
}

wc_status make_header(const HostCrypto &crypto, const wc_seal_params &params, Header *header, const char **detail) {
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
  header->kdf = params.kdf;
  header->iterations = 0;
  header->argon2_ops = 0;
  header->argon2_memory_kib = 0;
  if (header->key_source == WC_SEAL_PASSPHRASE && header->kdf == WC_SEAL_PBKDF2) {
    header->iterations = params.iterations;
    if (header->iterations == 0 || header->iterations > kMaxIterations) {
      return invalid("PBKDF2 iterations must be 1 to 100,000,000");
    }
  } else if (uses_argon2id(*header)) {
    if (params.argon2_ops == 0) return invalid("Argon2id needs at least one pass");
    if (params.argon2_memory % kArgon2BlockLen != 0 || params.argon2_memory < WC_SEAL_MIN_ARGON2_MEMORY ||
        params.argon2_memory > WC_SEAL_MAX_ARGON2_MEMORY) {
      return invalid("Argon2id's memory must be a whole number of KiB from 8 KiB to 2^32 - 1 KiB");
    }
    header->argon2_ops = params.argon2_ops;
    header->argon2_memory_kib = static_cast<uint32_t>(params.argon2_memory / kArgon2BlockLen);
  } else if (header->key_source == WC_SEAL_PASSPHRASE) {
    return invalid("the passphrase KDF must be WC_SEAL_ARGON2ID or WC_SEAL_PBKDF2");
  } else if (header->key_source != WC_SEAL_KEY) {
    return invalid("the key source must be WC_SEAL_PASSPHRASE or WC_SEAL_KEY");
  }
  const std::string_view digest = params.digest != nullptr ? params.digest : "sha256";
  if (uses_argon2id(*header)) {
    header->digest = Digest::none;
  } else if (digest == "sha256") {
    header->digest = Digest::sha256;
  } else if (digest == "sha512") {
    header->digest = Digest::sha512;
  } else {
    *detail = "the format's KDF digest is sha256 or sha512";
    return WC_ERR_DIGEST;
  }
  if (crypto.random->fill(header->salt) != WC_OK || crypto.random->fill(header->nonce_prefix) != WC_OK) {
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
  const bool argon2id = uses_argon2id(header);
  out[12] = header.key_source == WC_SEAL_KEY ? kKeyHkdf : argon2id ? kPassphraseArgon2id : kPassphrasePbkdf2;
  out[13] = static_cast<uint8_t>(header.digest);
  store_be32(&out[16], argon2id ? header.argon2_ops : header.iterations);
  std::copy(header.salt.begin(), header.salt.end(), out.begin() + 20);
  std::copy(header.nonce_prefix.begin(), header.nonce_prefix.end(), out.begin() + 36);
  if (argon2id) {
    out[43] = kArgon2Lanes;
    store_be32(&out[44], header.argon2_memory_kib);
  }
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
  if (in[12] == kPassphrasePbkdf2 || in[12] == kPassphraseArgon2id) {
    header->key_source = WC_SEAL_PASSPHRASE;
    header->kdf = in[12] == kPassphraseArgon2id ? WC_SEAL_ARGON2ID : WC_SEAL_PBKDF2;
  } else if (in[12] == kKeyHkdf) {
    header->key_source = WC_SEAL_KEY;
  } else {
    return bad("bad header: unknown key source");
  }
  const bool argon2id = uses_argon2id(*header);
  header->digest = static_cast<Digest>(in[13]);
  if (argon2id && header->digest != Digest::none) return bad("bad header: Argon2id takes no digest");
  if (!argon2id && header->digest != Digest::sha256 && header->digest != Digest::sha512) {
    return bad("bad header: unknown digest");
  }
  const uint32_t count = load_be32(&in[16]);
  header->iterations = 0;
  header->argon2_ops = 0;
  header->argon2_memory_kib = 0;
  if (argon2id) {
    header->argon2_ops = count;
    header->argon2_memory_kib = load_be32(&in[44]);
    if (header->argon2_ops == 0) return bad("bad header: Argon2id with no passes");
    if (in[43] != kArgon2Lanes) return bad("bad header: Argon2id lanes other than 1");
    if (header->argon2_memory_kib < kMinArgon2MemoryKib) {
      return bad("bad header: Argon2id memory below libsodium's minimum of 8 KiB");
    }
  } else {
    header->iterations = count;
    const bool iterations_valid = header->key_source == WC_SEAL_PASSPHRASE
                                      ? header->iterations >= 1 && header->iterations <= kMaxIterations
                                      : header->iterations == 0;
    if (!iterations_valid) return bad("bad header: implausible iteration count");
  }
  // Argon2id's lanes and memory fill the last five bytes.
  if (!all_zero(&in[14], 2) || (!argon2id && !all_zero(&in[43], 5))) {
    return bad("bad header: reserved bytes are not zero");
  }
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

namespace {

// What a key of the wrong length is told, by the length the AEAD takes:
// static sentences, as a job's detail must be.
const char *key_length_detail(size_t needed) {
  switch (needed) {
    case 16: return "wrong key length: the AEAD takes a 16-byte key";
    case 24: return "wrong key length: the AEAD takes a 24-byte key";
    case 32: return "wrong key length: the AEAD takes a 32-byte key";
    default: return "wrong key length for the AEAD";
  }
}

}  // namespace

wc_status derive_file_key(const HostCrypto &crypto, const Header &header, std::span<const uint8_t> secret,
                          FileKey *key, const char **detail) {
  key->len = header.aead->key_len;
  const std::span<uint8_t> out(key->bytes.data(), key->len);
  const char *digest = digest_name(header.digest);
  if (uses_argon2id(header)) {
    return crypto.argon2id(out, header.argon2_ops, uint64_t{header.argon2_memory_kib} * kArgon2BlockLen, secret,
                           header.salt);
  }
  if (header.key_source == WC_SEAL_PASSPHRASE) {
    return crypto.pbkdf2(out, digest, header.iterations, secret, header.salt);
  }
  if (secret.size() != key->len) {
    *detail = key_length_detail(key->len);
    return WC_ERR_KEY_LEN;
  }
  const std::span<const uint8_t> info(reinterpret_cast<const uint8_t *>(kHkdfInfo), sizeof kHkdfInfo - 1);
  return crypto.hkdf(out, digest, secret, header.salt, info);
}

wc_status check_kdf_cost(const Header &header, const wc_open_params &params, const char **detail) {
  // Each message ends with the same advice: the limits are the reader's
  // own, and only the person who sealed the file knows what it needs.
  if (header.iterations > params.max_iterations) {
    *detail = "the header asks for more PBKDF2 iterations than this reader's limit "
              "(raise the limit only for a file you expect)";
  } else if (header.argon2_ops > params.max_argon2_ops) {
    *detail = "the header asks for more Argon2id passes than this reader's limit "
              "(raise the limit only for a file you expect)";
  } else if (uint64_t{header.argon2_memory_kib} * kArgon2BlockLen > params.max_argon2_memory) {
    *detail = "the header asks for more Argon2id memory than this reader's limit "
              "(raise the limit only for a file you expect)";
  } else {
    return WC_OK;
  }
  return WC_ERR_FORMAT;
}

wc_status layout_of(const Header &header, uint64_t body_len, Layout *layout, const char **detail) {
  const std::array<uint8_t, kHeaderLen> bytes = encode(header);
  return engine::layout_of(stream_shape(header, bytes), body_len, layout, detail);
}

}  // namespace warpcrypt::sealed
