// `warpcrypt devices`: the CUDA devices this build can use.
#include <cstdio>
#include <string>

#include "cli_error.h"
#include "commands.h"

namespace warpcrypt::cli {
namespace {

int run_devices() {
  if (!wc_built_with_cuda()) {
    std::printf("no CUDA devices: this warpcrypt was built without the CUDA backend\n");
    return 0;
  }
  int count = 0;
  check(wc_device_count(&count), "cannot query CUDA devices");
  if (count == 0) {
    std::printf("no CUDA devices: none present, or no driver (the CPU backend runs everything)\n");
    return 0;
  }
  for (int i = 0; i < count; ++i) {
    wc_device_info info;
    check(wc_device_info_get(&info, i), "cannot query CUDA device " + std::to_string(i));
    std::printf("%d: %s, compute %d.%d, %d SMs, %.1f GiB, PCI %s\n", i, info.name,
                info.compute_major, info.compute_minor, info.multiprocessors,
                static_cast<double>(info.global_memory_bytes) / (1024.0 * 1024.0 * 1024.0),
                info.pci_bus_id);
  }
  return 0;
}

}  // namespace

void add_devices_command(CommandLine &command_line) {
  command_line.add_command("devices", "list the CUDA devices").set_run(run_devices);
}

}  // namespace warpcrypt::cli
