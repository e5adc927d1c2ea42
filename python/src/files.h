// Whole files through the library's engine: wc_encrypt_file and
// wc_decrypt_file for the `openssl enc` ciphers, and the sealed-file
// format's wc_seal_file, wc_open_file and wc_sealed_inspect.
#pragma once

#include <nanobind/nanobind.h>

namespace wcpy {

void bind_files(nanobind::module_ &m);

}  // namespace wcpy
