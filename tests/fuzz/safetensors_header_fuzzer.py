"""libFuzzer target, under atheris, for what warpcrypt.safetensors reads
from a file: the length prefix, the header's JSON and every CryptoTensors
field, the layout, and the tensors' data. Whatever the bytes, a load
returns tensors that authenticated, and `warpcrypt-tensors inspect` shows
the header, or each raises one of the documented exceptions (FormatError,
InvalidTag and its InvalidSignature, InvalidArgument, InvalidKey,
Unsupported); anything else is a bug, and so is an input that takes longer
than libFuzzer's -timeout (every check of a header is linear in its size).

    .venv/bin/python tests/fuzz/safetensors_header_fuzzer.py -max_total_time=30 -timeout=10 \
        tests/fuzz/corpus/safetensors_header

The first byte of an input picks what the rest is (its value modulo 4):
0 a file read without keys (a plain safetensors file), 1 a file read with
the fixed keys below, 2 a file read with them after the harness has signed
whatever header the input holds, so that the fields behind the signature
(key names, policy, wrapped keys, nonces, tags, chunk sizes) are reached
too, 3 the recipe of a plain file whose tensor has a shape of up to
MOST_DIMENSIONS dimensions, a header larger than any input. inspect reads
every file without keys, and with the keys too in modes 1 and 2, in its
JSON form where the input's last byte is odd.
`safetensors_header_fuzzer.py --seeds DIR` writes seeds made with the
fixed keys (tests/fuzz/corpus/safetensors_header/).
"""

from __future__ import annotations

import base64
import contextlib
import io
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
    import warpcrypt._tensors_cli as cli
    import warpcrypt.safetensors as ws

SEED = bytes(range(32))
KEYS = {"keys": [
    {"kty": "oct", "alg": "aes256gcm", "kid": "fuzz-master", "k": base64.b64encode(bytes(range(32, 64))).decode()},
    {"kty": "okp", "alg": "ed25519", "kid": "fuzz-signer", "d": base64.b64encode(SEED).decode()},
]}
DOCUMENTED = (warpcrypt.FormatError, warpcrypt.InvalidTag, warpcrypt.InvalidArgument, warpcrypt.InvalidKey,
              warpcrypt.Unsupported)
# Each input is a file in memory, opened by path through /proc, so a run
# leaves nothing behind however it ends; so is the keys file inspect reads.
INPUT = os.memfd_create("safetensors-fuzz-input")
PATH = f"/proc/self/fd/{INPUT}"
KEYS_FILE = os.memfd_create("safetensors-fuzz-keys")
os.fchmod(KEYS_FILE, 0o600)  # a key file others may read is refused
os.write(KEYS_FILE, json.dumps(KEYS).encode())
KEYS_PATH = f"/proc/self/fd/{KEYS_FILE}"
# The most dimensions mode 3 gives a shape: enough that a check whose cost
# grows with their square runs past libFuzzer's -timeout (2^17 sizes of 2^62
# took minutes to multiply out), a header of at most 2.6 MB.
MOST_DIMENSIONS = 1 << 17


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


def extreme_shape(recipe: bytes) -> bytes:
    """A plain file of one U8 tensor whose shape has as many dimensions as
    the recipe's first three bytes say (up to MOST_DIMENSIONS), each a power
    of two (1 to 2^63) by a byte of the rest in turn; its data is one byte."""
    dimensions = int.from_bytes(recipe[:3], "little") % (MOST_DIMENSIONS + 1)
    exponents = recipe[3:] or b"\0"
    shape = [1 << (exponents[i % len(exponents)] % 64) for i in range(dimensions)]
    header = json.dumps({"t": {"dtype": "U8", "shape": shape, "data_offsets": [0, 1]}}).encode()
    return struct.pack("<Q", len(header)) + header + b"x"


def inspect(keyed: bool, as_json: bool) -> None:
    """warpcrypt-tensors inspect on the input, its report discarded: its
    exceptions, which the command turns into an exit status, propagate."""
    argv = ["inspect", PATH] + (["--keys", KEYS_PATH] if keyed else []) + (["--json"] if as_json else [])
    args = cli.parser().parse_args(argv)
    cli._read_keys(args)  # as the command reads its keys, before any file
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            args.run(args)
        except DOCUMENTED:
            pass


def one_input(data: bytes) -> None:
    if not data:
        return
    mode, body = data[0] % 4, data[1:]
    if mode == 2:
        body = signed(body)
    elif mode == 3:
        body = extreme_shape(body)
    os.ftruncate(INPUT, 0)
    os.pwrite(INPUT, body, 0)
    keyed = mode in (1, 2)
    inspect(False, bool(data[-1] & 1))
    if keyed:
        inspect(True, bool(data[-1] & 1))
    try:
        loaded = ws.load_file(PATH, keys=KEYS if keyed else None, framework="np")
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
    # Shapes of no dimension (it loads), one past MAX_DIMS, and the most.
    for name, dimensions in (("scalar", 0), ("rank_past_the_most", ct.MAX_DIMS + 1), ("rank_huge", MOST_DIMENSIONS)):
        (folder / name).write_bytes(b"\3" + dimensions.to_bytes(3, "little") + b"\0\x3e")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--seeds"]:
        write_seeds(Path(sys.argv[2]))
    else:
        atheris.Setup(sys.argv, one_input)
        atheris.Fuzz()
