// Files for the job tests: a scratch directory removed afterwards, whole-file
// reads and writes, and draining a descriptor.
#ifndef WARPCRYPT_TESTS_UNIT_SUPPORT_SCRATCH_FILES_H
#define WARPCRYPT_TESTS_UNIT_SUPPORT_SCRATCH_FILES_H

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <warpcrypt/warpcrypt.h>

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

// Runs `job(out_fd, in_fd)` between two pipes: a thread feeds `in` in
// odd-sized writes (so reads see short transfers), another drains the
// output, which is returned; *status gets the job's result.
Bytes through_pipes(const Bytes &in, const std::function<wc_status(int out_fd, int in_fd)> &job, wc_status *status);

}  // namespace wctest

#endif
