// Files for the job tests: a scratch directory removed afterwards, whole-file
// reads and writes, and draining a descriptor.
#ifndef WARPCRYPT_TESTS_UNIT_SUPPORT_SCRATCH_FILES_H
#define WARPCRYPT_TESTS_UNIT_SUPPORT_SCRATCH_FILES_H

#include <filesystem>
#include <string>
#include <vector>

#include "support/bytes.h"

namespace wctest {

// A fresh directory per test, removed afterwards.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;
  std::filesystem::path operator/(const std::string &name) const { return path_ / name; }
  // Every entry, temporary files included.
  std::vector<std::string> entries() const;

 private:
  std::filesystem::path path_;
};

void write_file(const std::filesystem::path &path, const Bytes &data);
Bytes read_file(const std::filesystem::path &path);
// Everything readable from `fd` until end of file.
Bytes drain(int fd);

}  // namespace wctest

#endif
