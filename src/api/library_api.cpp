// The C API's small entries: status text, version, names and defaults, the
// registries' getters, and the byte helpers.
#include <cstddef>
#include <cstdint>

#include "core/aead_registry.h"
#include "core/backend_tables.h"
#include "core/cipher_registry.h"
#include "core/cpu_budget.h"
#include "core/secret_bytes.h"
#include "core/status_text.h"
#include "engine/placement.h"

#define WC_STRINGIFY2(x) #x
#define WC_STRINGIFY(x) WC_STRINGIFY2(x)

namespace {

// Switches, not tables, so that -Wswitch names any value the header gains
// and these lack; nullptr for a value outside the enum.
constexpr const char *status_name(wc_status status) {
  switch (status) {
    case WC_OK: return "OK";
    case WC_ERR_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case WC_ERR_UNKNOWN_CIPHER: return "UNKNOWN_CIPHER";
    case WC_ERR_KEY_LEN: return "KEY_LEN";
    case WC_ERR_IV_LEN: return "IV_LEN";
    case WC_ERR_NOT_BLOCK_ALIGNED: return "NOT_BLOCK_ALIGNED";
    case WC_ERR_BAD_DECRYPT: return "BAD_DECRYPT";
    case WC_ERR_OUTPUT_TOO_SMALL: return "OUTPUT_TOO_SMALL";
    case WC_ERR_RANGE: return "RANGE";
    case WC_ERR_UNSUPPORTED: return "UNSUPPORTED";
    case WC_ERR_NO_DEVICE: return "NO_DEVICE";
    case WC_ERR_BACKEND_UNAVAILABLE: return "BACKEND_UNAVAILABLE";
    case WC_ERR_CONTEXT_STATE: return "CONTEXT_STATE";
    case WC_ERR_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
    case WC_ERR_CRYPTO_LIBRARY: return "CRYPTO_LIBRARY";
    case WC_ERR_DIGEST: return "DIGEST";
    case WC_ERR_DEVICE: return "DEVICE";
    case WC_ERR_IO: return "IO";
    case WC_ERR_CANCELLED: return "CANCELLED";
    case WC_ERR_AUTH: return "AUTH";
    case WC_ERR_FORMAT: return "FORMAT";
    case WC_ERR_NO_IDENTITY: return "NO_IDENTITY";
  }
  return nullptr;
}

constexpr const char *kind_name(wc_status_kind kind) {
  switch (kind) {
    case WC_KIND_OK: return "ok";
    case WC_KIND_FAILURE: return "failure";
    case WC_KIND_USAGE: return "usage";
    case WC_KIND_IO: return "io";
    case WC_KIND_AUTH: return "auth";
    case WC_KIND_NO_DEVICE: return "no_device";
  }
  return nullptr;
}

constexpr const char *backend_name(wc_backend backend) {
  switch (backend) {
    case WC_BACKEND_AUTO: return "auto";
    case WC_BACKEND_CPU: return "cpu";
    case WC_BACKEND_GPU: return "gpu";
    case WC_BACKEND_HYBRID: return "hybrid";
  }
  return nullptr;
}

// Both enums are numbered from 0 without gaps, so the first value without
// a name counts them, and the count follows the switches above.
template <class Enum>
constexpr size_t count_named(const char *(*name)(Enum)) {
  size_t count = 0;
  while (name(static_cast<Enum>(count)) != nullptr) ++count;
  return count;
}
constexpr size_t kStatusCount = count_named(status_name);
constexpr size_t kBackendCount = count_named(backend_name);

}  // namespace

