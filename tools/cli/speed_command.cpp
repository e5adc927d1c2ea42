// `warpcrypt speed`: throughput in the style of `openssl speed -evp`. Each
// figure is the median of at least five timed runs after a warm-up, in GB/s
// (10^9 bytes per second). Host-resident figures are end to end (for the GPU:
// from pinned host memory, through the GPU and back); device-resident ones
// are kernel-only, timed with CUDA events.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arguments.h"
#include "cli_error.h"
#include "command_line.h"
#include "commands.h"
#include "progress.h"
#include "speed_workload.h"

namespace warpcrypt::cli {
namespace {

// A cipher from `enc -list`, or an AEAD (one message sealed per operation).
struct Subject {
  const wc_cipher *cipher = nullptr;
  const wc_aead *aead = nullptr;

  const char *name() const { return aead != nullptr ? wc_aead_name(aead) : wc_cipher_name(cipher); }
  // ECB and CBC take whole blocks with padding off.
  size_t block_len() const { return aead != nullptr ? 1 : wc_cipher_block_len(cipher); }
  bool operator==(const Subject &) const = default;
};

struct SpeedOptions {
  std::vector<Subject> subjects;
  std::vector<size_t> sizes;
  double seconds = 3.0;
  unsigned runs = 5;
  wc_direction direction = WC_ENCRYPT;
  wc_backend backend = WC_BACKEND_CPU;
  Residency residency = Residency::host;
  unsigned threads = 0;
  EngineFlags engine;
  std::optional<HostMemory> memory;  // --memory
  bool json = false;
  bool progress = false;  // --progress: even when stderr is no terminal
  bool quiet = false;
};

struct Measurement {
  Subject subject;
  size_t bytes;
  wc_plan plan;  // where the library runs it (wc_plan_describe)
  double median_gbps;
  std::vector<double> run_gbps;
};

double parse_seconds(const std::string &text) {
  char *end = nullptr;
  const double seconds = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !(seconds > 0)) {
    throw CliError("invalid value '" + text + "' for -seconds (a positive number)");
  }
  return seconds;
}

void add_speed_options(Command &command, SpeedOptions &o) {
  command.add_option("-evp", "NAME", "cipher or AEAD to measure (repeatable; default aes-128-ctr)",
                     [&o](const std::string &name) {
                       const Subject subject{wc_cipher_by_name(name.c_str()), wc_aead_by_name(name.c_str())};
                       if (subject.cipher == nullptr && subject.aead == nullptr) {
                         throw CliError("unknown cipher '" + name +
                                        "' (see 'warpcrypt enc -list'; or aes-128/192/256-gcm, chacha20-poly1305)");
                       }
                       o.subjects.push_back(subject);
                     });
  command.add_option("-bytes", "SIZE", "message size (repeatable; default: openssl's sizes plus 1M and 16M)",
                     [&o](const std::string &text) {
                       const auto bytes = static_cast<size_t>(parse_size(text, "-bytes"));
                       if (bytes == 0) throw CliError("-bytes must be at least 1");
                       o.sizes.push_back(bytes);
                     });
  command.add_option("-seconds", "S", "timed seconds per size, split over the runs (default 3)",
                     [&o](const std::string &text) { o.seconds = parse_seconds(text); });
  command.add_flag("-decrypt", "measure decryption", [&o] { o.direction = WC_DECRYPT; });
  command.add_option("--runs", "N", "timed runs per size, at least 5 (default 5)", [&o](const std::string &text) {
    o.runs = std::max(5u, static_cast<unsigned>(parse_unsigned(text, "--runs", 1000)));
  });
  command.add_option("--backend", "NAME",
                     "cpu, gpu, hybrid or auto (default cpu); WARPCRYPT_GPU_KERNELS=reference in the "
                     "environment times the GPU's reference kernels",
                     [&o](const std::string &name) { o.backend = parse_backend(name); });
  command.add_option("--resident", "WHERE",
                     "host (default; end to end) or device (kernel only, GPU backends; with several devices, "
                     "each works its own buffer and the figure is their sum)",
                     [&o](const std::string &where) {
                       if (where != "host" && where != "device") throw CliError("--resident takes host or device");
                       o.residency = where == "host" ? Residency::host : Residency::device;
                     });
  command.add_option("--memory", "KIND",
                     "host memory: pinned or pageable (default: pinned where a GPU backend moves it, pageable for "
                     "the cpu backend)",
                     [&o](const std::string &kind) {
                       if (kind != "pinned" && kind != "pageable") throw CliError("--memory takes pinned or pageable");
                       o.memory = kind == "pinned" ? HostMemory::pinned : HostMemory::pageable;
                     });
  command.add_option("--threads", "N", "CPU threads (default: all cores, less the GPU streams)",
                     [&o](const std::string &text) { o.threads = parse_thread_count(text); });
  add_engine_options(command, o.engine);
  command.add_flag("--json", "machine-readable output", [&o] { o.json = true; });
  command.add_flag("--progress", "the sweep's progress on stderr (default: when it is a terminal)",
                   [&o] { o.progress = true; });
  command.add_flag("-q", "quiet: no progress", [&o] { o.quiet = true; });
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// The host memory the workload runs on: as --memory asks, else page-locked
// where a GPU backend moves it (the end-to-end figure) and ordinary otherwise.
HostMemory host_memory(const SpeedOptions &o) {
  if (o.memory) return *o.memory;
  return o.backend != WC_BACKEND_CPU && can_pin_memory() ? HostMemory::pinned : HostMemory::pageable;
}

const char *host_memory_name(HostMemory memory) { return memory == HostMemory::pinned ? "pinned" : "pageable"; }

// What the library does with one operation of `bytes`, asked of it rather
// than worked out here: the backend auto picks, the lanes, the chunk size.
// Options it refuses fail as the operation would.
wc_plan describe_plan(const SpeedOptions &o, const Subject &subject, size_t bytes) {
  const wc_options options = library_options(o.backend, o.threads, o.engine);
  const wc_data_place data = o.residency == Residency::device      ? WC_DATA_DEVICE
                             : host_memory(o) == HostMemory::pinned ? WC_DATA_PINNED
                                                                    : WC_DATA_PAGEABLE;
  const wc_work work{subject.cipher, subject.aead, o.direction, data, bytes};
  wc_job job;
  wc_job_init(&job);
  wc_plan plan;
  const wc_status status = wc_plan_describe(&options, &work, &job, &plan);
  if (status != WC_OK) {
    throw CliError(std::string("speed ") + subject.name() + " on backend " + wc_backend_name(o.backend) + ": " +
                       job.message,
                   wc_status_kind_of(status));
  }
  return plan;
}

Measurement measure(const SpeedOptions &o, const Subject &subject, size_t requested_bytes) {
  const size_t block = subject.block_len();
  const size_t bytes = std::max(block, requested_bytes / block * block);
  const wc_plan plan = describe_plan(o, subject, bytes);
  const WorkloadSpec spec{subject.cipher, o.direction, o.backend, o.threads, bytes, &o.engine, host_memory(o),
                          subject.aead};
  const auto workload = o.residency == Residency::device ? make_device_workload(spec) : make_host_workload(spec);

  // Warm-up, then find how many operations fill one run's share of the time.
  workload->time_operations(1);
  size_t operations = 1;
  double seconds = workload->time_operations(operations);
  const double per_run = o.seconds / o.runs;
  while (seconds < per_run / 8 && operations < (size_t{1} << 40)) {
    operations *= 2;
    seconds = workload->time_operations(operations);
  }
  operations = std::max<size_t>(1, static_cast<size_t>(std::ceil(operations * per_run / std::max(seconds, 1e-9))));

  Measurement m{subject, bytes, plan, 0, {}};
  for (unsigned r = 0; r < o.runs; ++r) {
    const double run_seconds = workload->time_operations(operations);
    const double run_bytes = static_cast<double>(bytes) * static_cast<double>(operations * workload->copies());
    m.run_gbps.push_back(run_bytes / run_seconds / 1e9);
  }
  m.median_gbps = median(m.run_gbps);
  return m;
}

const char *residency_name(Residency r) { return r == Residency::host ? "host" : "device"; }

// The header's and the JSON's one plan: the first measurement's. Under
// auto a size can run elsewhere: each result names its own in the JSON.
const wc_plan &sweep_plan(const std::vector<Measurement> &results) { return results.front().plan; }

void print_table(const SpeedOptions &o, const std::vector<Measurement> &results) {
  const std::string residency = o.residency == Residency::device
                                    ? std::string("device-resident")
                                    : std::string("host-resident, ") + host_memory_name(host_memory(o)) + " memory";
  std::printf("warpcrypt %s speed: backend %s (%s), %s, %u CPU thread(s), %s\n", wc_version(),
              wc_backend_name(o.backend), device_description(o.backend, o.engine).c_str(), residency.c_str(),
              sweep_plan(results).cpu_lanes, o.direction == WC_ENCRYPT ? "encrypt" : "decrypt");
  std::printf("The 'numbers' are in GB/s (10^9 bytes/s), median of %u runs.\n", o.runs);
  std::printf("%-18s", "type");
  for (const Measurement &m : results) {
    if (m.subject == results.front().subject) std::printf(" %12zu B", m.bytes);
  }
  std::printf("\n");
  for (size_t i = 0; i < results.size(); ++i) {
    if (i % o.sizes.size() == 0) std::printf("%-18s", results[i].subject.name());
    std::printf(" %14.3f", results[i].median_gbps);
    if (i % o.sizes.size() == o.sizes.size() - 1) std::printf("\n");
  }
}

// A plan as a JSON object: the library's answer, field by field.
std::string plan_json(const wc_plan &plan) {
  std::string devices;
  for (size_t i = 0; i < std::min<size_t>(plan.device_count, WC_PLAN_MAX_DEVICES); ++i) {
    devices += (i != 0 ? ", " : "") + std::to_string(plan.devices[i]);
  }
  char text[512];
  std::snprintf(text, sizeof text,
                "{\"backend\": \"%s\", \"reason\": \"%s\", \"cpu_lanes\": %u, \"spare_cpu_lanes\": %u, "
                "\"gpu_lanes_per_device\": %u, \"devices\": [%s], \"gpu_lanes_late\": %s, \"chunk_bytes\": %zu, "
                "\"unit_bytes\": %zu}",
                wc_backend_name(plan.backend), plan.reason_text, plan.cpu_lanes, plan.spare_cpu_lanes,
                plan.gpu_lanes_per_device, devices.c_str(), plan.gpu_lanes_late ? "true" : "false", plan.chunk_bytes,
                plan.unit_bytes);
  return text;
}

void print_json(const SpeedOptions &o, const std::vector<Measurement> &results) {
  const wc_plan &plan = sweep_plan(results);
  std::printf("{\"version\": \"%s\", \"backend\": \"%s\", \"device\": \"%s\", \"resident\": \"%s\", "
              "\"memory\": \"%s\", \"threads\": %u, \"chunk_bytes\": %zu, \"streams\": %u, "
              "\"direction\": \"%s\", \"unit\": \"GB/s\", \"results\": [\n",
              wc_version(), wc_backend_name(o.backend), device_description(o.backend, o.engine).c_str(),
              residency_name(o.residency), host_memory_name(host_memory(o)), plan.cpu_lanes, plan.chunk_bytes,
              plan.gpu_lanes_per_device, o.direction == WC_ENCRYPT ? "encrypt" : "decrypt");
  for (size_t i = 0; i < results.size(); ++i) {
    const Measurement &m = results[i];
    std::printf("  {\"cipher\": \"%s\", \"bytes\": %zu, \"median_gbps\": %.4f, \"runs_gbps\": [",
                m.subject.name(), m.bytes, m.median_gbps);
    for (size_t r = 0; r < m.run_gbps.size(); ++r) std::printf("%s%.4f", r ? ", " : "", m.run_gbps[r]);
    std::printf("], \"plan\": %s}%s\n", plan_json(m.plan).c_str(), i + 1 < results.size() ? "," : "");
  }
  std::printf("]}\n");
}

// `o` gets the defaults of what the command line left out.
int run_speed(SpeedOptions &o) {
  if (o.subjects.empty()) o.subjects.push_back({wc_cipher_by_name("aes-128-ctr"), nullptr});
  if (o.sizes.empty()) o.sizes = {16, 64, 256, 1024, 8192, 16384, 1 << 20, 16 << 20};
  std::vector<Measurement> results;
  const size_t steps = o.subjects.size() * o.sizes.size();
  ProgressBar progress(progress_wanted(o.progress, o.quiet), "speed", ProgressBar::Units::steps);
  for (const Subject &subject : o.subjects) {
    for (size_t size : o.sizes) {
      progress.update(results.size(), steps, std::string("speed ") + subject.name() + " " + std::to_string(size) + " B");
      results.push_back(measure(o, subject, size));
    }
  }
  progress.update(results.size(), steps);
  progress.finish();
  if (o.json) {
    print_json(o, results);
  } else {
    print_table(o, results);
  }
  return 0;
}

}  // namespace

void add_speed_command(CommandLine &command_line) {
  // The command keeps the options alive, through its run function, for as
  // long as the option functions that fill them.
  auto options = std::make_shared<SpeedOptions>();
  Command &command = command_line.add_command("speed", "cipher throughput, in the style of `openssl speed -evp`");
  add_speed_options(command, *options);
  command.set_run([options] { return run_speed(*options); });
}

}  // namespace warpcrypt::cli
