#include "core/status_text.h"

namespace warpcrypt {

const char *status_text(wc_status status) {
  switch (status) {
    case WC_OK: return "success";
    case WC_ERR_INVALID_ARGUMENT: return "invalid argument";
    case WC_ERR_UNKNOWN_CIPHER: return "unknown cipher";
    case WC_ERR_KEY_LEN: return "wrong key length for this cipher";
    case WC_ERR_IV_LEN: return "wrong IV length for this cipher";
    case WC_ERR_NOT_BLOCK_ALIGNED: return "data is not a multiple of the block size (padding is off)";
    case WC_ERR_BAD_DECRYPT: return "bad decrypt: wrong key or passphrase, or corrupt ciphertext";
    case WC_ERR_OUTPUT_TOO_SMALL: return "output buffer too small";
    case WC_ERR_RANGE: return "byte range outside the ciphertext";
    case WC_ERR_UNSUPPORTED: return "operation not supported by this cipher";
    case WC_ERR_NO_DEVICE: return "no usable CUDA device";
    case WC_ERR_BACKEND_UNAVAILABLE: return "the requested backend cannot run this cipher";
    case WC_ERR_CONTEXT_STATE: return "context used after final or after an error";
    case WC_ERR_OUT_OF_MEMORY: return "out of memory";
    case WC_ERR_CRYPTO_LIBRARY: return "the underlying crypto library failed";
    case WC_ERR_DIGEST: return "unknown message digest";
    case WC_ERR_DEVICE: return "a CUDA operation failed";
    case WC_ERR_IO: return "reading the input or writing the output failed";
    case WC_ERR_CANCELLED: return "cancelled";
    case WC_ERR_FORMAT: return "not a file of the expected format, or its header is damaged or of an unknown version";
    case WC_ERR_NO_IDENTITY: return "no identity matched any of the recipients";  // age's words
    case WC_ERR_AUTH: return "authentication failed: wrong key, nonce or associated data, or tampered data";
  }
  return "unknown status";
}

wc_status_kind status_kind(wc_status status) {
  switch (status) {
    case WC_OK: return WC_KIND_OK;
    case WC_ERR_INVALID_ARGUMENT:
    case WC_ERR_UNKNOWN_CIPHER:
    case WC_ERR_KEY_LEN:
    case WC_ERR_IV_LEN:
    case WC_ERR_NOT_BLOCK_ALIGNED:
    case WC_ERR_OUTPUT_TOO_SMALL:
    case WC_ERR_RANGE:
    case WC_ERR_UNSUPPORTED:
    case WC_ERR_CONTEXT_STATE:
    case WC_ERR_DIGEST: return WC_KIND_USAGE;
    case WC_ERR_IO: return WC_KIND_IO;
    // A bad decrypt is what openssl enc reports for a wrong passphrase; a
    // damaged header, or an age file none of whose recipients the
    // identities open, is the same answer to the reader: this data, with
    // this secret, does not open.
    case WC_ERR_BAD_DECRYPT:
    case WC_ERR_AUTH:
    case WC_ERR_FORMAT:
    case WC_ERR_NO_IDENTITY: return WC_KIND_AUTH;
    case WC_ERR_NO_DEVICE:
    case WC_ERR_BACKEND_UNAVAILABLE: return WC_KIND_NO_DEVICE;
    case WC_ERR_OUT_OF_MEMORY:
    case WC_ERR_CRYPTO_LIBRARY:
    case WC_ERR_DEVICE:
    case WC_ERR_CANCELLED: return WC_KIND_FAILURE;
  }
  return WC_KIND_FAILURE;
}

}  // namespace warpcrypt
