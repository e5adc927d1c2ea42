// Input and output files for the CLI. Output to a path goes to a temporary
// file beside it that is renamed over the target only on success, so a failed
// or interrupted run never leaves a half-written file.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::cli {

// Fills `buf` from `fd` as far as it allows; returns fewer than `len` bytes
// only at end of input. `name` is for the message of a failed read.
size_t read_up_to(int fd, uint8_t *buf, size_t len, const std::string &name);
// Writes all of `data` to `fd`; `name` is for the message of a failed write.
void write_all(int fd, const uint8_t *data, size_t len, const std::string &name);

// Every file this run reads, its input and its identity, recipients, key
// and passphrase files alike, is noted here as it is opened; an output may
// be none of them (OutputFile). Standard input counts: it may be a file.
void note_file_read(int fd);

// "-" for an input or output path means standard input or output, as in
// openssl; a file of that name is ./-.
class InputFile {
 public:
  // nullopt, or "-", reads standard input.
  explicit InputFile(const std::optional<std::string> &path);
  ~InputFile();
  InputFile(const InputFile &) = delete;
  InputFile &operator=(const InputFile &) = delete;

  // Fills `buf` as far as the input allows; returns fewer than `len` bytes
  // only at end of input.
  size_t read_up_to(uint8_t *buf, size_t len);
  const std::string &display_name() const { return name_; }
  const struct stat &status() const { return stat_; }
  int fd() const { return fd_; }

 private:
  int fd_;
  bool owned_;
  std::string name_;
  struct stat stat_{};
};

// An output path, written by the library's rules (wc_output_open: a 0600
// temporary file renamed over the target on commit, protected_symlinks
// honoured, an unwritable target refused), or standard output.
class OutputFile {
 public:
  // nullopt, or "-", writes standard output. Refuses a path that names any
  // file read so far (note_file_read), through whatever path or link: open
  // the output after every file the command reads.
  explicit OutputFile(const std::optional<std::string> &path);
  // Removes the temporary file unless commit() ran.
  ~OutputFile();
  OutputFile(const OutputFile &) = delete;
  OutputFile &operator=(const OutputFile &) = delete;

  void write(const uint8_t *data, size_t len);
  // For the library's descriptor jobs, which write at the current offset.
  int fd() const { return fd_; }
  const std::string &display_name() const { return target_; }
  bool is_stdout() const { return output_ == nullptr; }
  // Completes the file and moves it into place.
  void commit();

 private:
  int fd_ = -1;
  wc_output *output_ = nullptr;  // null for standard output
  std::string target_;           // the path the user named
};

// Makes SIGINT, SIGTERM and SIGHUP remove the temporary output before the
// process dies, and a file-size limit (SIGXFSZ) an ordinary write error.
void install_cleanup_signal_handlers();

}  // namespace warpcrypt::cli
