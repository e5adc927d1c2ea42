// Reader for the NIST CAVP .rsp and the NIST-style .txt files shipped in the
// `cryptography-vectors` package: '#' comments, [ENCRYPT]/[DECRYPT] section
// headers, blank-line separated records of `NAME = VALUE` lines, LF or CRLF.
#ifndef WARPCRYPT_TESTS_UNIT_VECTOR_FILE_H
#define WARPCRYPT_TESTS_UNIT_VECTOR_FILE_H

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "support/bytes.h"

namespace wctest {

enum class VectorSection { kNone, kEncrypt, kDecrypt };

struct VectorRecord {
  VectorSection section = VectorSection::kNone;  // the last [ENCRYPT]/[DECRYPT] seen
  int line = 0;                                  // where the record starts, for messages
  std::map<std::string, std::string> fields;     // NAME -> VALUE, names as written

  bool has(const std::string &name) const { return fields.count(name) != 0; }
  // Throws std::out_of_range naming the field and line when it is missing.
  const std::string &text(const std::string &name) const;
  Bytes hex(const std::string &name) const { return from_hex(text(name)); }
};

// Splits text into records. A record ends at a blank line, at a section
// header, or where a COUNT (or count) line starts the next one. Other bracketed headers
// (e.g. "[Keylen = 128]") are ignored. A bare upper-case word (the CAVP GCM
// files' FAIL) is a field with an empty value. Throws std::runtime_error on a
// line that is none of these.
std::vector<VectorRecord> parse_vector_text(std::string_view text);

// Reads and parses a file; throws std::runtime_error if it cannot be read.
std::vector<VectorRecord> read_vector_file(const std::filesystem::path &path);

}  // namespace wctest

#endif
