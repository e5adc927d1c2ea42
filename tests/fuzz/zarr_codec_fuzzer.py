"""libFuzzer target, under atheris, for what warpcrypt.zarr decodes from a
store: sealed chunks (through numcodecs and through zarr's pipeline, in
formats 3 and 2), the manifest, and the codec's configuration. Whatever the
bytes, the codec returns data that authenticated or raises one of its
documented exceptions (InvalidTag, FormatError, InvalidArgument); anything
else is a bug, and atheris reports it with the input.

    .venv/bin/python tests/fuzz/zarr_codec_fuzzer.py -max_total_time=30 tests/fuzz/corpus/zarr_codec

The first byte of an input picks what the rest is (its value modulo 6):
0 a chunk for AeadNumcodec.decode, 1 a plaintext that must come back from
encode then decode, 2 a chunk of a format 3 array, 3 a chunk of a format 2
array, 4 the format 3 array's manifest, 5 the codec's configuration (JSON).
The key and array ids are fixed, so seeds sealed by this file authenticate
in every run (the arrays' own chunks are sealed afresh each run, so a seeded
chunk or manifest then meets the check of the committed version):
`zarr_codec_fuzzer.py --seeds DIR` writes them (tests/fuzz/corpus/zarr_codec/).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import atheris
import numcodecs
import numpy as np
import zarr

import warpcrypt

with atheris.instrument_imports():
    import warpcrypt.zarr as wz

KEY = bytes(range(32))
ARRAY_IDS = {3: "0123456789abcdef0123456789abcdef", 2: "fedcba9876543210fedcba9876543210"}
DOCUMENTED = (warpcrypt.InvalidTag, warpcrypt.FormatError, warpcrypt.InvalidArgument)

wz.register_key("fuzz", KEY)
NUMCODEC = wz.AeadNumcodec(key_id="fuzz", array_id=ARRAY_IDS[2])
STORE = zarr.storage.MemoryStore()
ARRAYS = {
    3: wz.create_array(STORE, name="v3", shape=(6,), chunks=(6,), dtype="i4",
                       compressors=[wz.AeadCodec(key_id="fuzz", array_id=ARRAY_IDS[3])]),
    2: wz.create_array(STORE, name="v2", shape=(6,), chunks=(6,), dtype="i4", zarr_format=2,
                       compressors=wz.AeadNumcodec(key_id="fuzz", array_id=ARRAY_IDS[2])),
}
for written in ARRAYS.values():
    written[:] = np.arange(6, dtype="i4")
    wz.commit(written)
CHUNKS = {3: "v3/c/0", 2: "v2/0"}
MANIFEST = "v3/warpcrypt.manifest"


def read_with(key: str, data: bytes, fmt: int) -> None:
    """Reads the array with `data` in the store at `key`, then puts back
    what was there."""
    kept = STORE._store_dict[key]
    STORE._store_dict[key] = zarr.core.buffer.cpu.Buffer.from_bytes(data)
    try:
        ARRAYS[fmt][:]
    finally:
        STORE._store_dict[key] = kept


def one_input(data: bytes) -> None:
    if not data:
        return
    mode, body = data[0] % 6, data[1:]
    try:
        if mode == 0:
            with wz.chunk_key("fuzz/0"):
                NUMCODEC.decode(body)
        elif mode == 1:
            with wz.chunk_key("fuzz/1"):
                back = NUMCODEC.decode(NUMCODEC.encode(np.frombuffer(body, dtype=np.uint8)))
            if bytes(back) != body:
                raise AssertionError(f"a sealed chunk of {len(body)} bytes opened to other bytes")
        elif mode in (2, 3):
            read_with(CHUNKS[3 if mode == 2 else 2], body, 3 if mode == 2 else 2)
        elif mode == 4:
            read_with(MANIFEST, body, 3)
        else:
            try:
                configuration = json.loads(body)
            except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
                return  # not JSON: zarr's parser refuses it before the codec sees it
            codec = wz.AeadCodec.from_dict({"name": wz.CODEC_ID, "configuration": configuration})
            wz.AeadCodec.from_dict(codec.to_dict())
    except DOCUMENTED:
        pass


def write_seeds(folder: Path) -> None:
    """Inputs that authenticate: a sealed chunk per path, the manifest, a configuration."""
    folder.mkdir(parents=True, exist_ok=True)
    with wz.chunk_key("fuzz/0"):
        sealed = bytes(NUMCODEC.encode(np.arange(16, dtype=np.uint8)))
    seeds = {
        "numcodec_chunk": b"\0" + sealed,
        "round_trip": b"\1" + b"plaintext of a chunk",
        "v3_chunk": b"\2" + STORE._store_dict[CHUNKS[3]].to_bytes(),
        "v2_chunk": b"\3" + STORE._store_dict[CHUNKS[2]].to_bytes(),
        "manifest": b"\4" + STORE._store_dict[MANIFEST].to_bytes(),
        "configuration": b"\5" + json.dumps({"aead": "chacha20-poly1305", "key_id": "fuzz",
                                             "array_id": ARRAY_IDS[3]}).encode(),
    }
    for name, seed in seeds.items():
        (folder / name).write_bytes(seed)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--seeds"]:
        write_seeds(Path(sys.argv[2]))
    else:
        atheris.Setup(sys.argv, one_input)
        atheris.Fuzz()
