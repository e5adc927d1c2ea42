// The C API's atomic output files: the engine's AtomicOutput, for programs
// that stream into a named file themselves (the CLI, the bindings).
#include <sys/stat.h>

#include <cerrno>
#include <new>

#include "engine/atomic_output.h"

struct wc_output {
  warpcrypt::engine::AtomicOutput file;
};

extern "C" {

wc_status wc_file_id_of_fd(int fd, wc_file_id *id, int *os_error) {
  int ignored_error = 0;
  int *error = os_error != nullptr ? os_error : &ignored_error;
  *error = 0;
  if (id == nullptr) return WC_ERR_INVALID_ARGUMENT;
  *id = {};
  struct stat status{};
  if (fstat(fd, &status) != 0) {
    *error = errno;
    return WC_ERR_IO;
  }
  *id = warpcrypt::engine::file_id_of(status);
  return WC_OK;
}

wc_status wc_output_open(wc_output **output, const char *path, const wc_file_id *inputs, size_t input_count,
                         unsigned flags, int *os_error, const char **detail) {
  int ignored_error = 0;
  const char *ignored_detail = nullptr;
  int *error = os_error != nullptr ? os_error : &ignored_error;
  const char **why = detail != nullptr ? detail : &ignored_detail;
  *error = 0;
  *why = nullptr;
  if (output == nullptr) return WC_ERR_INVALID_ARGUMENT;
  *output = nullptr;
  if (path == nullptr || (inputs == nullptr && input_count != 0) || (flags & ~unsigned{WC_OUTPUT_SECRET}) != 0) {
    return WC_ERR_INVALID_ARGUMENT;
  }
  auto *opened = new (std::nothrow) wc_output;
  if (opened == nullptr) return WC_ERR_OUT_OF_MEMORY;
  const wc_status status = opened->file.open(path, {inputs, input_count}, (flags & WC_OUTPUT_SECRET) != 0, error, why);
  if (status != WC_OK) {
    delete opened;
    return status;
  }
  *output = opened;
  return WC_OK;
}

int wc_output_fd(const wc_output *output) { return output != nullptr ? output->file.fd() : -1; }

const char *wc_output_temp_path(const wc_output *output) {
  return output != nullptr && !output->file.temp_path().empty() ? output->file.temp_path().c_str() : nullptr;
}

wc_status wc_output_commit(wc_output *output, int *os_error) {
  int ignored_error = 0;
  int *error = os_error != nullptr ? os_error : &ignored_error;
  *error = 0;
  if (output == nullptr) return WC_ERR_INVALID_ARGUMENT;
  return output->file.commit(error);
}

void wc_output_free(wc_output *output) { delete output; }

wc_status wc_output_move_beneath(const char *root, const char *path, const char *file, int *os_error,
                                 const char **detail) {
  int ignored_error = 0;
  const char *ignored_detail = nullptr;
  int *error = os_error != nullptr ? os_error : &ignored_error;
  const char **why = detail != nullptr ? detail : &ignored_detail;
  *error = 0;
  *why = nullptr;
  if (root == nullptr || path == nullptr || file == nullptr) return WC_ERR_INVALID_ARGUMENT;
  return warpcrypt::engine::move_beneath(root, path, file, error, why);
}

}  // extern "C"
