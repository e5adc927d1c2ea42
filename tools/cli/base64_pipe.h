// openssl enc's -a: base64 between the cipher and the file. A thread codes
// the bytes through a pipe, so that the library's descriptor jobs, their
// engine, progress and statistics run unchanged on the pipe's end. The
// coding itself is the library's (warpcrypt/text.h), the code `openssl enc
// -a` runs, so the text is byte for byte openssl's.
#pragma once

#include <cstdint>
#include <string>
#include <thread>

#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::cli {

class Base64Pipe {
 public:
  enum class Direction { encode, decode };
  // encode: what is written to fd() goes to `file_fd` as base64, in lines of
  // 64 characters each ending in LF, or with `one_line` (-A) one line with
  // no LF at all. decode: fd() reads the bytes the base64 text of `file_fd`
  // holds; line breaks and spaces anywhere are ignored.
  Base64Pipe(Direction direction, int file_fd, bool one_line, std::string file_name);
  ~Base64Pipe();
  Base64Pipe(const Base64Pipe &) = delete;
  Base64Pipe &operator=(const Base64Pipe &) = delete;

  // The job's end of the pipe: write to it to encode, read from it to decode.
  int fd() const { return job_end_; }
  // Ends the pipe and waits for the thread; throws CliError for text that is
  // not base64 or a failed read or write of the file. Returns the bytes of
  // text read or written (for -v).
  uint64_t finish();

 private:
  void encode();
  void decode();
  void close_job_end();

  Direction direction_;
  int file_fd_;
  bool one_line_;
  std::string file_name_;
  int job_end_ = -1;
  int thread_end_ = -1;
  uint64_t text_bytes_ = 0;
  std::string error_;  // set by the thread
  wc_status_kind error_kind_ = WC_KIND_OK;
  std::thread thread_;
};

}  // namespace warpcrypt::cli
