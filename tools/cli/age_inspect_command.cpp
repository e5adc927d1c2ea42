// `warpcrypt age-inspect`: what an age file says of itself without being
// decrypted, in the words and JSON fields of age 1.3's age-inspect. The
// library reads the file (wc_age_inspect_fd); this file only prints.
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "cli_error.h"
#include "command_line.h"
#include "commands.h"
#include "file_io.h"
#include "json_report.h"

namespace warpcrypt::cli {
namespace {

// The format version every file this library reads has: the header's first
// line, which wc_age_inspect_fd accepts only as this.
constexpr const char *kAgeVersion = "age-encryption.org/v1";

struct InspectOptions {
  std::optional<std::string> in_path;
  bool json = false;
};

// Frees the inspection's stanza types on every way out.
struct InfoHolder {
  wc_age_info info{};
  ~InfoHolder() { wc_age_info_release(&info); }
};

const char *postquantum_word(wc_age_postquantum verdict) {
  switch (verdict) {
    case WC_AGE_PQ_YES: return "yes";
    case WC_AGE_PQ_NO: return "no";
    case WC_AGE_PQ_UNKNOWN: break;
  }
  return "unknown";
}

unsigned long long ull(uint64_t value) { return static_cast<unsigned long long>(value); }

// age-inspect's JSON: one object, indented by four spaces, with its field
// names and order. The padding fields stay 0: age writes no padding. A
// header without stanzas has null types, as Go encodes an empty slice.
void print_json(const wc_age_info &info) {
  std::string types;
  for (size_t i = 0; i < info.stanza_count; ++i) {
    types += (i == 0 ? "\n        " : ",\n        ") + json_quoted(info.stanza_types[i], true);
  }
  types = info.stanza_count == 0 ? "null" : "[" + types + "\n    ]";
  std::printf("{\n"
              "    \"version\": %s,\n"
              "    \"postquantum\": \"%s\",\n"
              "    \"armor\": %s,\n"
              "    \"stanza_types\": %s,\n"
              "    \"sizes\": {\n"
              "        \"header\": %llu,\n"
              "        \"armor\": %llu,\n"
              "        \"overhead\": %llu,\n"
              "        \"min_payload\": %llu,\n"
              "        \"max_payload\": %llu,\n"
              "        \"min_padding\": 0,\n"
              "        \"max_padding\": 0\n"
              "    }\n"
              "}\n",
              json_quoted(kAgeVersion).c_str(), postquantum_word(info.postquantum), info.armored ? "true" : "false",
              types.c_str(), ull(info.header_bytes), ull(info.armor_bytes), ull(info.overhead_bytes),
              ull(info.payload_bytes), ull(info.payload_bytes));
}

// age-inspect's summary, line for line.
void print_text(const std::string &name, const wc_age_info &info) {
  std::printf("%s is an age file, version %s.\n\n", name.c_str(), json_quoted(kAgeVersion).c_str());
  if (info.armored) std::printf("This file is ASCII-armored.\n\n");
  std::printf("This file is encrypted to the following recipient types:\n");
  for (size_t i = 0; i < info.stanza_count; ++i) std::printf("  - %s\n", json_quoted(info.stanza_types[i]).c_str());
  std::printf("\n");
  if (info.postquantum == WC_AGE_PQ_YES) std::printf("This file uses post-quantum encryption.\n\n");
  if (info.postquantum == WC_AGE_PQ_NO) std::printf("This file does NOT use post-quantum encryption.\n\n");
  std::printf("Size breakdown (assuming it decrypts successfully):\n\n");
  std::printf("    Header              %12llu bytes\n", ull(info.header_bytes));
  if (info.armored) std::printf("    Armor overhead      %12llu bytes\n", ull(info.armor_bytes));
  std::printf("    Encryption overhead %12llu bytes\n", ull(info.overhead_bytes));
  std::printf("    Payload             %12llu bytes\n", ull(info.payload_bytes));
  std::printf("                        -------------------\n");
  std::printf("    Total               %12llu bytes\n\n", ull(info.file_bytes));
  std::printf("Tip: for machine-readable output, use --json.\n");
}

int inspect(const InspectOptions &o) {
  InputFile input(o.in_path);
  InfoHolder holder;
  wc_job job;
  wc_job_init(&job);
  const wc_status status = wc_age_inspect_fd(input.fd(), &holder.info, &job);
  if (status != WC_OK) {
    throw CliError(input.display_name() + ": inspection failed: " + job.message, wc_status_kind_of(status));
  }
  if (o.json) {
    print_json(holder.info);
  } else {
    // As age-inspect names it: the argument as given, "<stdin>" without one.
    print_text(o.in_path.value_or("<stdin>"), holder.info);
  }
  // A summary that did not reach its reader (a full disk, a closed pipe)
  // is a failed run, not a silent one.
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) throw_system_error("cannot write", "standard output");
  return 0;
}

}  // namespace

void add_age_inspect_command(CommandLine &command_line) {
  auto o = std::make_shared<InspectOptions>();
  Command &command = command_line.add_command(
      "age-inspect", "show an age file's recipient types, armor and sizes without decrypting it, as age-inspect does");
  command.add_flag("--json", "age-inspect's JSON object on stdout: version, postquantum, armor, stanza_types, sizes",
                   [o] { o->json = true; });
  command.add_positional("INPUT", "the age file to read (default stdin; - is stdin)",
                         [o](const std::string &path) { o->in_path = path; });
  command.set_footer("Needs no identity: only the header is parsed and the payload counted, so the MAC is not "
                     "checked and the sizes assume the file decrypts. A file that breaks the format exits 4.");
  command.set_run([o] { return run_reporting("age-inspect", o->json, [&] { return inspect(*o); }); });
}

}  // namespace warpcrypt::cli
