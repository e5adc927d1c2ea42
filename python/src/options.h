// The library's options from the backend and threads arguments every Python
// call takes: how work runs, never what the output looks like.
#pragma once

#include "warpcrypt/warpcrypt.h"

namespace wcpy {

inline wc_options make_options(int backend, unsigned threads) {
  wc_options options;
  wc_options_init(&options);
  options.backend = static_cast<wc_backend>(backend);
  options.threads = threads;
  return options;
}

}  // namespace wcpy
