// Authenticated encryption (the C API's wc_aead_* calls) for warpcrypt.aead.
#pragma once

#include <nanobind/nanobind.h>

namespace wcpy {

// Defines AeadInfo, the AEAD table's lookups, the tag and nonce limits, and
// Aead: a key bound to one AEAD, which seals and opens single messages and
// batches in host memory or in GPU arrays.
void bind_aead(nanobind::module_ &m);

}  // namespace wcpy
