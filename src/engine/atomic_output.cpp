#include "engine/atomic_output.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <deque>
#include <fstream>

namespace warpcrypt::engine {
namespace {

// Linux's limit on links followed in one lookup.
constexpr int kMaxLinks = 40;

constexpr char kRefusedLink[] =
    "refusing to follow a symlink in a sticky world-writable directory that belongs to neither you nor the "
    "directory's owner (the kernel's protected_symlinks rule)";
constexpr char kDanglingLink[] = "the output is a symlink to a file that does not exist: name the target itself";
constexpr char kNotBeneath[] =
    "the output's path must be relative to its folder, with no empty, '.' or '..' step";
constexpr char kLinkBeneath[] =
    "a folder on the output's path is a link or not a folder: outputs are written only into folders of the "
    "output tree, never through links";

struct Failure {
  int os_error;
  const char *detail;
};

std::deque<std::string> components_of(const std::string &path) {
  std::deque<std::string> parts;
  size_t begin = 0;
  while (begin <= path.size()) {
    const size_t slash = path.find('/', begin);
    const size_t end = slash == std::string::npos ? path.size() : slash;
    if (end > begin) parts.push_back(path.substr(begin, end - begin));
    begin = end + 1;
  }
  return parts;
}

// The kernel's protected_symlinks rule (fs/namei.c, may_follow_link): a link
// in a sticky, world-writable directory is followed only by its owner or
// when the directory's owner owns it too.
bool may_follow(const struct stat &directory, const struct stat &link) {
  const bool shared_sticky = (directory.st_mode & S_ISVTX) != 0 && (directory.st_mode & S_IWOTH) != 0;
  return !shared_sticky || link.st_uid == geteuid() || link.st_uid == directory.st_uid;
}

bool on_procfs(const std::string &directory) {
  struct statfs fs{};
  return statfs(directory.c_str(), &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC;
}

// `path` with every symlink replaced by what it names, checking each link
// against may_follow. The result has no links (as of the walk); components
// after a missing one are kept as given, for the open that follows to fail
// on. "x/.." after a real directory x is x's parent, so ".." needs no
// lexical care. One exception: /proc's descriptor links (/dev/stdout is
// /proc/self/fd/1) name pipes and sockets by no path ("pipe:[1234]"); the
// walk stops at such a link, which only the kernel can follow, and says so
// in *kernel_link.
bool resolve_links(const std::string &path, std::string *resolved, bool *kernel_link, Failure *failure) {
  *kernel_link = false;
  std::deque<std::string> pending = components_of(path);
  std::string done = path.starts_with('/') ? "" : ".";
  int links = 0;
  while (!pending.empty()) {
    const std::string part = std::move(pending.front());
    pending.pop_front();
    if (part == ".") continue;
    const std::string candidate = done + "/" + part;
    struct stat node{};
    if (lstat(candidate.c_str(), &node) != 0) {
      if (errno != ENOENT) return *failure = {errno, nullptr}, false;
      done = candidate;  // missing: it and the rest stay as given
      break;
    }
    if (!S_ISLNK(node.st_mode)) {
      done = candidate;
      continue;
    }
    struct stat directory{};
    if (stat(done.empty() ? "/" : done.c_str(), &directory) != 0) return *failure = {errno, nullptr}, false;
    if (!may_follow(directory, node)) return *failure = {EACCES, kRefusedLink}, false;
    if (++links > kMaxLinks) return *failure = {ELOOP, nullptr}, false;
    std::string target(static_cast<size_t>(node.st_size) + 1, '\0');
    const ssize_t len = readlink(candidate.c_str(), target.data(), target.size());
    if (len < 0) return *failure = {errno, nullptr}, false;
    target.resize(static_cast<size_t>(len));
    if (!target.starts_with('/') && on_procfs(done)) {
      *kernel_link = true;
      done = candidate;  // the link and the rest are the kernel's
      break;
    }
    std::deque<std::string> inner = components_of(target);
    pending.insert(pending.begin(), inner.begin(), inner.end());
    if (target.starts_with('/')) done.clear();
  }
  for (const std::string &rest : pending) done += "/" + rest;  // after an early stop
  *resolved = done.empty() ? "/" : done;
  return true;
}

// The mode open(path, O_CREAT, 0666) would give a new file. The umask is
// read from /proc: umask(2) can only read it by changing it, which races
// with every other thread creating files.
mode_t new_file_mode() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    unsigned mask = 0;
    if (std::sscanf(line.c_str(), "Umask: %o", &mask) == 1) return 0666 & ~static_cast<mode_t>(mask);
  }
  const mode_t mask = umask(0);
  umask(mask);
  return 0666 & ~mask;
}

// Gives the new file on `fd` its final mode and, where it replaces a file,
// that file's owner where the caller may give it (only root may; anyone
// else's replacement is theirs); the mode last, since chown clears set-id
// bits. 0 or the errno.
int give_owner_and_mode(int fd, bool replacing, uid_t owner, gid_t group, mode_t mode) {
  if (replacing && fchown(fd, owner, group) != 0 && errno != EPERM) return errno;
  return fchmod(fd, mode) != 0 ? errno : 0;
}

// Closes `fd` on leaving scope.
class HeldFd {
 public:
  explicit HeldFd(int fd) : fd_(fd) {}
  HeldFd(const HeldFd &) = delete;
  HeldFd &operator=(const HeldFd &) = delete;
  ~HeldFd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }
  void reset(int fd) {
    if (fd_ >= 0) close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

std::string directory_of(const std::string &path) {
  const size_t slash = path.rfind('/');
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

wc_status AtomicOutput::open(const char *path, std::span<const wc_file_id> inputs, bool secret, int *os_error,
                             const char **detail) {
  auto fail = [&](Failure failure) {
    *os_error = failure.os_error;
    *detail = failure.detail;
    return WC_ERR_IO;
  };
  *os_error = 0;
  *detail = nullptr;
  if (path[0] == '\0') return fail({ENOENT, nullptr});
  struct stat named{};
  if (lstat(path, &named) == 0 && S_ISLNK(named.st_mode) && stat(path, &named) != 0 && errno == ENOENT) {
    return fail({ENOENT, kDanglingLink});
  }
  Failure failure{};
  bool kernel_link = false;
  if (!resolve_links(path, &target_, &kernel_link, &failure)) return fail(failure);
  // The last step is the kernel's only for a /proc descriptor link.
  const int no_follow = kernel_link ? 0 : O_NOFOLLOW;

  struct stat existing{};
  if ((kernel_link ? stat(target_.c_str(), &existing) : lstat(target_.c_str(), &existing)) == 0) {
    if (S_ISDIR(existing.st_mode)) return fail({EISDIR, nullptr});
    // What holds data, a file or a disk, is never replaced or overwritten by
    // a job that reads it; a terminal, pipe or /dev/null only passes bytes.
    const wc_file_id target = file_id_of(existing);
    if ((S_ISREG(existing.st_mode) || S_ISBLK(existing.st_mode)) &&
        std::ranges::any_of(inputs, [&](const wc_file_id &input) {
          return input.device == target.device && input.inode == target.inode;
        })) {
      *detail = kOutputIsAnInput;
      return WC_ERR_INVALID_ARGUMENT;
    }
    // The kernel decides whether the caller may write the file; nothing is
    // truncated. O_NONBLOCK keeps a FIFO without a reader from hanging the
    // check (ENXIO); a FIFO without one is then opened to wait for it.
    const int probe = ::open(target_.c_str(), O_WRONLY | no_follow | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
    if (probe < 0 && !(errno == ENXIO && S_ISFIFO(existing.st_mode))) return fail({errno, nullptr});
    if (!S_ISREG(existing.st_mode)) {
      // Written in place. An open probe is kept, made blocking: closing it
      // would show a FIFO's waiting reader an end of file before the data.
      if (probe >= 0) {
        const int flags = fcntl(probe, F_GETFL);
        if (flags < 0 || fcntl(probe, F_SETFL, flags & ~O_NONBLOCK) != 0) {
          const int error = errno;
          close(probe);
          return fail({error, nullptr});
        }
        fd_ = probe;
        return WC_OK;
      }
      fd_ = ::open(target_.c_str(), O_WRONLY | no_follow | O_NOCTTY | O_CLOEXEC);
      return fd_ >= 0 ? WC_OK : fail({errno, nullptr});
    }
    if (probe >= 0) close(probe);
    if (kernel_link) return fail({EINVAL, nullptr});  // a path-less regular file cannot be replaced
    replacing_ = true;
    final_mode_ = existing.st_mode & 07777;
    owner_ = existing.st_uid;
    group_ = existing.st_gid;
  } else if (errno == ENOENT) {
    final_mode_ = new_file_mode();
  } else {
    return fail({errno, nullptr});
  }

  if (secret) final_mode_ = S_IRUSR | S_IWUSR;
  const size_t slash = target_.rfind('/');
  std::string temp = directory_of(target_) + "/." + target_.substr(slash + 1) + ".warpcrypt-XXXXXX";
  // 0600 until commit(): a reader who opened it earlier keeps that access.
  fd_ = mkostemp(temp.data(), O_CLOEXEC);
  if (fd_ < 0) return fail({errno, nullptr});
  temp_path_ = std::move(temp);
  return WC_OK;
}

wc_status AtomicOutput::commit(int *os_error) {
  *os_error = 0;
  if (temp_path_.empty()) {
    const int fd = fd_;
    fd_ = -1;
    if (fd >= 0 && close(fd) != 0) *os_error = errno;
    return *os_error == 0 ? WC_OK : WC_ERR_IO;
  }
  *os_error = give_owner_and_mode(fd_, replacing_, owner_, group_, final_mode_);
  const int fd = fd_;
  fd_ = -1;
  // close() reports delayed write errors, such as a full disk on NFS.
  if (close(fd) != 0 && *os_error == 0) *os_error = errno;
  if (*os_error == 0 && rename(temp_path_.c_str(), target_.c_str()) != 0) *os_error = errno;
  if (*os_error != 0) {
    discard();
    return WC_ERR_IO;
  }
  temp_path_.clear();
  return WC_OK;
}

void AtomicOutput::discard() noexcept {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  if (!temp_path_.empty()) unlink(temp_path_.c_str());
  temp_path_.clear();
}

wc_status move_beneath(const char *root, const char *path, const char *file, int *os_error, const char **detail) {
  *os_error = 0;
  *detail = nullptr;
  auto fail = [&](int error, const char *why) {
    *os_error = error;
    *detail = why;
    return WC_ERR_IO;
  };
  const std::string relative(path);
  std::deque<std::string> steps = components_of(relative);
  const bool well_formed = !relative.empty() && !relative.starts_with('/') && !relative.ends_with('/') &&
                           relative.find("//") == std::string::npos &&
                           std::ranges::none_of(steps, [](const std::string &step) { return step == "." || step == ".."; });
  if (!well_formed) {
    *detail = kNotBeneath;
    return WC_ERR_INVALID_ARGUMENT;
  }
  const std::string name = std::move(steps.back());
  steps.pop_back();
  HeldFd folder(::open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (folder.get() < 0) return fail(errno, nullptr);
  for (const std::string &step : steps) {
    if (mkdirat(folder.get(), step.c_str(), 0777) != 0 && errno != EEXIST) return fail(errno, nullptr);
    const int inner = openat(folder.get(), step.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (inner < 0) return errno == ELOOP || errno == ENOTDIR ? fail(ENOTDIR, kLinkBeneath) : fail(errno, nullptr);
    folder.reset(inner);
  }
  HeldFd moved(::open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (moved.get() < 0) return fail(errno, nullptr);
  struct stat replaced{};
  if (fstatat(folder.get(), name.c_str(), &replaced, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISDIR(replaced.st_mode)) return fail(EISDIR, nullptr);
    if (S_ISREG(replaced.st_mode)) {
      // The kernel decides whether the caller may write the file it replaces.
      const int probe = openat(folder.get(), name.c_str(), O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      if (probe < 0) return fail(errno, nullptr);
      close(probe);
      const int error =
          give_owner_and_mode(moved.get(), true, replaced.st_uid, replaced.st_gid, replaced.st_mode & 07777);
      if (error != 0) return fail(error, nullptr);
    }
  } else if (errno != ENOENT) {
    return fail(errno, nullptr);
  }
  if (renameat(AT_FDCWD, file, folder.get(), name.c_str()) != 0) return fail(errno, nullptr);
  return WC_OK;
}

}  // namespace warpcrypt::engine
