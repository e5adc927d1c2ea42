#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "engine/atomic_output.h"
#include "engine/jobs.h"

namespace warpcrypt::engine {

wc_status run_file_job(const char *out_path, const char *in_path, JobMonitor &monitor, const DescriptorJob &job) {
  const int input = open(in_path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (input < 0) return monitor.fail_io(WC_IO_INPUT, errno);
  struct stat in_status{};
  wc_status status = fstat(input, &in_status) != 0 ? monitor.fail_io(WC_IO_INPUT, errno)
                     : S_ISDIR(in_status.st_mode)    ? monitor.fail_io(WC_IO_INPUT, EISDIR)
                                                     : WC_OK;
  AtomicOutput output;
  int os_error = 0;
  const char *detail = nullptr;
  if (status == WC_OK) {
    const wc_file_id read[] = {file_id_of(in_status)};
    status = output.open(out_path, read, false, &os_error, &detail);
    if (status == WC_ERR_IO) status = monitor.fail_io(WC_IO_OUTPUT, os_error, detail);
    if (status == WC_ERR_INVALID_ARGUMENT) monitor.fail_with_detail(status, detail);
  }
  if (status == WC_OK) status = job(output.fd(), input);
  if (status == WC_OK && output.commit(&os_error) != WC_OK) status = monitor.fail_io(WC_IO_OUTPUT, os_error);
  close(input);
  return status;
}

}  // namespace warpcrypt::engine
