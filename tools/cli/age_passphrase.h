// Where `warpcrypt age` takes a passphrase from, besides -pass: typed at
// the terminal as age asks for it, or, for `-j batchpass`, from the
// environment as age 1.3's age-plugin-batchpass reads it.
#pragma once

#include <string>

namespace warpcrypt::cli {

class Passphrase;

// A new passphrase to encrypt with, asked as age asks: "Enter passphrase
// (leave empty to autogenerate a secure one):", then "Confirm passphrase:".
// An empty answer makes one up (125 random bits), shown on the terminal
// alone, never on standard error.
void ask_new_age_passphrase(Passphrase *out);

// The passphrase of `-j batchpass`: $AGE_PASSPHRASE, or what descriptor
// $AGE_PASSPHRASE_FD holds up to its end, without the CRs and LFs that end
// it. Exactly one of the two must be set (non-empty); an empty passphrase
// is refused.
void read_batchpass_passphrase(Passphrase *out);

// A work factor for `-j batchpass` from `variable`
// (AGE_PASSPHRASE_WORK_FACTOR, AGE_PASSPHRASE_MAX_WORK_FACTOR): 1 to 30, or
// `unset` where the variable is unset or empty.
unsigned batchpass_work_factor(const char *variable, unsigned unset);

}  // namespace warpcrypt::cli
