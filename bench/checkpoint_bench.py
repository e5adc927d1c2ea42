#!/usr/bin/env python3
"""Encrypted checkpoints: warpcrypt.torch against torch.save plus CPU
encryption, on one multi-GiB state_dict on the GPU, printed as JSON.

Each way writes the same state_dict to a file in --dir and reads it back:

  plain         torch.save / torch.load, no encryption (the floor)
  warpcrypt     warpcrypt.torch.save / load: each tensor sealed with
                AES-256-GCM on the GPU before it is copied to the host,
                opened on the GPU after it is copied back
  cpu-sealed    torch.save to a file, then warpcrypt.seal_file on every CPU
                core (AES-256-GCM, the sealed format); open_file, then
                torch.load: plaintext crosses PCIe and lands on disk first
  cpu-pyca      torch.save into memory, pyca/cryptography AESGCM over the
                whole buffer (one core), written out; the reverse to load
                (skipped without the `cryptography` package, or above its
                2**31 - 1 byte limit)

Times are wall clock for the whole save and the whole load, the device
synchronised at both ends, after one warm-up round; the median of --repeats.
Use a --dir on tmpfs (/dev/shm) to measure the encryption rather than the
disk. GB/s are 10**9 bytes of state_dict per second.

    python bench/checkpoint_bench.py --gib 4 --dir /dev/shm [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import secrets
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import torch

from run_record import run_record
import warpcrypt
import warpcrypt.torch

TENSOR_BYTES = 256 << 20  # a large layer's weight; the rest of the state in one smaller tensor


def make_state(gib: float, device: torch.device) -> dict[str, torch.Tensor]:
    total = int(gib * (1 << 30))
    state: dict[str, torch.Tensor] = {}
    index = 0
    while total > 0:
        size = min(TENSOR_BYTES, total)
        state[f"layers.{index}.weight"] = torch.randn(size // 2, dtype=torch.bfloat16, device=device)
        total -= size
        index += 1
    return state


def synchronized(call: Callable[[], Any]) -> float:
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    started = time.perf_counter()
    call()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return time.perf_counter() - started


def ways(state: dict[str, torch.Tensor], key: bytes, folder: Path, device: torch.device) -> dict[str, Any]:
    path = folder / "checkpoint"
    plain_path = folder / "checkpoint.plain"

    def plain_save() -> None:
        torch.save(state, path)

    def plain_load() -> None:
        torch.load(path, map_location=device, weights_only=True)

    def gpu_save() -> None:
        warpcrypt.torch.save(state, path, key=key)

    def gpu_load() -> None:
        warpcrypt.torch.load(path, key=key, map_location=device)

    def cpu_sealed_save() -> None:
        torch.save(state, plain_path)
        warpcrypt.seal_file(plain_path, path, key=key, backend="cpu")
        plain_path.unlink()

    def cpu_sealed_load() -> None:
        warpcrypt.open_file(path, plain_path, key=key, backend="cpu")
        torch.load(plain_path, map_location=device, weights_only=True)
        plain_path.unlink()

    chosen: dict[str, Any] = {
        "plain": (plain_save, plain_load),
        "warpcrypt": (gpu_save, gpu_load),
        "cpu-sealed": (cpu_sealed_save, cpu_sealed_load),
    }
    try:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    except ImportError:
        return chosen
    import io

    nonce = secrets.token_bytes(12)

    def pyca_save() -> None:
        buffer = io.BytesIO()
        torch.save(state, buffer)
        path.write_bytes(AESGCM(key).encrypt(nonce, buffer.getbuffer(), None))

    def pyca_load() -> None:
        plain = AESGCM(key).decrypt(nonce, path.read_bytes(), None)
        torch.load(io.BytesIO(plain), map_location=device, weights_only=True)

    if sum(t.numel() * t.element_size() for t in state.values()) < 2**31 - 1024:
        chosen["cpu-pyca"] = (pyca_save, pyca_load)
    return chosen


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--gib", type=float, default=4.0, help="state_dict size in GiB (default 4)")
    parser.add_argument("--dir", type=Path, default=None, help="where the files go (default: a temporary folder)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", nargs="*", help="ways to run (default: all)")
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() and warpcrypt.devices() else "cpu")
    state = make_state(args.gib, device)
    nbytes = sum(t.numel() * t.element_size() for t in state.values())
    key = secrets.token_bytes(32)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(dir=args.dir) as scratch:
        for name, (save, load) in ways(state, key, Path(scratch), device).items():
            if args.only and name not in args.only:
                continue
            synchronized(save), synchronized(load)  # warm-up: allocators, page cache, kernels
            saves, loads = [], []
            for _ in range(args.repeats):
                saves.append(synchronized(save))
                loads.append(synchronized(load))
            results[name] = {
                "save_s": statistics.median(saves), "load_s": statistics.median(loads),
                "save_GBps": nbytes / statistics.median(saves) / 1e9,
                "load_GBps": nbytes / statistics.median(loads) / 1e9,
                "file_bytes": (Path(scratch) / "checkpoint").stat().st_size,
            }
    print(json.dumps({
        "benchmark": "checkpoint", "state_bytes": nbytes, "tensors": len(state), "device": str(device),
        "gpu": torch.cuda.get_device_name() if device.type == "cuda" else None,
        "run": run_record(), "repeats": args.repeats,
        "directory": str(args.dir or tempfile.gettempdir()), "results": results,
    }, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
