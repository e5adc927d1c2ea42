#include "core/backend_policy.h"

#include "cpu/cpu_backend.h"

namespace warpcrypt {

wc_status choose_backend(wc_backend *chosen, const wc_options &options, const wc_cipher &,
                         wc_direction) {
  switch (options.backend) {
    case WC_BACKEND_CPU:
    case WC_BACKEND_AUTO:
      // The GPU kernels arrive with the CUDA backend; until then the CPU runs
      // everything, and auto says so by reporting WC_BACKEND_CPU.
      *chosen = WC_BACKEND_CPU;
      return WC_OK;
    case WC_BACKEND_GPU: {
      int devices = 0;
      if (wc_device_count(&devices) != WC_OK || devices == 0) return WC_ERR_NO_DEVICE;
      return WC_ERR_BACKEND_UNAVAILABLE;
    }
  }
  return WC_ERR_INVALID_ARGUMENT;
}

wc_status make_backend_cipher(BackendCipher *out, wc_backend backend, const wc_options &options,
                              const wc_cipher &cipher, wc_direction direction,
                              const KeyMaterial &key) {
  if (backend == WC_BACKEND_CPU) return cpu::make_cipher(out, options, cipher, direction, key);
  return WC_ERR_BACKEND_UNAVAILABLE;
}

}  // namespace warpcrypt
