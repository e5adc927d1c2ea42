"""Saves a PyTorch model's state_dict encrypted and authenticated, sealed on
the GPU, and loads it back.

warpcrypt.torch.save seals every tensor with AES-256-GCM on the device it
lives on before torch.save copies anything to the host, so no plaintext
weight crosses PCIe; warpcrypt.torch.load opens each tensor on the device it
is mapped to, and only once its tag matched. Without a CUDA device the same
code runs on CPU tensors, and says so.

    python examples/encrypt_state_dict.py [--out model.pt]
"""

from __future__ import annotations

import argparse
import secrets
import sys
import tempfile
import time
from pathlib import Path

import torch

import warpcrypt
import warpcrypt.torch


def pick_device() -> torch.device:
    if torch.cuda.is_available() and warpcrypt.devices():
        return torch.device("cuda")
    reason = "PyTorch sees no CUDA device" if not torch.cuda.is_available() else "warpcrypt sees no CUDA device"
    print(f"{reason}: sealing CPU tensors instead", file=sys.stderr)
    return torch.device("cpu")


def make_model(device: torch.device) -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(256, 1024), torch.nn.BatchNorm1d(1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10)
    ).to(device)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="where to save the checkpoint (default: a temporary file)")
    args = parser.parse_args()

    device = pick_device()
    model = make_model(device)
    inputs = torch.randn(64, 256, device=device)
    model(inputs)  # one training-mode pass, so BatchNorm's running statistics are not the defaults
    model.eval()
    expected = model(inputs)

    # In practice the key comes from a key management service, never from beside the checkpoint.
    key = secrets.token_bytes(32)
    with tempfile.TemporaryDirectory() as scratch:
        path = args.out or Path(scratch) / "model.pt"
        started = time.perf_counter()
        warpcrypt.torch.save(model.state_dict(), path, key=key)
        save_seconds = time.perf_counter() - started

        started = time.perf_counter()
        restored = make_model(device)
        restored.load_state_dict(warpcrypt.torch.load(path, key=key, map_location=device))
        restored.eval()
        load_seconds = time.perf_counter() - started

        try:
            warpcrypt.torch.load(path, key=secrets.token_bytes(32))
            raise AssertionError("a wrong key opened the checkpoint")
        except warpcrypt.InvalidTag as refused:
            print(f"a wrong key is refused: {refused}")
        size = path.stat().st_size

    assert torch.equal(restored(inputs), expected), "the restored model computes something else"
    print(f"{len(model.state_dict())} tensors, {size / 1e6:.1f} MB on disk, sealed on {device}: "
          f"save {save_seconds * 1e3:.1f} ms, load {load_seconds * 1e3:.1f} ms; "
          "the restored model's outputs are identical")
    return 0


if __name__ == "__main__":
    sys.exit(main())
