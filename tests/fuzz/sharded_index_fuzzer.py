"""libFuzzer target, under atheris, for what warpcrypt.safetensors reads
of a sharded checkpoint before its tensors: the index
(model.safetensors.index.json) and each shard's binding to it. A fixed
checkpoint of three shards, bound to its index under the keys below, lies
in a folder made at start; each input is written as the index, then the
checkpoint is loaded with those keys and without. Whatever the bytes, a
load returns the checkpoint's own tensors (only its own index can name
them so that every binding verifies) or raises one of the documented
exceptions: FormatError (the index damaged, a shard missing or holding
other tensors), InvalidTag and its InvalidSignature (a binding that names
another index or place), InvalidArgument, InvalidKey, Unsupported, and
FileNotFoundError; anything else is a bug.

    .venv/bin/python tests/fuzz/sharded_index_fuzzer.py -max_total_time=15 -timeout=10 \
        tests/fuzz/corpus/sharded_index

`sharded_index_fuzzer.py --seeds DIR` writes the checkpoint's own index and
edits of it as seeds.
"""

from __future__ import annotations

import atexit
import base64
import json
import shutil
import sys
import tempfile
from pathlib import Path

import atheris
import numpy as np

import warpcrypt

with atheris.instrument_imports():
    import warpcrypt.safetensors.numpy as wnp
    from warpcrypt.safetensors import _sharded

KEYS = {"keys": [
    {"kty": "oct", "alg": "aes256gcm", "kid": "fuzz-master", "k": base64.b64encode(bytes(range(32, 64))).decode()},
    {"kty": "okp", "alg": "ed25519", "kid": "fuzz-signer", "d": base64.b64encode(bytes(range(32))).decode()},
]}
DOCUMENTED = (warpcrypt.FormatError, warpcrypt.InvalidTag, warpcrypt.InvalidArgument, warpcrypt.InvalidKey,
              warpcrypt.Unsupported, FileNotFoundError)
TENSORS = {f"layers.{i}.weight": np.full((16, 16), i, np.float32) for i in range(6)}
FOLDER = Path(tempfile.mkdtemp(prefix="sharded-index-fuzz-"))
atexit.register(shutil.rmtree, FOLDER, True)
wnp.save_state_dict(TENSORS, FOLDER, keys=KEYS, max_shard_size=2500)
INDEX = FOLDER / _sharded.INDEX_NAME
GENUINE = INDEX.read_bytes()


def TestOneInput(data: bytes) -> None:  # noqa: N802  (atheris' name)
    INDEX.write_bytes(data)
    for keys in (KEYS, None):
        try:
            loaded = wnp.load_state_dict(FOLDER, keys=keys)
        except DOCUMENTED:
            continue
        if keys is not None:  # every binding verified: the checkpoint's own tensors, all of them
            assert sorted(loaded) == sorted(TENSORS), sorted(loaded)
            assert all(np.array_equal(loaded[name], TENSORS[name]) for name in TENSORS)


def write_seeds(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    index = json.loads(GENUINE)
    edits = {
        "genuine": index,
        "dropped": {**index, "weight_map": dict(list(index["weight_map"].items())[1:])},
        "outside": {**index, "weight_map": {**index["weight_map"], "layers.0.weight": "../x.safetensors"}},
        "metadata": {**index, "metadata": {**index["metadata"], "total_size": 1}},
        "emptied": {**index, "weight_map": {}},
    }
    for name, edited in edits.items():
        (folder / name).write_text(json.dumps(edited, indent=2))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--seeds"]:
        write_seeds(Path(sys.argv[2]))
        sys.exit(0)
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
