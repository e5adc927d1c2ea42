#include "file_io.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

#include "cli_error.h"

namespace warpcrypt::cli {
namespace {

// The temporary file a signal handler must remove; async-signal-safe to read.
char g_temp_path[4096];
volatile sig_atomic_t g_temp_path_set = 0;

void remove_temp_and_die(int signal_number) {
  if (g_temp_path_set) unlink(g_temp_path);
  std::signal(signal_number, SIG_DFL);
  raise(signal_number);
}

std::string directory_of(const std::string &path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_name_of(const std::string &path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Follows symlinks to the path they finally name, even where that file does
// not exist yet (a dangling link is written through, as open(2) would).
std::string resolve_symlinks(const std::string &path) {
  std::string current = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat link{};
    if (lstat(current.c_str(), &link) != 0 || !S_ISLNK(link.st_mode)) return current;
    std::string target(static_cast<size_t>(link.st_size) + 1, '\0');
    const ssize_t n = readlink(current.c_str(), target.data(), target.size());
    if (n < 0) return current;
    target.resize(static_cast<size_t>(n));
    current = target.starts_with('/') ? target : directory_of(current) + "/" + target;
  }
  errno = ELOOP;
  throw_system_error("cannot resolve output", path);
}

// The mode a newly created file would get, as open(..., 0666) gives it.
mode_t default_file_mode() {
  const mode_t mask = umask(0);
  umask(mask);
  return 0666 & ~mask;
}

}  // namespace

void install_cleanup_signal_handlers() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, remove_temp_and_die);
}

InputFile::InputFile(const std::optional<std::string> &path)
    : fd_(STDIN_FILENO), owned_(false), name_(path.value_or("(stdin)")) {
  if (path) {
    fd_ = open(path->c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw_system_error("cannot open input", *path);
    owned_ = true;
  }
  if (fstat(fd_, &stat_) != 0) throw_system_error("cannot stat input", name_);
  if (S_ISDIR(stat_.st_mode)) {
    errno = EISDIR;
    throw_system_error("cannot read input", name_);
  }
}

InputFile::~InputFile() {
  if (owned_) close(fd_);
}

size_t InputFile::read_up_to(uint8_t *buf, size_t len) {
  size_t done = 0;
  while (done < len) {
    const ssize_t n = read(fd_, buf + done, len - done);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_system_error("cannot read input", name_);
    }
    done += static_cast<size_t>(n);
  }
  return done;
}

OutputFile::OutputFile(const std::optional<std::string> &path, const InputFile &input)
    : target_(path.value_or("(stdout)")) {
  if (!path) {
    fd_ = STDOUT_FILENO;
    return;
  }
  struct stat existing{};
  const bool exists = stat(path->c_str(), &existing) == 0;
  if (exists && S_ISDIR(existing.st_mode)) {
    errno = EISDIR;
    throw_system_error("cannot write output", *path);
  }
  owned_ = true;
  if (exists && !S_ISREG(existing.st_mode)) {
    // A device or pipe (/dev/null, /dev/stdout) is written in place:
    // renaming over it would replace the device node with a file.
    fd_ = open(path->c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) throw_system_error("cannot open output", *path);
    return;
  }
  // Write through a symlink to the file it names, as openssl does: the
  // temporary file goes beside the real target, which the rename replaces.
  target_ = resolve_symlinks(*path);
  // Only a regular file can be the input itself and be destroyed by the
  // rename; /dev/null as both input and output is fine.
  if (exists && existing.st_dev == input.status().st_dev && existing.st_ino == input.status().st_ino) {
    throw CliError("input and output are the same file ('" + *path + "'): refusing to overwrite the input");
  }
  std::string temp = directory_of(target_) + "/." + base_name_of(target_) + ".warpcrypt-XXXXXX";
  if (temp.size() >= sizeof g_temp_path) throw CliError("output path too long: '" + *path + "'");
  fd_ = mkostemp(temp.data(), O_CLOEXEC);
  if (fd_ < 0) throw_system_error("cannot create output", *path);
  temp_path_ = temp;
  std::snprintf(g_temp_path, sizeof g_temp_path, "%s", temp_path_.c_str());
  g_temp_path_set = 1;
  // Keep an existing file's permissions; new files get the usual umask.
  const mode_t mode = exists ? (existing.st_mode & 07777) : default_file_mode();
  if (fchmod(fd_, mode) != 0) {
    discard();
    throw_system_error("cannot set permissions on output", *path);
  }
}

OutputFile::~OutputFile() {
  if (!committed_) discard();
}

void OutputFile::discard() noexcept {
  if (owned_ && fd_ >= 0) close(fd_);
  fd_ = -1;
  if (!temp_path_.empty()) {
    unlink(temp_path_.c_str());
    g_temp_path_set = 0;
    temp_path_.clear();
  }
}

void OutputFile::write(const uint8_t *data, size_t len) {
  while (len > 0) {
    const ssize_t n = ::write(fd_, data, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_system_error("cannot write output", target_);
    }
    data += n;
    len -= static_cast<size_t>(n);
  }
}

void OutputFile::commit() {
  if (!temp_path_.empty()) {
    // close() reports delayed write errors such as a full disk on NFS.
    const int fd = fd_;
    fd_ = -1;
    if (close(fd) != 0) throw_system_error("cannot write output", target_);
    if (rename(temp_path_.c_str(), target_.c_str()) != 0) {
      throw_system_error("cannot move output into place", target_);
    }
    g_temp_path_set = 0;
    temp_path_.clear();
  } else if (owned_) {
    if (close(fd_) != 0) throw_system_error("cannot write output", target_);
    fd_ = -1;
  }
  committed_ = true;
}

}  // namespace warpcrypt::cli
