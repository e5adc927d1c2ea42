"""A search of a Dask process's live objects for secret bytes, run there by
client.run or run_on_scheduler. The module holds no secret itself: the
process that runs the search imports it."""

from __future__ import annotations

import gc
import random
import types


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
        # A module's referents are its dict, which the collector's own list
        # holds anyway; and on CPython releases without the fix for its issue
        # 122695 (the GPU machine's 3.12.3) the _asyncio module's include
        # freed FutureIter objects, which crashed the Dask scheduler that
        # this search ran in.
        if isinstance(obj, types.ModuleType):
            continue
        stack.extend(gc.get_referents(obj))
    for n in needles:
        n[:] = bytes(len(n))
    return found
