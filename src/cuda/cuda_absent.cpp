// Device queries for a build without the CUDA backend: there are no devices.
#include "warpcrypt/warpcrypt.h"

extern "C" {

wc_status wc_device_count(int *count) {
  if (count == nullptr) return WC_ERR_INVALID_ARGUMENT;
  *count = 0;
  return WC_OK;
}

wc_status wc_device_info_get(wc_device_info *info, int) {
  return info == nullptr ? WC_ERR_INVALID_ARGUMENT : WC_ERR_NO_DEVICE;
}

int wc_built_with_cuda(void) { return 0; }

}  // extern "C"
