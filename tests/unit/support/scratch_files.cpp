#include "support/scratch_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

namespace wctest {

namespace fs = std::filesystem;

ScratchDir::ScratchDir() {
  std::string pattern = (fs::temp_directory_path() / "wc-test-XXXXXX").string();
  path_ = mkdtemp(pattern.data());
}

ScratchDir::~ScratchDir() { fs::remove_all(path_); }

std::vector<std::string> ScratchDir::entries() const {
  std::vector<std::string> names;
  for (const auto &entry : fs::directory_iterator(path_)) names.push_back(entry.path().filename().string());
  return names;
}

void write_file(const fs::path &path, const Bytes &data) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size()));
  close(fd);
}

Bytes read_file(const fs::path &path) {
  Bytes data(fs::file_size(path));
  const int fd = open(path.c_str(), O_RDONLY);
  EXPECT_EQ(read(fd, data.data(), data.size()), static_cast<ssize_t>(data.size()));
  close(fd);
  return data;
}

Bytes drain(int fd) {
  Bytes data;
  uint8_t buffer[65536];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) data.insert(data.end(), buffer, buffer + n);
  return data;
}

}  // namespace wctest
