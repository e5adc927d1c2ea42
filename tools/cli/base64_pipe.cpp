#include "base64_pipe.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "cli_error.h"
#include "file_io.h"

namespace warpcrypt::cli {
namespace {

// Bytes taken from the pipe or the file at a time.
constexpr size_t kPiece = 48 * 1024;

using Coder = std::unique_ptr<wc_base64, decltype(&wc_base64_free)>;

// The library's coder, or CliError.
Coder make_coder(wc_direction direction, bool one_line) {
  wc_base64 *made = nullptr;
  const wc_status status = wc_base64_new(&made, direction, one_line ? 1 : 0);
  if (status != WC_OK) throw CliError(wc_status_string(status), wc_status_kind_of(status));
  return Coder(made, wc_base64_free);
}

// Writes all of `data`; false with errno set on failure.
bool write_all(int fd, const unsigned char *data, size_t len) {
  while (len > 0) {
    const ssize_t n = write(fd, data, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    data += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

// A failed write to the pipe, once the job has stopped reading it, must be
// EPIPE in this thread, not the signal that ends the process.
void block_sigpipe_in_this_thread() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

}  // namespace

Base64Pipe::Base64Pipe(Direction direction, int file_fd, bool one_line, std::string file_name)
    : direction_(direction), file_fd_(file_fd), one_line_(one_line), file_name_(std::move(file_name)) {
  int ends[2];
  if (pipe2(ends, O_CLOEXEC) != 0) throw_system_error("cannot make a pipe for base64 of", file_name_);
  // ends[0] reads, ends[1] writes: the job writes when encoding, reads when
  // decoding.
  job_end_ = direction == Direction::encode ? ends[1] : ends[0];
  thread_end_ = direction == Direction::encode ? ends[0] : ends[1];
  thread_ = std::thread([this] { direction_ == Direction::encode ? encode() : decode(); });
}

Base64Pipe::~Base64Pipe() {
  close_job_end();
  if (thread_.joinable()) thread_.join();
}

void Base64Pipe::close_job_end() {
  if (job_end_ >= 0) close(job_end_);
  job_end_ = -1;
}

uint64_t Base64Pipe::finish() {
  close_job_end();
  thread_.join();
  if (!error_.empty()) throw CliError(error_, error_kind_);
  return text_bytes_;
}

void Base64Pipe::encode() {
  block_sigpipe_in_this_thread();
  std::vector<unsigned char> in(kPiece);
  std::vector<unsigned char> text;
  bool ok = true;
  try {
    Coder coder = make_coder(WC_ENCRYPT, one_line_);
    text.resize(std::max(wc_base64_update_bound(coder.get(), kPiece), wc_base64_final_bound()));
    for (;;) {
      const ssize_t n = read(thread_end_, in.data(), in.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // the job closed its end
      if (!ok) continue;  // after a failed write, drain the pipe so the job ends
      size_t text_len = 0;
      const wc_status coded =
          wc_base64_update(coder.get(), text.data(), text.size(), &text_len, in.data(), static_cast<size_t>(n));
      if (coded != WC_OK) throw CliError(wc_status_string(coded), wc_status_kind_of(coded));
      ok = write_all(file_fd_, text.data(), text_len);
      if (!ok) error_ = "cannot write output '" + file_name_ + "': " + std::strerror(errno);
      text_bytes_ += text_len;
    }
    if (ok) {
      size_t text_len = 0;
      const wc_status ended = wc_base64_final(coder.get(), text.data(), text.size(), &text_len);
      if (ended != WC_OK) throw CliError(wc_status_string(ended), wc_status_kind_of(ended));
      if (!write_all(file_fd_, text.data(), text_len)) {
        error_ = "cannot write output '" + file_name_ + "': " + std::strerror(errno);
      }
      text_bytes_ += text_len;
    }
    if (!error_.empty()) error_kind_ = WC_KIND_IO;
  } catch (const CliError &error) {
    error_ = error.what();
    error_kind_ = error.kind();
    for (;;) {  // drain the pipe so the job ends
      const ssize_t n = read(thread_end_, in.data(), in.size());
      if (n == 0 || (n < 0 && errno != EINTR)) break;
    }
  }
  close(thread_end_);
}

void Base64Pipe::decode() {
  block_sigpipe_in_this_thread();
  std::vector<unsigned char> text(kPiece);
  std::vector<unsigned char> out;
  try {
    Coder coder = make_coder(WC_DECRYPT, false);
    out.resize(std::max(wc_base64_update_bound(coder.get(), kPiece), wc_base64_final_bound()));
    for (bool more = true; more;) {
      const size_t n = read_up_to(file_fd_, text.data(), text.size(), file_name_);
      text_bytes_ += n;
      more = n == text.size();
      size_t out_len = 0;
      if (wc_base64_update(coder.get(), out.data(), out.size(), &out_len, text.data(), n) != WC_OK) {
        throw CliError("the input is not base64 (-a): '" + file_name_ + "'", WC_KIND_AUTH);
      }
      // EPIPE: the job stopped reading, and reports why itself.
      if (!write_all(thread_end_, out.data(), out_len)) break;
      if (more) continue;
      if (wc_base64_final(coder.get(), out.data(), out.size(), &out_len) != WC_OK) {
        throw CliError("the input's base64 (-a) ends inside a group of four characters", WC_KIND_AUTH);
      }
      if (!write_all(thread_end_, out.data(), out_len)) break;
    }
  } catch (const CliError &error) {
    error_ = error.what();
    error_kind_ = error.kind();
  }
  close(thread_end_);
}

}  // namespace warpcrypt::cli
