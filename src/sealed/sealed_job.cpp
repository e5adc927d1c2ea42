#include "sealed/sealed_job.h"

#include <cerrno>

namespace warpcrypt::sealed {

using engine::Endpoint;
using engine::JobMonitor;
using engine::JobTotals;

wc_status read_header(const Endpoint &in, Header *header, std::array<uint8_t, kHeaderLen> *bytes,
                      const char **detail) {
  size_t got = 0;
  if (!engine::read_at(in, bytes->data(), kHeaderLen, 0, &got)) return WC_ERR_IO;
  if (got != kHeaderLen) {
    *detail = "not a sealed file: shorter than the 48-byte header";
    return WC_ERR_FORMAT;
  }
  return decode(*bytes, header, detail);
}

wc_status run_seal_fd(const wc_options &options, const Header &header, std::span<const uint8_t> secret, int out_fd,
                      int in_fd, JobMonitor &monitor, JobTotals *totals) {
  Endpoint in;
  Endpoint out;
  if (engine::open_input_endpoint(&in, in_fd) != WC_OK || engine::open_endpoint(&out, out_fd) != WC_OK) {
    return monitor.fail_io(errno);
  }
  monitor.set_total(in.size);
  FileKey key;
  const wc_status status = derive_file_key(header, secret, &key);
  if (status != WC_OK) return status;
  const std::array<uint8_t, kHeaderLen> header_bytes = encode(header);
  if (!engine::write_at(out, header_bytes.data(), kHeaderLen, 0)) return monitor.fail_io(errno);
  totals->bytes_out = kHeaderLen;
  engine::seal_stream(options, stream_shape(header, header_bytes), {key.bytes.data(), key.len}, out, in, monitor,
                      totals);
  engine::settle_offsets(in, out, *totals);
  return monitor.status();
}

wc_status run_open_fd(const wc_options &options, const wc_open_params &params, wc_seal_key_source key_source,
                      std::span<const uint8_t> secret, int out_fd, int in_fd, JobMonitor &monitor,
                      JobTotals *totals) {
  Endpoint in;
  Endpoint out;
  if (engine::open_input_endpoint(&in, in_fd) != WC_OK || engine::open_endpoint(&out, out_fd) != WC_OK) {
    return monitor.fail_io(errno);
  }
  const bool whole = params.offset == 0 && params.length == UINT64_MAX;
  if (!whole && !in.seekable) return WC_ERR_INVALID_ARGUMENT;
  Header header;
  std::array<uint8_t, kHeaderLen> header_bytes{};
  const char *detail = nullptr;
  wc_status status = read_header(in, &header, &header_bytes, &detail);
  if (status == WC_ERR_IO) return monitor.fail_io(errno);
  if (status != WC_OK) {
    monitor.fail_with_detail(status, detail);
    return status;
  }
  totals->bytes_in = kHeaderLen;
  if (header.key_source != key_source) {
    monitor.fail_with_detail(WC_ERR_INVALID_ARGUMENT, header.key_source == WC_SEAL_PASSPHRASE
                                                          ? "this file was sealed with a passphrase"
                                                          : "this file was sealed with a key");
    return WC_ERR_INVALID_ARGUMENT;
  }
  if (header.iterations > params.max_iterations) {
    monitor.fail_with_detail(WC_ERR_FORMAT,
                             "the header asks for more PBKDF2 iterations than this reader's limit "
                             "(raise the limit only for a file you expect)");
    return WC_ERR_FORMAT;
  }
  FileKey key;
  status = derive_file_key(header, secret, &key);
  if (status != WC_OK) return status;
  engine::open_stream(options, stream_shape(header, header_bytes), {key.bytes.data(), key.len}, params.offset,
                      params.length, out, in, monitor, totals);
  engine::settle_offsets(in, out, *totals);
  return monitor.status();
}

}  // namespace warpcrypt::sealed
