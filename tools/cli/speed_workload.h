// What `warpcrypt speed` times: one operation of a given size, repeated. Host
// workloads run the streaming API on host memory of the kind asked for
// (HostMemory); device workloads run the device-pointer API on GPU memory and
// time it with CUDA events, which gives the kernel-only figure.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "arguments.h"
#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::cli {

enum class Residency { host, device };
// Host memory: page-locked (registered with the CUDA driver, so transfers run
// at full speed), or ordinary. Backends compare fairly only on the same kind:
// the CPU's lanes stream ordinary memory, which the kernel may back with huge
// pages, faster than page-locked memory of small pages.
enum class HostMemory { pinned, pageable };

struct WorkloadSpec {
  const wc_cipher *cipher;  // null when an AEAD is measured
  wc_direction direction;
  wc_backend backend;
  unsigned threads;
  size_t bytes;
  const EngineFlags *engine;  // chunk size, streams, devices
  HostMemory memory;
  const wc_aead *aead = nullptr;  // one message sealed (or opened) per operation
};

class Workload {
 public:
  virtual ~Workload() = default;
  // Runs `operations` back-to-back operations and returns the seconds they
  // took, measured to their completion.
  virtual double time_operations(size_t operations) = 0;
  // How many copies of each operation run at once (one per device of a
  // device-resident workload on several devices): the bytes of one
  // operation count this many times.
  virtual size_t copies() const { return 1; }
};

std::unique_ptr<Workload> make_host_workload(const WorkloadSpec &spec);
// An AEAD's random key and 12-byte nonce, and room for its tag. Every
// operation of a workload reuses the nonce: fine for timing, never for data.
struct AeadKeying {
  std::vector<uint8_t> key;
  std::vector<uint8_t> nonce;
  std::vector<uint8_t> tag;
};
AeadKeying make_aead_keying(const wc_aead *aead);
// Throws CliError where the build has no CUDA or there is no device. On
// every device of spec.engine->devices (all devices where it is empty) at
// once, each with its own buffer of spec.bytes.
std::unique_ptr<Workload> make_device_workload(const WorkloadSpec &spec);

// Whether page-locked memory can be had: CUDA is built in and a device present.
bool can_pin_memory();
// Page-locked host memory; throws CliError where none can be had.
std::shared_ptr<uint8_t> allocate_pinned_buffer(size_t bytes);
// Random bytes, quickly, however large the buffer.
void fill_random(uint8_t *buffer, size_t bytes);

// Ordinary 64-byte aligned memory.
std::shared_ptr<uint8_t> allocate_pageable_buffer(size_t bytes);

// "NVIDIA H100 80GB HBM3", "2 x NVIDIA H100 80GB HBM3" or "cpu", for
// reports: the devices `engine` lists, or every device.
std::string device_description(wc_backend backend, const EngineFlags &engine);

}  // namespace warpcrypt::cli
