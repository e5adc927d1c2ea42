"""What the warpcrypt.dask tests share: keys, data trees, tree comparison,
and a search of a process's live objects for secret bytes."""

from __future__ import annotations

import gc
import hashlib
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
    """Every file under `root`, hidden ones included, relative to it."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() or p.is_symlink())


def masked(secrets: list[bytes]) -> tuple[list[bytes], bytes]:
    """The secrets XORed with one random mask, and the mask: what a search in
    another process is handed, so that the search itself brings no copy of a
    secret into that process's objects."""
    mask = random.randbytes(max(map(len, secrets)))
    return [bytes(a ^ b for a, b in zip(s, mask)) for s in secrets], mask


def live_objects_holding(masked_secrets: list[bytes], mask: bytes, dask_scheduler=None, dask_worker=None) -> list[str]:
    """Run in a Dask process (client.run / run_on_scheduler): the types of
    the live objects, reachable from the garbage collector's, whose bytes
    contain one of the secrets. Walks every referent, so bytes inside
    untracked tuples count too."""
    needles = [bytearray(a ^ b for a, b in zip(s, mask)) for s in masked_secrets]
    own = {id(n) for n in needles} | {id(needles)}
    found = []
    seen: set[int] = set()
    stack = gc.get_objects()
    while stack:
        obj = stack.pop()
        if id(obj) in seen or id(obj) in own:
            continue
        seen.add(id(obj))
        if isinstance(obj, (bytes, bytearray)):
            if any(n in obj for n in needles):
                found.append(type(obj).__name__)
            continue
        if isinstance(obj, memoryview):
            try:
                data = obj.tobytes()
            except (ValueError, TypeError):
                continue
            if any(n in data for n in needles):
                found.append("memoryview")
            continue
        if isinstance(obj, str):
            continue
        stack.extend(gc.get_referents(obj))
    for n in needles:
        n[:] = bytes(len(n))
    return found


def sealed_headers(root: Path, names: list[str]) -> dict[str, tuple[str, str]]:
    """(salt, nonce prefix) of each sealed file, hex, as the manifest records them."""
    infos = {name: warpcrypt.sealed_info(root / name) for name in names}
    return {name: (info.salt.hex(), info.nonce_prefix.hex()) for name, info in infos.items()}
