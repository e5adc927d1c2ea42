// How every job writes a named output file: one policy, used by the file
// jobs and, through wc_output_*, by the CLI and the bindings.
//
// - The result goes to a temporary file beside the target, created 0600 and
//   kept so until it is complete; commit() gives it the target's mode (an
//   existing file's, or 0666 less the umask) and renames it over the target.
//   Until then the target is untouched, and discard() (or the destructor)
//   removes the temporary file.
// - An existing target the caller may not write is refused: the kernel's own
//   open(O_WRONLY) decides, as it would for `openssl enc -out`.
// - Symbolic links are followed only where the kernel's protected_symlinks
//   rule would follow them, whatever that setting is here: never a link in a
//   sticky, world-writable directory (/tmp) owned by neither the caller nor
//   the directory's owner. The walk only checks; the file is then opened by
//   its link-free path, the last step with O_NOFOLLOW. A dangling link is
//   refused rather than followed into a directory the caller chose nothing
//   about.
// - A device, FIFO or socket is written in place: a rename would replace
//   the node.
//
// A job that writes a tree of outputs (warpcrypt.dask) finishes each file
// elsewhere and moves it into the tree with move_beneath(): a tree that
// others may write in must not send an output outside it through a link.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <span>
#include <string>

#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::engine {

// The one message for an output that would replace a file the job reads;
// it starts with age's words, which scripts written for age look for.
inline constexpr const char *kOutputIsAnInput =
    "input and output file are the same: the output is a file this command reads (its input, or an identity, key "
    "or passphrase file), refusing to overwrite it";

// The kernel's name for the file open on `fd`.
inline wc_file_id file_id_of(const struct stat &status) {
  return {static_cast<uint64_t>(status.st_dev), static_cast<uint64_t>(status.st_ino)};
}

// Moves the complete file `file` to `path` beneath the folder `root` with
// one rename: `path` is relative, without "." or ".." steps; its folders are
// created where missing and opened one by one, each refused (ENOTDIR, with
// *detail) where it is a link or not a folder, so nothing outside `root` is
// reached. A file it replaces keeps its mode and, where the caller may give
// it, its owner, as commit() keeps them; a link at `path` is replaced, not
// followed. `file` must lie on `root`'s file system (else EXDEV). Failures are
// WC_ERR_IO with *os_error and *detail as for AtomicOutput::open; a `path`
// that is not relative, or steps outside, is WC_ERR_INVALID_ARGUMENT.
wc_status move_beneath(const char *root, const char *path, const char *file, int *os_error, const char **detail);

class AtomicOutput {
 public:
  AtomicOutput() = default;
  AtomicOutput(const AtomicOutput &) = delete;
  AtomicOutput &operator=(const AtomicOutput &) = delete;
  ~AtomicOutput() { discard(); }

  // Prepares `path`. `inputs` are the files the job reads: an output that is
  // one of them, by any path or link, is WC_ERR_INVALID_ARGUMENT with
  // kOutputIsAnInput in *detail, since the rename would destroy it. A
  // `secret` output (a key) stays 0600 when complete. Otherwise WC_ERR_IO
  // with *os_error, and *detail where errno alone would mislead (a refused
  // link, a dangling link), else NULL.
  wc_status open(const char *path, std::span<const wc_file_id> inputs, bool secret, int *os_error,
                 const char **detail);

  int fd() const { return fd_; }
  // The temporary file, for a signal handler that must remove it; empty when
  // writing in place.
  const std::string &temp_path() const { return temp_path_; }

  // Completes the output: the final mode (and owner, where the caller may
  // give it), a checked close, which reports delayed write errors, and the
  // rename. WC_ERR_IO with *os_error on failure, the temporary file removed.
  wc_status commit(int *os_error);
  // Closes, and removes the temporary file; the target stays as it was.
  void discard() noexcept;

 private:
  int fd_ = -1;
  std::string target_;     // link-free path of the file the rename replaces
  std::string temp_path_;  // empty when writing in place
  mode_t final_mode_ = 0;
  bool replacing_ = false;  // an existing file: keep its owner where possible
  uid_t owner_ = 0;
  gid_t group_ = 0;
};

}  // namespace warpcrypt::engine
