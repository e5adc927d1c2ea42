#include "age/key_table.h"

#include <cstdlib>

namespace warpcrypt::age {

// Defined by the files of age/keys/.
extern const KeyTypeEntry kX25519Key;
extern const KeyTypeEntry kHybridKey;
extern const KeyTypeEntry kP256TagKey;
extern const KeyTypeEntry kMlkem768P256TagKey;
extern const KeyTypeEntry kSshEd25519Key;
extern const KeyTypeEntry kSshRsaKey;
extern const KeyTypeEntry kScryptKey;
extern const KeyTypeEntry kPluginKey;

namespace {

// A plugin last: a native type opens a file without running a program or
// asking the user anything.
constexpr const KeyTypeEntry *kKeyTypes[] = {&kX25519Key,     &kHybridKey, &kP256TagKey, &kMlkem768P256TagKey,
                                             &kSshEd25519Key, &kSshRsaKey, &kScryptKey,  &kPluginKey};

}  // namespace

std::span<const KeyTypeEntry *const> key_types() { return kKeyTypes; }

const KeyTypeEntry &key_type(KeyType type) {
  for (const KeyTypeEntry *entry : kKeyTypes) {
    if (entry->type == type) return *entry;
  }
  // Every KeyType has an entry (tests/unit/age_key_types_test.cpp checks);
  // any other value is corrupted memory, which no key may be made from.
  std::abort();
}

}  // namespace warpcrypt::age
