// Fuzzes the sealed-file header parser: decode() on the input's first 48
// bytes, then layout_of() on what it accepts, with a body length from the
// next 8 (big-endian). Shorter inputs are padded with zeros. Besides the
// sanitizers' checks: a refusal names its reason, an accepted header encodes
// back to the same bytes and holds KDF costs libsodium or OpenSSL accept
// (Argon2id's at least one pass over 8 KiB), the reader's cost check refuses
// exactly the costs above its limits, and an accepted layout accounts for
// every byte of the body and ends in a non-empty chunk unless it has only one.
#include <algorithm>
#include <array>
#include <cstdint>
#include <span>

#include "fuzz_support.h"
#include "sealed/sealed_format.h"

namespace {

namespace sealed = warpcrypt::sealed;
using warpcrypt::fuzz::require;

uint64_t load_be64(const uint8_t *in) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value = value << 8 | in[i];
  return value;
}

void check_layout(const sealed::Header &header, uint64_t body_len) {
  sealed::Layout layout;
  const char *detail = nullptr;
  if (sealed::layout_of(header, body_len, &layout, &detail) != WC_OK) {
    require(detail != nullptr, "layout_of refused a body without a detail");
    return;
  }
  require(layout.chunks >= 1 && layout.chunks <= uint64_t{1} << 32, "chunk count out of range");
  require(layout.last_chunk_len <= header.chunk_size(), "last chunk longer than a chunk");
  require(layout.chunks == 1 || layout.last_chunk_len != 0, "an empty final chunk after chunk 0");
  const uint64_t full_chunks = layout.chunks - 1;
  require(full_chunks * header.sealed_chunk_size() + layout.last_chunk_len + sealed::kTagLen == body_len,
          "the chunks do not add up to the body");
  require(full_chunks * header.chunk_size() + layout.last_chunk_len == layout.plaintext_len,
          "the plaintext length does not match the chunks");
}

void check_kdf(const sealed::Header &header) {
  if (header.key_source == WC_SEAL_KEY) {
    require(header.iterations == 0 && header.argon2_ops == 0 && header.argon2_memory_kib == 0, "a key with KDF costs");
  } else if (header.kdf == WC_SEAL_ARGON2ID) {
    require(header.iterations == 0 && header.argon2_ops >= 1 && header.argon2_memory_kib >= 8 &&
                sealed::digest_name(header.digest) == nullptr,
            "Argon2id costs out of range");
  } else {
    require(header.iterations >= 1 && header.iterations <= sealed::kMaxIterations && header.argon2_ops == 0 &&
                header.argon2_memory_kib == 0,
            "PBKDF2 costs out of range");
  }
  wc_open_params limits;
  wc_open_params_init(&limits);
  const bool within = header.iterations <= limits.max_iterations && header.argon2_ops <= limits.max_argon2_ops &&
                      uint64_t{header.argon2_memory_kib} * 1024 <= limits.max_argon2_memory;
  const char *detail = nullptr;
  const wc_status status = sealed::check_kdf_cost(header, limits, &detail);
  require((status == WC_OK) == within, "the cost check disagrees with the limits");
  require(status == WC_OK || detail != nullptr, "the cost check refused without a detail");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::array<uint8_t, sealed::kHeaderLen + 8> input{};
  std::copy_n(data, std::min(size, input.size()), input.begin());
  const std::span<const uint8_t, sealed::kHeaderLen> header_bytes(input.data(), sealed::kHeaderLen);

  sealed::Header header;
  const char *detail = nullptr;
  if (sealed::decode(header_bytes, &header, &detail) != WC_OK) {
    require(detail != nullptr, "decode refused a header without a detail");
    return 0;
  }
  const std::array<uint8_t, sealed::kHeaderLen> encoded = sealed::encode(header);
  require(std::equal(encoded.begin(), encoded.end(), header_bytes.begin()),
          "an accepted header does not encode back to its bytes");
  check_kdf(header);
  check_layout(header, load_be64(&input[sealed::kHeaderLen]));
  return 0;
}
