// warpcrypt._native.describe_plan: where the library will run a job
// (wc_plan_describe), for the package's describe_plan and its Dask workers,
// which ask instead of deciding.
#include <algorithm>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "errors.h"
#include "options.h"
#include "warpcrypt/warpcrypt.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace wcpy {
namespace {

// Where the data is, by the names the package uses.
wc_data_place data_place(const std::string &data) {
  if (data == "pageable") return WC_DATA_PAGEABLE;
  if (data == "pinned") return WC_DATA_PINNED;
  if (data == "device") return WC_DATA_DEVICE;
  if (data == "stream") return WC_DATA_STREAM;
  throw nb::value_error("data is 'pageable', 'pinned', 'device' or 'stream'");
}

// (backend, reason, cpu_lanes, spare_cpu_lanes, gpu_lanes_per_device,
// devices, gpu_lanes_late, chunk_bytes, unit_bytes) of the plan for
// `subject` (a plain cipher's or an AEAD's name).
nb::tuple describe_plan(const std::string &subject, int direction, const std::string &data, uint64_t total_bytes,
                        int backend, unsigned threads) {
  const wc_work work{wc_cipher_by_name(subject.c_str()), wc_aead_by_name(subject.c_str()),
                     static_cast<wc_direction>(direction), data_place(data), total_bytes};
  if (work.cipher == nullptr && work.aead == nullptr) {
    throw Failure(WC_ERR_UNKNOWN_CIPHER, "unknown cipher '" + subject + "' (warpcrypt.ciphers() lists them)");
  }
  const wc_options options = make_options(backend, threads);
  wc_job job;
  wc_job_init(&job);
  wc_plan plan;
  const wc_status status = wc_plan_describe(&options, &work, &job, &plan);
  if (status != WC_OK) throw Failure(status, "the plan of " + subject + " on " + data + " memory: " + job.message);
  const size_t listed = std::min<size_t>(plan.device_count, WC_PLAN_MAX_DEVICES);
  return nb::make_tuple(wc_backend_name(plan.backend), plan.reason_text, plan.cpu_lanes, plan.spare_cpu_lanes,
                        plan.gpu_lanes_per_device, std::vector<int>(plan.devices, plan.devices + listed),
                        plan.gpu_lanes_late != 0, plan.chunk_bytes, plan.unit_bytes);
}

}  // namespace

void bind_plan(nb::module_ &m) {
  m.def("describe_plan", &describe_plan, "subject"_a, "direction"_a, "data"_a, "total_bytes"_a, "backend"_a,
        "threads"_a,
        "(backend, reason, cpu_lanes, spare_cpu_lanes, gpu_lanes_per_device, devices, gpu_lanes_late, "
        "chunk_bytes, unit_bytes): where the library runs a job of `subject` on `data` ('pageable', 'pinned', "
        "'device' or 'stream') memory.");
}

}  // namespace wcpy
