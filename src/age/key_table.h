// The table of age's key types: one entry a type (age/key.h), each filled
// in its own file under age/keys/. The key calls (age/age_keys.h) look a
// type up here and do what its entry says.
#pragma once

#include <span>

#include "age/key.h"

namespace warpcrypt::age {

// Every type, each once.
std::span<const KeyTypeEntry *const> key_types();
// The entry of `type`.
const KeyTypeEntry &key_type(KeyType type);

}  // namespace warpcrypt::age
