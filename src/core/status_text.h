// Every status in words: one static English sentence each, the text of
// wc_status_string and the last resort of every job's message; and the kind
// of failure each status is.
#pragma once

#include "warpcrypt/warpcrypt.h"

namespace warpcrypt {

const char *status_text(wc_status status);

// The one rule that sorts statuses into kinds (wc_status_kind_of).
wc_status_kind status_kind(wc_status status);

}  // namespace warpcrypt
