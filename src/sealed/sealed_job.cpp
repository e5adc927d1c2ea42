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

wc_status accept_header(const Header &header, const wc_open_params &params, wc_seal_key_source key_source,
                        JobMonitor &monitor) {
  if (header.key_source != key_source) {
    monitor.fail_with_detail(WC_ERR_INVALID_ARGUMENT, header.key_source == WC_SEAL_PASSPHRASE
                                                          ? "this file was sealed with a passphrase"
                                                          : "this file was sealed with a key");
    return WC_ERR_INVALID_ARGUMENT;
  }
  const char *detail = nullptr;
  const wc_status status = check_kdf_cost(header, params, &detail);
  if (status != WC_OK) monitor.fail_with_detail(status, detail);
  return status;
}

wc_status run_seal_fd(const HostCrypto &crypto, const engine::Placement &plan, const Header &header,
                      std::span<const uint8_t> secret, int out_fd, int in_fd, JobMonitor &monitor, JobTotals *totals) {
  Endpoint in;
  Endpoint out;
  if (engine::open_input_endpoint(&in, in_fd) != WC_OK) return monitor.fail_io(WC_IO_INPUT, errno);
  if (engine::open_endpoint(&out, out_fd) != WC_OK) return monitor.fail_io(WC_IO_OUTPUT, errno);
  monitor.set_total(in.size);
  FileKey key;
  const char *detail = nullptr;
  const wc_status status = derive_file_key(crypto, header, secret, &key, &detail);
  if (status != WC_OK) {
    monitor.fail_with_detail(status, detail);
    return status;
  }
  const std::array<uint8_t, kHeaderLen> header_bytes = encode(header);
  if (!engine::write_at(out, header_bytes.data(), kHeaderLen, 0)) return monitor.fail_io(WC_IO_OUTPUT, errno);
  totals->bytes_out = kHeaderLen;
  const wc_status sealed = engine::seal_stream(plan, stream_shape(header, header_bytes),
                                               {key.bytes.data(), key.len}, out, in, monitor, totals);
  engine::settle_offsets(in, out, *totals);
  return sealed;
}

wc_status run_open_fd(const HostCrypto &crypto, const engine::Placement &plan, const wc_open_params &params,
                      wc_seal_key_source key_source, std::span<const uint8_t> secret, int out_fd, int in_fd,
                      JobMonitor &monitor, JobTotals *totals) {
  Endpoint in;
  Endpoint out;
  if (engine::open_input_endpoint(&in, in_fd) != WC_OK) return monitor.fail_io(WC_IO_INPUT, errno);
  if (engine::open_endpoint(&out, out_fd) != WC_OK) return monitor.fail_io(WC_IO_OUTPUT, errno);
  const bool whole = params.offset == 0 && params.length == UINT64_MAX;
  if (!whole && !in.seekable) return WC_ERR_INVALID_ARGUMENT;
  Header header;
  std::array<uint8_t, kHeaderLen> header_bytes{};
  const char *detail = nullptr;
  wc_status status = read_header(in, &header, &header_bytes, &detail);
  if (status == WC_ERR_IO) return monitor.fail_io(WC_IO_INPUT, errno);
  if (status != WC_OK) {
    monitor.fail_with_detail(status, detail);
    return status;
  }
  totals->bytes_in = kHeaderLen;
  status = accept_header(header, params, key_source, monitor);
  if (status != WC_OK) return status;
  // Nothing in a sealed header proves the key: a chunk that fails may mean
  // either.
  if (key_source == WC_SEAL_PASSPHRASE) {
    monitor.set_chunk_failure("wrong passphrase, or the file was modified, truncated or reordered");
  }
  FileKey key;
  status = derive_file_key(crypto, header, secret, &key, &detail);
  if (status != WC_OK) {
    monitor.fail_with_detail(status, detail);
    return status;
  }
  status = engine::open_stream(plan, stream_shape(header, header_bytes), {key.bytes.data(), key.len},
                               params.offset, params.length, out, in, monitor, totals);
  engine::settle_offsets(in, out, *totals);
  return status;
}

}  // namespace warpcrypt::sealed
