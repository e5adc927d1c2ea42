"""The CUDA devices the library sees."""

from __future__ import annotations

from dataclasses import dataclass

from warpcrypt import _native


@dataclass(frozen=True)
class Device:
    """A CUDA device, as ``warpcrypt devices`` prints it."""

    index: int
    name: str
    compute_capability: tuple[int, int]
    multiprocessors: int
    memory_bytes: int
    pci_bus_id: str


def devices() -> list[Device]:
    """The usable CUDA devices; empty without a GPU or a driver, and in a
    build without the CUDA backend (see :func:`built_with_cuda`)."""
    return [Device(*_native.device_info(i)) for i in range(_native.device_count())]


def built_with_cuda() -> bool:
    """Whether this build contains the CUDA backend."""
    return _native.built_with_cuda()
