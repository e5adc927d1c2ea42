// Files' bytes read straight into device memory (wc_read_files_to_device;
// warpcrypt.safetensors' loads to a GPU): reader threads, a share of them
// for each device, each read a slot's worth of a file into a page-locked
// slot and queue its copy to the range's device memory, two slots a reader,
// so that a read overlaps the copy before it. The slots are small enough
// that those in flight stay in the last-level cache, where the copy engines
// read what a reader has just written: the byte crosses host memory once,
// read from the page cache, instead of three or four times.
#pragma once

#include <cstdint>
#include <span>

#include "engine/transfer_lane.h"

namespace warpcrypt::engine {

// `len` bytes from `offset` of the open file `fd`, into `memory` on `device`.
struct DeviceRange {
  int fd;
  uint64_t offset;
  uint64_t len;
  uint8_t *memory;
  int device;
};

// Reads every range, the slots and their streams leased from `backend`
// (cuda_transfer_backend()), and returns once every byte is in device
// memory or the first failure: WC_ERR_IO where a read fails, WC_ERR_FORMAT
// where a file ends before its range does, the backend's status where a
// lease or copy fails. The ranges' device memory must be ready for it: no
// queued work is waited for.
wc_status read_to_devices(std::span<const DeviceRange> ranges, const TransferBackend &backend);

}  // namespace warpcrypt::engine
