#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <string>

#include "engine/jobs.h"

namespace warpcrypt::engine {
namespace {

class Descriptor {
 public:
  explicit Descriptor(int fd = -1) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) close(fd_);
  }
  Descriptor(const Descriptor &) = delete;
  Descriptor &operator=(const Descriptor &) = delete;
  int get() const { return fd_; }
  // Closes now, reporting delayed write errors (a full disk on NFS).
  bool close_checked() {
    const int fd = fd_;
    fd_ = -1;
    return close(fd) == 0;
  }

 private:
  int fd_;
};

// A new file beside `target`, named .<name>.warpcrypt-<random>, created
// with `mode` (the process umask applies, as for any new file).
int create_temporary(const std::string &target, mode_t mode, std::string *temp_path) {
  const size_t slash = target.rfind('/');
  const std::string directory = slash == std::string::npos ? "." : target.substr(0, slash == 0 ? 1 : slash);
  const std::string name = slash == std::string::npos ? target : target.substr(slash + 1);
  for (int attempt = 0; attempt < 16; ++attempt) {
    uint8_t random[6];
    if (wc_random_bytes(random, sizeof random) != WC_OK) return -1;
    std::string suffix;
    for (uint8_t byte : random) suffix += "0123456789abcdef"[byte >> 4], suffix += "0123456789abcdef"[byte & 15];
    *temp_path = directory + "/." + name + ".warpcrypt-" + suffix;
    const int fd = open(temp_path->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

}  // namespace

wc_status run_file_job(const char *out_path, const char *in_path, JobMonitor &monitor, const DescriptorJob &job) {
  const Descriptor input(open(in_path, O_RDONLY | O_CLOEXEC));
  struct stat in_status{};
  if (input.get() < 0 || fstat(input.get(), &in_status) != 0) return monitor.fail_io(errno);
  if (S_ISDIR(in_status.st_mode)) return monitor.fail_io(EISDIR);

  struct stat out_status{};
  const bool exists = stat(out_path, &out_status) == 0;
  if (exists && S_ISDIR(out_status.st_mode)) return monitor.fail_io(EISDIR);
  if (exists && S_ISREG(out_status.st_mode) && out_status.st_dev == in_status.st_dev &&
      out_status.st_ino == in_status.st_ino) {
    return WC_ERR_INVALID_ARGUMENT;  // the rename would destroy the input
  }
  if (exists && !S_ISREG(out_status.st_mode)) {
    // A device or pipe is written in place: a rename would replace the node.
    const Descriptor output(open(out_path, O_WRONLY | O_CLOEXEC));
    if (output.get() < 0) return monitor.fail_io(errno);
    return job(output.get(), input.get());
  }

  // Through a symlink to the file it names, which the rename then replaces.
  std::string target = out_path;
  if (exists) {
    char resolved[PATH_MAX];
    if (realpath(out_path, resolved) == nullptr) return monitor.fail_io(errno);
    target = resolved;
  }
  std::string temp_path;
  Descriptor output(create_temporary(target, exists ? out_status.st_mode & 07777 : 0666, &temp_path));
  if (output.get() < 0) return monitor.fail_io(errno);
  // An existing file keeps its permissions exactly, umask or not.
  if (exists && fchmod(output.get(), out_status.st_mode & 07777) != 0) {
    const int error = errno;
    unlink(temp_path.c_str());
    return monitor.fail_io(error);
  }
  wc_status status = job(output.get(), input.get());
  if (status == WC_OK && !output.close_checked()) status = monitor.fail_io(errno);
  if (status == WC_OK && rename(temp_path.c_str(), target.c_str()) != 0) status = monitor.fail_io(errno);
  if (status != WC_OK) unlink(temp_path.c_str());
  return status;
}

}  // namespace warpcrypt::engine