extern "C" {

const char *wc_status_string(wc_status status) { return warpcrypt::status_text(status); }

const char *wc_status_name(wc_status status) { return status_name(status); }
size_t wc_status_count(void) { return kStatusCount; }

wc_status_kind wc_status_kind_of(wc_status status) { return warpcrypt::status_kind(status); }
const char *wc_status_kind_name(wc_status_kind kind) { return kind_name(kind); }

const char *wc_version(void) {
  return WC_STRINGIFY(WARPCRYPT_VERSION_MAJOR) "." WC_STRINGIFY(WARPCRYPT_VERSION_MINOR) "." WC_STRINGIFY(
      WARPCRYPT_VERSION_PATCH);
}

const char *wc_openssl_version(void) { return warpcrypt::kCpuBackend.openssl_version(); }

const char *wc_backend_name(wc_backend backend) {
  const char *name = backend_name(backend);
  return name != nullptr ? name : "unknown";
}
size_t wc_backend_count(void) { return kBackendCount; }
wc_backend wc_backend_at(size_t index) {
  return index < kBackendCount ? static_cast<wc_backend>(index) : WC_BACKEND_AUTO;
}

void wc_options_init(wc_options *options) {
  if (options == nullptr) return;
  options->backend = WC_BACKEND_AUTO;
  options->threads = 0;
  options->chunk_bytes = 0;
  options->streams = 0;
  options->devices = nullptr;
  options->device_count = 0;
}

unsigned wc_default_threads(void) { return warpcrypt::usable_cpus(); }

void wc_job_init(wc_job *job) {
  if (job != nullptr) *job = wc_job{};
}

void wc_memzero(void *buf, size_t len) { warpcrypt::secure_wipe(buf, len); }

wc_status wc_hex_decode(uint8_t *out, size_t out_cap, size_t *out_len, const char *hex,
                        size_t hex_len) {
  if (out_len != nullptr) *out_len = 0;
  if (hex == nullptr || out_len == nullptr || (out == nullptr && hex_len != 0)) {
    return WC_ERR_INVALID_ARGUMENT;
  }
  // Whatever fails, the caller's buffer holds no partial key afterwards.
  const auto fail = [&](wc_status status) {
    warpcrypt::secure_wipe(out, out_cap);
    return status;
  };
  if (hex_len % 2 != 0) return fail(WC_ERR_INVALID_ARGUMENT);
  if (hex_len / 2 > out_cap) return fail(WC_ERR_OUTPUT_TOO_SMALL);
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < hex_len; i += 2) {
    const int high = nibble(hex[i]);
    const int low = nibble(hex[i + 1]);
    if (high < 0 || low < 0) return fail(WC_ERR_INVALID_ARGUMENT);
    out[i / 2] = static_cast<uint8_t>(high << 4 | low);
  }
  *out_len = hex_len / 2;
  return WC_OK;
}

size_t wc_auto_gpu_min_bytes(const wc_cipher *cipher, wc_direction direction) {
  return cipher != nullptr ? warpcrypt::engine::auto_gpu_min_bytes(*cipher, direction) : SIZE_MAX;
}

const wc_cipher *wc_cipher_by_name(const char *name) { return warpcrypt::find_cipher(name); }
size_t wc_cipher_count(void) { return warpcrypt::all_ciphers().size(); }
const wc_cipher *wc_cipher_at(size_t index) {
  const auto ciphers = warpcrypt::all_ciphers();
  return index < ciphers.size() ? &ciphers[index] : nullptr;
}
const char *wc_cipher_name(const wc_cipher *cipher) { return cipher ? cipher->name : nullptr; }
size_t wc_cipher_key_len(const wc_cipher *cipher) { return cipher ? cipher->key_len : 0; }
size_t wc_cipher_iv_len(const wc_cipher *cipher) { return cipher ? cipher->iv_len : 0; }
size_t wc_cipher_block_len(const wc_cipher *cipher) { return cipher ? cipher->block_len : 0; }
int wc_cipher_is_padded(const wc_cipher *cipher) { return cipher && warpcrypt::is_padded(*cipher); }
const wc_cipher *wc_cipher_unpadded(const wc_cipher *cipher) {
  return cipher != nullptr ? &warpcrypt::unpadded(*cipher) : nullptr;
}
int wc_cipher_has_random_access(const wc_cipher *cipher) {
  return cipher && warpcrypt::has_random_access(*cipher);
}

const wc_aead *wc_aead_by_name(const char *name) { return warpcrypt::find_aead(name); }
size_t wc_aead_count(void) { return warpcrypt::all_aeads().size(); }
const wc_aead *wc_aead_at(size_t index) {
  const auto aeads = warpcrypt::all_aeads();
  return index < aeads.size() ? &aeads[index] : nullptr;
}
const char *wc_aead_name(const wc_aead *aead) { return aead != nullptr ? aead->name : nullptr; }
size_t wc_aead_key_len(const wc_aead *aead) { return aead != nullptr ? aead->key_len : 0; }
size_t wc_aead_nonce_len(const wc_aead *aead) { return aead != nullptr ? warpcrypt::kAeadNonceLen : 0; }
int wc_aead_nonce_len_valid(const wc_aead *aead, size_t nonce_len) {
  return aead != nullptr && warpcrypt::aead_nonce_len_valid(*aead, nonce_len);
}
uint64_t wc_aead_max_message_len(const wc_aead *aead) {
  return aead != nullptr ? warpcrypt::aead_max_message_len(*aead) : 0;
}

}  // extern "C"
