"""libFuzzer target, under atheris, for what warpcrypt.safetensors reads
from a file: the length prefix, the header's JSON and every CryptoTensors
field, the layout, and the tensors' data. Whatever the bytes, a load
returns tensors that authenticated or raises one of the documented
exceptions (FormatError, InvalidTag and its InvalidSignature,
InvalidArgument, InvalidKey, Unsupported); anything else is a bug.

    .venv/bin/python tests/fuzz/safetensors_header_fuzzer.py -max_total_time=30 tests/fuzz/corpus/safetensors_header

The first byte of an input picks how the rest, a whole file, is read
(its value modulo 3): 0 without keys (a plain safetensors file), 1 with
the fixed keys below, 2 with them after the harness has signed whatever
header the input holds, so that the fields behind the signature (key
names, policy, wrapped keys, nonces, tags, chunk sizes) are reached too.
`safetensors_header_fuzzer.py --seeds DIR` writes seeds made with the
fixed keys (tests/fuzz/corpus/safetensors_header/).
"""

from __future__ import annotations

import base64
import json
import os
import struct
import sys
from pathlib import Path

import atheris
import numpy as np

import warpcrypt

with atheris.instrument_imports():
    import warpcrypt._cryptotensors as ct
    import warpcrypt.safetensors as ws

SEED = bytes(range(32))
KEYS = {"keys": [
    {"kty": "oct", "alg": "aes256gcm", "kid": "fuzz-master", "k": base64.b64encode(bytes(range(32, 64))).decode()},
    {"kty": "okp", "alg": "ed25519", "kid": "fuzz-signer", "d": base64.b64encode(SEED).decode()},
]}
DOCUMENTED = (warpcrypt.FormatError, warpcrypt.InvalidTag, warpcrypt.InvalidArgument, warpcrypt.InvalidKey,
              warpcrypt.Unsupported)
# Each input is a file in memory, opened by path through /proc, so a run
# leaves nothing behind however it ends.
INPUT = os.memfd_create("safetensors-fuzz-input")
PATH = f"/proc/self/fd/{INPUT}"


def signed(data: bytes) -> bytes:
    """The file with its header signed by SEED, where the header parses;
    else the file as it is."""
    if len(data) < 8:
        return data
    (length,) = struct.unpack("<Q", data[:8])
    try:
        header = ct.parse_header(data[8:8 + length])
    except warpcrypt.FormatError:
        return data
    if header.metadata is None:
        return data
    text = ct.header_bytes(header.entries, ct.sign_header(header.entries, header.metadata, SEED))
    return struct.pack("<Q", len(text)) + text + data[8 + length:]


def one_input(data: bytes) -> None:
    if not data:
        return
    mode, body = data[0] % 3, data[1:]
    if mode == 2:
        body = signed(body)
    os.ftruncate(INPUT, 0)
    os.pwrite(INPUT, body, 0)
    try:
        loaded = ws.load_file(PATH, keys=None if mode == 0 else KEYS, framework="np")
    except DOCUMENTED:
        return
    for name, array in loaded.items():
        if not isinstance(array, np.ndarray):
            raise AssertionError(f"tensor {name!r} loaded as {type(array).__name__}")


def write_seeds(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    tensors = {"w": np.arange(40, dtype=np.float32), "b": np.arange(3, dtype=np.int64), "e": np.zeros(0, np.uint8)}
    for version, chunk_size in (("2", 64), ("1", 64)):
        seed_file = folder / "seed.safetensors"
        ws.save_file(tensors, seed_file, keys=KEYS, version=version, chunk_size=chunk_size, encrypt=["w", "e"],
                     metadata={"seed": version})
        body = seed_file.read_bytes()
        seed_file.unlink()
        (folder / f"signed_v{version}").write_bytes(b"\1" + body)
        (folder / f"resigned_v{version}").write_bytes(b"\2" + body)
    header = json.dumps({"__metadata__": {"a": "b"}, "t": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]}})
    text = header.encode() + b" " * (-len(header) % 8)
    (folder / "plain").write_bytes(b"\0" + struct.pack("<Q", len(text)) + text + b"abcd")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--seeds"]:
        write_seeds(Path(sys.argv[2]))
    else:
        atheris.Setup(sys.argv, one_input)
        atheris.Fuzz()
