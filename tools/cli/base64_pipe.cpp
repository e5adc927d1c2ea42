#include "base64_pipe.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "cli_error.h"
#include "file_io.h"

namespace warpcrypt::cli {
namespace {

// Bytes taken from the pipe or the file at a time: a multiple of 48 (one
// line of base64) and of 3 (one group), so -A codes whole groups.
constexpr size_t kPiece = 48 * 1024;

using EncodeContext = std::unique_ptr<EVP_ENCODE_CTX, decltype(&EVP_ENCODE_CTX_free)>;

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
  EncodeContext context(EVP_ENCODE_CTX_new(), EVP_ENCODE_CTX_free);
  if (context) EVP_EncodeInit(context.get());
  std::vector<unsigned char> in(kPiece);
  // 4 characters per 3 bytes, a LF per 64 characters, and a NUL.
  std::vector<unsigned char> text(kPiece / 3 * 4 + kPiece / 48 + 80);
  size_t held = 0;  // -A: bytes short of a whole group, carried over
  bool ok = context != nullptr;
  for (;;) {
    const ssize_t n = read(thread_end_, in.data() + held, in.size() - held);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the job closed its end
    if (!ok) continue;  // after a failed write, drain the pipe so the job ends
    const size_t have = held + static_cast<size_t>(n);
    int text_len = 0;
    if (one_line_) {
      const size_t whole = have / 3 * 3;
      text_len = EVP_EncodeBlock(text.data(), in.data(), static_cast<int>(whole));
      held = have - whole;
      std::memmove(in.data(), in.data() + whole, held);
    } else {
      ok = EVP_EncodeUpdate(context.get(), text.data(), &text_len, in.data(), static_cast<int>(have)) == 1;
    }
    ok = ok && write_all(file_fd_, text.data(), static_cast<size_t>(text_len));
    if (!ok && error_.empty()) error_ = "cannot write output '" + file_name_ + "': " + std::strerror(errno);
    text_bytes_ += static_cast<size_t>(text_len);
  }
  close(thread_end_);
  if (!ok) {
    if (error_.empty()) error_ = "OpenSSL could not encode base64";
    error_kind_ = WC_KIND_IO;
    return;
  }
  int text_len = 0;
  if (one_line_) {
    text_len = held != 0 ? EVP_EncodeBlock(text.data(), in.data(), static_cast<int>(held)) : 0;
  } else {
    EVP_EncodeFinal(context.get(), text.data(), &text_len);
  }
  if (!write_all(file_fd_, text.data(), static_cast<size_t>(text_len))) {
    error_ = "cannot write output '" + file_name_ + "': " + std::strerror(errno);
    error_kind_ = WC_KIND_IO;
  }
  text_bytes_ += static_cast<size_t>(text_len);
}

void Base64Pipe::decode() {
  block_sigpipe_in_this_thread();
  EncodeContext context(EVP_ENCODE_CTX_new(), EVP_ENCODE_CTX_free);
  std::vector<unsigned char> text(kPiece);
  std::vector<unsigned char> out(kPiece / 4 * 3 + 80);
  try {
    if (!context) throw CliError("out of memory", WC_KIND_FAILURE);
    EVP_DecodeInit(context.get());
    for (bool more = true; more;) {
      const size_t n = read_up_to(file_fd_, text.data(), text.size(), file_name_);
      text_bytes_ += n;
      more = n == text.size();
      int out_len = 0;
      if (EVP_DecodeUpdate(context.get(), out.data(), &out_len, text.data(), static_cast<int>(n)) < 0) {
        throw CliError("the input is not base64 (-a): '" + file_name_ + "'", WC_KIND_AUTH);
      }
      int final_len = 0;
      if (!more && EVP_DecodeFinal(context.get(), out.data() + out_len, &final_len) != 1) {
        throw CliError("the input's base64 (-a) ends inside a group of four characters", WC_KIND_AUTH);
      }
      // EPIPE: the job stopped reading, and reports why itself.
      if (!write_all(thread_end_, out.data(), static_cast<size_t>(out_len + final_len))) break;
    }
  } catch (const CliError &error) {
    error_ = error.what();
    error_kind_ = error.kind();
  }
  close(thread_end_);
}

}  // namespace warpcrypt::cli
