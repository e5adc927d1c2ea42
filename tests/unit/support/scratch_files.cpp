#include "support/scratch_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <thread>

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

Bytes through_pipes(const Bytes &in, const std::function<wc_status(int out_fd, int in_fd)> &job, wc_status *status) {
  // SIGPIPE ignored while the pipes run, and put back as it was: the tests
  // after this one in the same process (age plugins) check its default.
  struct sigaction ignore {};
  struct sigaction before {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &before);
  int in_pipe[2];
  int out_pipe[2];
  EXPECT_EQ(pipe(in_pipe), 0);
  EXPECT_EQ(pipe(out_pipe), 0);
  std::thread feeder([&] {
    for (size_t at = 0; at < in.size();) {
      const ssize_t written = write(in_pipe[1], in.data() + at, std::min<size_t>(in.size() - at, 3001));
      if (written <= 0) break;
      at += static_cast<size_t>(written);
    }
    close(in_pipe[1]);
  });
  Bytes out;
  std::thread reader([&] { out = drain(out_pipe[0]); });
  *status = job(out_pipe[1], in_pipe[0]);
  close(out_pipe[1]);
  // A job that stopped early leaves the feeder blocked on a full pipe:
  // closing the read end fails its write (EPIPE; SIGPIPE is ignored).
  close(in_pipe[0]);
  feeder.join();
  reader.join();
  close(out_pipe[0]);
  sigaction(SIGPIPE, &before, nullptr);
  return out;
}

}  // namespace wctest
