// Every status in words: one static English sentence each, the text of
// wc_status_string and the last resort of every job's message.
#pragma once

#include "warpcrypt/warpcrypt.h"

namespace warpcrypt {

const char *status_text(wc_status status);

}  // namespace warpcrypt
