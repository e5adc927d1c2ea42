// age v1 files (include/warpcrypt/age.h): key sets, and encryption and
// decryption of bytes, descriptors and paths.
#pragma once

#include <nanobind/nanobind.h>

namespace wcpy {

void bind_age(nanobind::module_ &m);

}  // namespace wcpy
