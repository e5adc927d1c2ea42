#include "speed_workload.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "cli_error.h"

namespace warpcrypt::cli {
namespace {

struct CtxDeleter {
  void operator()(wc_ctx *ctx) const { wc_ctx_free(ctx); }
};

std::shared_ptr<uint8_t> allocate_workload_buffer(const WorkloadSpec &spec) {
  return spec.memory == HostMemory::pinned ? allocate_pinned_buffer(spec.bytes) : allocate_pageable_buffer(spec.bytes);
}

// Back-to-back updates on one context, the way `openssl speed -evp` loops
// EVP_EncryptUpdate. Padding is off: speed is about the cipher, and ECB and
// CBC then take whole blocks only.
class HostWorkload final : public Workload {
 public:
  explicit HostWorkload(const WorkloadSpec &spec)
      : bytes_(spec.bytes), buffer_(allocate_workload_buffer(spec)) {
    std::vector<uint8_t> key(wc_cipher_key_len(spec.cipher));
    std::vector<uint8_t> iv(wc_cipher_iv_len(spec.cipher));
    check(wc_random_bytes(key.data(), key.size()), "random key");
    check(wc_random_bytes(iv.data(), iv.size()), "random IV");
    fill_random(buffer_.get(), bytes_);
    const wc_options options = library_options(spec.backend, spec.threads, *spec.engine);
    wc_ctx *raw = nullptr;
    // ECB and CBC take whole blocks without padding: the buffer is whole blocks.
    check(wc_ctx_new(&raw, &options, wc_cipher_unpadded(spec.cipher), spec.direction, key.data(), key.size(), iv.data(),
                     iv.size()),
          std::string("cannot start ") + wc_cipher_name(spec.cipher) + " on backend " +
              wc_backend_name(spec.backend));
    ctx_.reset(raw);
  }

  double time_operations(size_t operations) override {
    const auto start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < operations; ++i) {
      size_t produced = 0;
      check(wc_ctx_update(ctx_.get(), buffer_.get(), bytes_, &produced, buffer_.get(), bytes_), "update");
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

 private:
  size_t bytes_;
  std::shared_ptr<uint8_t> buffer_;
  std::unique_ptr<wc_ctx, CtxDeleter> ctx_;
};

// One message per operation through the one-shot calls, as `openssl speed
// -evp` runs an AEAD. Sealing works in place; opening reads a message
// sealed once and writes elsewhere, so that every operation authenticates.
class HostAeadWorkload final : public Workload {
 public:
  explicit HostAeadWorkload(const WorkloadSpec &spec)
      : spec_(spec), keying_(make_aead_keying(spec.aead)),
        buffer_(allocate_workload_buffer(spec)),
        opened_(spec.direction == WC_DECRYPT ? allocate_workload_buffer(spec) : nullptr),
        options_(library_options(spec.backend, spec.threads, *spec.engine)) {
    fill_random(buffer_.get(), spec.bytes);
    if (spec.direction == WC_DECRYPT) seal();
  }

  double time_operations(size_t operations) override {
    const auto start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < operations; ++i) {
      if (spec_.direction == WC_ENCRYPT) {
        seal();
      } else {
        size_t written = 0;
        check(wc_aead_open(&options_, spec_.aead, opened_.get(), spec_.bytes, &written, keying_.key.data(),
                           keying_.key.size(), keying_.nonce.data(), keying_.nonce.size(), nullptr, 0, buffer_.get(),
                           spec_.bytes, keying_.tag.data(), keying_.tag.size()),
              "open");
      }
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

 private:
  void seal() {
    size_t written = 0;
    check(wc_aead_seal(&options_, spec_.aead, buffer_.get(), spec_.bytes, &written, keying_.tag.data(),
                       keying_.tag.size(), keying_.key.data(), keying_.key.size(), keying_.nonce.data(),
                       keying_.nonce.size(), nullptr, 0, buffer_.get(), spec_.bytes),
          std::string("seal with ") + wc_aead_name(spec_.aead) + " on backend " + wc_backend_name(spec_.backend));
  }

  WorkloadSpec spec_;
  AeadKeying keying_;
  std::shared_ptr<uint8_t> buffer_;
  std::shared_ptr<uint8_t> opened_;
  wc_options options_;
};

}  // namespace

AeadKeying make_aead_keying(const wc_aead *aead) {
  AeadKeying keying{std::vector<uint8_t>(wc_aead_key_len(aead)), std::vector<uint8_t>(wc_aead_nonce_len(aead)),
                    std::vector<uint8_t>(WC_AEAD_MAX_TAG_LEN)};
  check(wc_random_bytes(keying.key.data(), keying.key.size()), "random key");
  check(wc_random_bytes(keying.nonce.data(), keying.nonce.size()), "random nonce");
  return keying;
}

void fill_random(uint8_t *buffer, size_t bytes) {
  // Random, never zeros (zeros can hide unwritten output and flatter
  // timings); past 64 MiB the random pattern repeats, which keeps multi-GiB
  // buffers quick to set up and is still nothing a cipher can exploit.
  constexpr size_t kPattern = size_t{64} << 20;
  const size_t first = std::min(bytes, kPattern);
  check(wc_random_bytes(buffer, first), "random data");
  for (size_t at = first; at < bytes; at += kPattern) std::memcpy(buffer + at, buffer, std::min(kPattern, bytes - at));
}

std::shared_ptr<uint8_t> allocate_pageable_buffer(size_t bytes) {
  auto *memory = static_cast<uint8_t *>(std::aligned_alloc(64, (bytes + 63) / 64 * 64));
  if (memory == nullptr) throw std::bad_alloc();
  return std::shared_ptr<uint8_t>(memory, [](uint8_t *p) { std::free(p); });
}

std::unique_ptr<Workload> make_host_workload(const WorkloadSpec &spec) {
  if (spec.aead != nullptr) return std::make_unique<HostAeadWorkload>(spec);
  return std::make_unique<HostWorkload>(spec);
}

}  // namespace warpcrypt::cli
