#include "file_io.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <vector>

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

}  // namespace

void install_cleanup_signal_handlers() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, remove_temp_and_die);
  // Past a file-size limit (ulimit -f) the kernel would kill the process and
  // leave the temporary file; ignored, the write fails with EFBIG instead,
  // and the ordinary error path reports it and removes the file.
  std::signal(SIGXFSZ, SIG_IGN);
}

namespace {

bool names_a_file(const std::optional<std::string> &path) { return path && *path != "-"; }

std::vector<wc_file_id> &files_read() {
  static std::vector<wc_file_id> files;
  return files;
}

}  // namespace

void note_file_read(int fd) {
  wc_file_id id{};
  if (wc_file_id_of_fd(fd, &id, nullptr) == WC_OK) files_read().push_back(id);
}

size_t read_up_to(int fd, uint8_t *buf, size_t len, const std::string &name) {
  size_t done = 0;
  while (done < len) {
    const ssize_t n = read(fd, buf + done, len - done);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_system_error("cannot read input", name);
    }
    done += static_cast<size_t>(n);
  }
  return done;
}

void write_all(int fd, const uint8_t *data, size_t len, const std::string &name) {
  while (len > 0) {
    const ssize_t n = ::write(fd, data, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_system_error("cannot write output", name);
    }
    data += n;
    len -= static_cast<size_t>(n);
  }
}

InputFile::InputFile(const std::optional<std::string> &path)
    : fd_(STDIN_FILENO), owned_(false), name_(names_a_file(path) ? *path : "(stdin)") {
  if (names_a_file(path)) {
    fd_ = open(path->c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd_ < 0) throw_system_error("cannot open input", *path);
    owned_ = true;
  }
  if (fstat(fd_, &stat_) != 0) throw_system_error("cannot stat input", name_);
  if (S_ISDIR(stat_.st_mode)) {
    errno = EISDIR;
    throw_system_error("cannot read input", name_);
  }
  note_file_read(fd_);
}

InputFile::~InputFile() {
  if (owned_) close(fd_);
}

size_t InputFile::read_up_to(uint8_t *buf, size_t len) { return cli::read_up_to(fd_, buf, len, name_); }

OutputFile::OutputFile(const std::optional<std::string> &path)
    : target_(names_a_file(path) ? *path : "(stdout)") {
  if (!names_a_file(path)) {
    fd_ = STDOUT_FILENO;
    return;
  }
  int os_error = 0;
  const char *detail = nullptr;
  const std::vector<wc_file_id> &read = files_read();
  const wc_status status = wc_output_open(&output_, path->c_str(), read.data(), read.size(), 0, &os_error, &detail);
  if (status == WC_ERR_INVALID_ARGUMENT) throw CliError("'" + *path + "': " + detail);
  if (status != WC_OK && detail != nullptr) {
    throw CliError("cannot write output '" + *path + "': " + detail, WC_KIND_IO);
  }
  if (status != WC_OK) {
    errno = os_error;
    throw_system_error("cannot write output", *path);
  }
  fd_ = wc_output_fd(output_);
  if (const char *temp = wc_output_temp_path(output_); temp != nullptr) {
    if (std::strlen(temp) >= sizeof g_temp_path) {
      wc_output_free(output_);
      throw CliError("output path too long: '" + *path + "'");
    }
    std::snprintf(g_temp_path, sizeof g_temp_path, "%s", temp);
    g_temp_path_set = 1;
  }
}

OutputFile::~OutputFile() {
  g_temp_path_set = 0;
  wc_output_free(output_);
}

void OutputFile::write(const uint8_t *data, size_t len) { write_all(fd_, data, len, target_); }

void OutputFile::commit() {
  if (output_ == nullptr) return;  // standard output stays open
  int os_error = 0;
  g_temp_path_set = 0;
  if (wc_output_commit(output_, &os_error) != WC_OK) {
    errno = os_error;
    throw_system_error("cannot write output", target_);
  }
}

}  // namespace warpcrypt::cli
