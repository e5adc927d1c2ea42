"""What the warpcrypt.dask tests share: keys, data trees and tree
comparison. (The search for secrets in other processes lives in
secret_search.py: a worker that unpickles it imports its module, which must
hold no key.)"""

from __future__ import annotations

import hashlib
import os
import random
from pathlib import Path

import warpcrypt

MASTER_KEY = hashlib.sha256(b"warpcrypt.dask tests: master key").digest()
OTHER_KEY = hashlib.sha256(b"warpcrypt.dask tests: another key").digest()
HEADER, TAG = 48, 16


def write_files(root: Path, sizes: dict[str, int], seed: str) -> dict[str, bytes]:
    generator = random.Random(seed)
    contents = {}
    for name, size in sizes.items():
        contents[name] = generator.randbytes(size)
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(contents[name])
    return contents


def tree(root: Path) -> list[str]:
    """Every file (and link) under `root`, hidden ones included, relative to
    it. A directory that vanishes while it is walked, as a running job's
    staging does, is passed over rather than an error."""
    found = []
    for directory, subdirectories, files in os.walk(root):
        here = Path(directory)
        links = [name for name in subdirectories if (here / name).is_symlink()]
        found += [(here / name).relative_to(root).as_posix() for name in files + links]
    return sorted(found)


def sealed_headers(root: Path, names: list[str]) -> dict[str, tuple[str, str]]:
    """(salt, nonce prefix) of each sealed file, hex, as the manifest records them."""
    infos = {name: warpcrypt.sealed_info(root / name) for name in names}
    return {name: (info.salt.hex(), info.nonce_prefix.hex()) for name, info in infos.items()}
