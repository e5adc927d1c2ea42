// The terminal as the user interface age plugins talk to (wc_age_plugin_ui):
// their messages on standard error, their requests for values asked on the
// terminal through the one passphrase prompt.
#pragma once

#include "warpcrypt/age.h"

namespace warpcrypt::cli {

const wc_age_plugin_ui &terminal_plugin_ui();

}  // namespace warpcrypt::cli
