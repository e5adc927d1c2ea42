"""What the GPU runs, for tests that expect it to or not. A module of its own
rather than conftest.py, whose name tests/cli shares."""

from __future__ import annotations

NO_DEVICE_REASON = "no CUDA device: GPU tests skipped"

# The modes the GPU runs, per direction (README, "The GPU backend").
GPU_BOTH_WAYS = ("ecb", "ctr")
GPU_DECRYPT_ONLY = ("cbc", "cfb")


def gpu_runs(name: str, encrypting: bool) -> bool:
    if name.startswith(("chacha20", "salsa20")):
        return True
    mode = name.rsplit("-", 1)[1]
    return mode in GPU_BOTH_WAYS or (not encrypting and mode in GPU_DECRYPT_ONLY)
