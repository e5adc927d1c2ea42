"""Where the library will run a job, asked of the library itself
(wc_plan_describe): the package and its Dask workers repeat none of its
placement rules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from warpcrypt import _native, _table

Data = Literal["pageable", "pinned", "device", "stream"]


@dataclass(frozen=True)
class Plan:
    """What a job runs on: the backend ``auto`` resolves to and why, and
    the engine's lanes (a CPU lane is a thread; a GPU lane a CUDA stream
    with buffers of its own)."""

    backend: str  # "cpu", "gpu" or "hybrid"
    reason: str  # why, in a short sentence: "the backend the options name", "below the measured ..."
    cpu_lanes: int
    spare_cpu_lanes: int  # CPU lanes that run until late GPU lanes take their cores
    gpu_lanes_per_device: int
    devices: tuple[int, ...]  # CUDA ordinals; empty without GPU lanes
    gpu_lanes_late: bool  # the GPU lanes join late, on trial (hybrid)
    chunk_bytes: int
    unit_bytes: int  # what a CPU lane claims at once


def describe_plan(cipher: str, *, data: Data = "pageable", size: int = 0, decrypt: bool = False,
                  backend: str = "auto", threads: int = 0) -> Plan:
    """The plan of a job of `cipher` (a plain cipher's `openssl enc` name or
    an AEAD's) on `size` bytes (0: unknown) of `data`: "pageable" or
    "pinned" host memory, "device" memory, or "stream" (a file or a
    descriptor: encrypt_file, seal_file). Raises what the job would: NoDevice
    for "gpu" or "hybrid" without a device, InvalidArgument for options the
    job refuses."""
    direction = _native.DECRYPT if decrypt else _native.ENCRYPT
    (resolved, reason, cpu_lanes, spare_cpu_lanes, gpu_lanes_per_device, devices, gpu_lanes_late, chunk_bytes,
     unit_bytes) = _native.describe_plan(cipher, direction, data, size, _table.backend_value(backend), threads)
    return Plan(resolved, reason, cpu_lanes, spare_cpu_lanes, gpu_lanes_per_device, tuple(devices), gpu_lanes_late,
                chunk_bytes, unit_bytes)
