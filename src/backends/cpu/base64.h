// `openssl enc -a`'s base64 (core/host_crypto.h's TextCoder), on the code
// `openssl enc -a` runs: EVP_EncodeUpdate and EVP_DecodeUpdate, and
// EVP_EncodeBlock for -A's one line.
#pragma once

#include <memory>

#include "core/host_crypto.h"

namespace warpcrypt::cpu {

std::unique_ptr<TextCoder> make_base64(bool encode, bool one_line);

}  // namespace warpcrypt::cpu
