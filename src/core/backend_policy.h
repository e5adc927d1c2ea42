// Which backend runs a piece of work, and building that backend's cipher.
// Every primitive has one table entry per backend {cpu, cuda}; the policy
// picks one, and callers can ask which it picked.
#pragma once

#include "core/backend.h"

namespace warpcrypt {

// Resolves WC_BACKEND_AUTO to a concrete backend and checks that an explicit
// request can be honoured: asking for the GPU without a device is an error,
// never a silent fallback.
wc_status choose_backend(wc_backend *chosen, const wc_options &options, const wc_cipher &cipher,
                         wc_direction direction);

wc_status make_backend_cipher(BackendCipher *out, wc_backend backend, const wc_options &options,
                              const wc_cipher &cipher, wc_direction direction,
                              const KeyMaterial &key);

}  // namespace warpcrypt
