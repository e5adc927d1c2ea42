#include "vector_file.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace wctest {
namespace {

std::string_view trim(std::string_view text) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

// A bare upper-case word such as the FAIL that marks the CAVP GCM decrypt
// records whose tag must be rejected.
bool is_flag(std::string_view line) {
  for (char c : line) {
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

}  // namespace

const std::string &VectorRecord::text(const std::string &name) const {
  const auto found = fields.find(name);
  if (found == fields.end()) {
    throw std::out_of_range("record at line " + std::to_string(line) + " has no " + name);
  }
  return found->second;
}

std::vector<VectorRecord> parse_vector_text(std::string_view text) {
  std::vector<VectorRecord> records;
  VectorSection section = VectorSection::kNone;
  VectorRecord current;
  const auto finish_record = [&] {
    if (!current.fields.empty()) records.push_back(std::move(current));
    current = VectorRecord{};
  };

  int line_number = 0;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    // trim() also drops the '\r' of CRLF files.
    const std::string_view line = trim(text.substr(0, newline));
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    ++line_number;

    if (line.empty()) {
      finish_record();
    } else if (line.front() == '#') {
      continue;
    } else if (line.front() == '[') {
      finish_record();
      if (line == "[ENCRYPT]") section = VectorSection::kEncrypt;
      if (line == "[DECRYPT]") section = VectorSection::kDecrypt;
    } else {
      const size_t equals = line.find('=');
      if (equals == std::string_view::npos && !is_flag(line)) {
        throw std::runtime_error("line " + std::to_string(line_number) +
                                 " is not NAME = VALUE: " + std::string(line));
      }
      const std::string name(trim(line.substr(0, equals)));
      const std::string value(equals == std::string_view::npos ? "" : trim(line.substr(equals + 1)));
      // The ML-KEM KAT files write it "count", with no blank lines between.
      if (name == "COUNT" || name == "count") finish_record();
      if (current.fields.empty()) {
        current.section = section;
        current.line = line_number;
      }
      current.fields[name] = value;
    }
  }
  finish_record();
  return records;
}

std::vector<VectorRecord> read_vector_file(const std::filesystem::path &path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream contents;
  contents << file.rdbuf();
  return parse_vector_text(contents.str());
}

}  // namespace wctest
