"""Encrypts a PyTorch model's state_dict on the GPU before saving it, and
decrypts it on the GPU after loading it.

Each tensor is encrypted in place, where it lives, with AES-256-CTR under a
nonce of its own: no plaintext weight is copied to the host, and what
torch.save writes is ciphertext. Without a CUDA device the same code runs on
CPU tensors, and says so.

    python examples/encrypt_state_dict.py [--out model.enc.pt]
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

CIPHER = "aes-256-ctr"


def pick_device() -> torch.device:
    if torch.cuda.is_available() and warpcrypt.devices():
        return torch.device("cuda")
    reason = "PyTorch sees no CUDA device" if not torch.cuda.is_available() else "warpcrypt sees no CUDA device"
    print(f"{reason}: encrypting CPU tensors instead", file=sys.stderr)
    return torch.device("cpu")


def make_model(device: torch.device) -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(256, 1024), torch.nn.BatchNorm1d(1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10)
    ).to(device)


def encrypt_state(state: dict[str, torch.Tensor], key: bytes) -> dict:
    """The state's tensors encrypted, with what decryption needs besides the
    key. CTR must never reuse a counter under one key, so each tensor gets a
    random 12-byte nonce prefix and a counter that starts at 0 (room for
    64 GiB per tensor)."""
    tensors, nonces = {}, {}
    for name, tensor in state.items():
        # A contiguous copy: state_dict() shares storage with the live model,
        # which keeps its plaintext weights.
        copy = tensor.detach().clone(memory_format=torch.contiguous_format)
        nonce = secrets.token_bytes(12) + bytes(4)
        warpcrypt.encrypt(CIPHER, key, nonce, copy, out=copy)  # queued on the current stream
        tensors[name], nonces[name] = copy, nonce.hex()
    return {"cipher": CIPHER, "nonces": nonces, "tensors": tensors}


def decrypt_state(saved: dict, key: bytes) -> dict[str, torch.Tensor]:
    for name, tensor in saved["tensors"].items():
        warpcrypt.decrypt(saved["cipher"], key, bytes.fromhex(saved["nonces"][name]), tensor, out=tensor)
    return saved["tensors"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="where to save the encrypted state_dict (default: a temporary file)")
    args = parser.parse_args()

    device = pick_device()
    model = make_model(device)
    inputs = torch.randn(64, 256, device=device)
    model(inputs)  # one training-mode pass, so BatchNorm's running statistics are not the defaults
    model.eval()
    expected = model(inputs)

    # In practice the key comes from a key management service, never from the checkpoint.
    key = secrets.token_bytes(32)
    with tempfile.TemporaryDirectory() as scratch:
        path = args.out or Path(scratch) / "model.enc.pt"
        started = time.perf_counter()
        saved = encrypt_state(model.state_dict(), key)
        torch.save(saved, path)  # copies to the host on the current stream, after the encryption
        encrypt_seconds = time.perf_counter() - started

        plain = model.state_dict()
        unchanged = [name for name, tensor in saved["tensors"].items()
                     if tensor.numel() > 1 and torch.equal(tensor, plain[name])]
        assert not unchanged, f"tensors saved in the clear: {unchanged}"

        started = time.perf_counter()
        loaded = torch.load(path, map_location=device, weights_only=True)
        restored = make_model(device)
        restored.load_state_dict(decrypt_state(loaded, key))
        restored.eval()
        decrypt_seconds = time.perf_counter() - started

    assert torch.equal(restored(inputs), expected), "the restored model computes something else"
    total = sum(t.numel() * t.element_size() for t in saved["tensors"].values())
    print(f"{len(saved['tensors'])} tensors, {total / 1e6:.1f} MB, on {device}: encrypt + save "
          f"{encrypt_seconds * 1e3:.1f} ms, load + decrypt {decrypt_seconds * 1e3:.1f} ms; "
          "the restored model's outputs are identical")
    return 0


if __name__ == "__main__":
    sys.exit(main())
