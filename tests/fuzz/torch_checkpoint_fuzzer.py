"""libFuzzer target (atheris) for warpcrypt.torch's checkpoint reader,
warpcrypt._checkpoint, which needs no PyTorch.

    .venv/bin/python tests/fuzz/torch_checkpoint_fuzzer.py -max_total_time=30 tests/fuzz/corpus/torch_checkpoint
    .venv/bin/python tests/fuzz/torch_checkpoint_fuzzer.py --write-seeds tests/fuzz/corpus/torch_checkpoint

An input is one of two kinds:

* a file, read as it is, through a seekable stream and through a pipe-like
  one: each must raise FormatError or InvalidTag, or both return the same
  state (only a seed, sealed under KEY, can be accepted);
* ``H``, then a header's JSON, a NUL byte and tensor bytes: the header is
  sealed under KEY, as only a key holder could, so the parser behind the
  tag is fuzzed. A header that parses gets its tensors sealed from the
  bytes after the NUL, and the whole must then read back to exactly those
  bytes in the state the header describes.

Anything else raised, and any broken invariant, is a bug.
"""

from __future__ import annotations

import io
import json
import os
import sys
from typing import IO, Any

import atheris

with atheris.instrument_imports(include=["warpcrypt._checkpoint"]):
    from warpcrypt import _checkpoint as ckpt
    from warpcrypt.exceptions import FormatError, InvalidTag

KEY = bytes(range(32))
DOCUMENTED = (FormatError, InvalidTag)
# Tensors sealed for a parsed header, at most: an authenticated header may
# list up to 64 GiB, which the harness must not allocate itself.
MAX_SEALED = 1 << 16


class _Pipe(io.RawIOBase):
    """A stream that cannot seek, so the reader cannot learn its size."""

    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        return self._data.readinto(buffer)


def _read(stream: IO[bytes]) -> dict[Any, Any] | None:
    try:
        return ckpt.read_raw(stream, KEY)
    except DOCUMENTED:
        return None


def _file(data: bytes) -> None:
    seekable = _read(io.BytesIO(data))
    streamed = _read(io.BufferedReader(_Pipe(data)))
    if seekable != streamed:
        raise AssertionError(f"a seekable and a streamed read disagree: {seekable!r} against {streamed!r}")


def _header(data: bytes) -> None:
    header, _, plain = data[1:].partition(b"\0")
    sealed, aead = ckpt.sealed_header(KEY, "aes-256-gcm", header, bytes(16), bytes(16))
    try:
        reader = ckpt.Reader(io.BytesIO(sealed), KEY)
    except FormatError:
        return
    if sum(info.nbytes for info in reader.tensors) > MAX_SEALED:
        _file(sealed + plain)
        return
    body, tensors = [], []
    for info in reader.tensors:
        tensor_bytes = (plain * (info.nbytes // max(len(plain), 1) + 1))[:info.nbytes]
        body.append(aead.encrypt(ckpt.nonce(info.index), tensor_bytes,
                                 ckpt.associated_data(bytes(16), len(reader.tensors), info)))
        tensors.append(ckpt.RawTensor(info.dtype, info.shape, tensor_bytes, info.device))
    expected = ckpt.fill(reader.state, tensors)
    for stream in (io.BytesIO(sealed + b"".join(body)), io.BufferedReader(_Pipe(sealed + b"".join(body)))):
        if ckpt.read_raw(stream, KEY) != expected:
            raise AssertionError("a sealed header's state did not read back")


def test_one_input(data: bytes) -> None:
    if data.startswith(b"H"):
        _header(data)
    else:
        _file(data)


def write_seeds(folder: str) -> None:
    """Checkpoints sealed under KEY, and headers of the second kind."""
    os.makedirs(folder, exist_ok=True)
    f32 = ckpt.RawTensor("float32", (2, 3), bytes(range(24)))
    states: dict[str, dict[Any, Any]] = {
        "model": {"linear.weight": f32, "linear.bias": ckpt.RawTensor("float16", (3,), bytes(6)),
                  "empty": ckpt.RawTensor("bool", (0,), b""), "cuda": ckpt.RawTensor("int64", (), bytes(8), "cuda:0")},
        "optimizer": {"state": {0: {"step": ckpt.RawTensor("float32", (), bytes(4)), "exp_avg": f32}},
                      "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "eps": float("inf"), "params": [0],
                                        "name": None, "flag": True}]},
        "no-tensors": {"epoch": 3, "nested": [[1, 2], {"tuple": (1,)}]},
    }
    for name, value in states.items():
        with open(os.path.join(folder, f"file-{name}"), "wb") as out:
            ckpt.write_raw(out, value, KEY)
        encoded, found = ckpt.encode_state(value, lambda item: isinstance(item, ckpt.RawTensor))
        table = [{"name": path, "dtype": raw.dtype, "shape": list(raw.shape), "device": raw.device,
                  "nbytes": len(raw.data)} for path, raw in found]
        with open(os.path.join(folder, f"header-{name}"), "wb") as out:
            out.write(b"H" + json.dumps({"tensors": table, "state": encoded}).encode() + b"\0" + bytes(range(40)))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--write-seeds"]:
        write_seeds(sys.argv[2])
    else:
        atheris.Setup(sys.argv, test_one_input)
        atheris.Fuzz()
