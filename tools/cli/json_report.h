// --json on enc, seal, open and age: the run's result as one line of JSON on
// standard output, in place of the summary line or the error line.
#pragma once

#include <functional>
#include <string>

#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::cli {

// `text` as a JSON string, quotes included: quotes and backslashes escaped,
// control bytes and DEL as \u00XX. With `html`, also <, > and & as \u003c,
// \u003e and \u0026, as Go's encoder writes them (age-inspect --json).
// Printable ASCII comes out as Go's %q spells it, too.
std::string json_quoted(const std::string &text, bool html = false);

// {"command":"enc","ok":true,"bytes_in":N,"bytes_out":N,"seconds":S,
//  "gbps":R,"cpu_bytes":N,"gpu_bytes":N}; bytes_in and bytes_out count what
// was read and written, headers and base64 text included.
void print_json_result(const char *command, uint64_t bytes_in, uint64_t bytes_out, const wc_job &job);

// Runs `body` and returns its exit status. With `json`, a CliError it throws
// becomes {"command":...,"ok":false,"kind":"auth","exit":4,"message":"..."}
// and its kind's exit status; without, it propagates to main().
int run_reporting(const char *command, bool json, const std::function<int()> &body);

// --json shares standard output with nothing: it needs the data elsewhere,
// in the file the command's `output_option` names (-out, or age's -o).
void check_json_output(bool json, bool data_to_stdout, const char *output_option);

}  // namespace warpcrypt::cli
