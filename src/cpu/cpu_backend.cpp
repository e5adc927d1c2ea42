#include "cpu/cpu_backend.h"

#include "cpu/evp_cipher.h"
#include "cpu/salsa20.h"

namespace warpcrypt::cpu {

wc_status make_cipher(BackendCipher *out, const wc_options &options, const wc_cipher &cipher,
                      wc_direction direction, const KeyMaterial &key) {
  if (!is_parallel(cipher, direction)) {
    out->sequential = make_evp_sequential(cipher, direction, key);
    return out->sequential ? WC_OK : WC_ERR_CRYPTO_LIBRARY;
  }
  if (cipher.primitive == Primitive::salsa20) {
    out->random_access = make_salsa20(cipher, key, options.threads);
  } else {
    out->random_access = make_evp_random_access(cipher, direction, key, options.threads);
  }
  return out->random_access ? WC_OK : WC_ERR_CRYPTO_LIBRARY;
}

}  // namespace warpcrypt::cpu
