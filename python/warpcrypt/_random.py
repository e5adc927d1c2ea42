"""The package's one random source: every key, nonce, salt and id a format
draws comes from :func:`random_bytes`, which is the library's
(``wc_random_bytes``, OpenSSL's CSPRNG), as the C formats' are.

:func:`seeded` replaces it, for the whole process, by a stream derived
from a seed, so that a test can write a file twice and compare the bytes,
as the C formats' tests do with a seeded source (a format whose threads
draw in a varying order reproduces only when run in one). It is for tests
alone: a seeded file's keys are as secret as its seed.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from typing import Iterator, Optional

from warpcrypt import _native

__all__ = ["random_bytes", "seeded"]

# HKDF-SHA-256 gives at most 255 digests a call.
_HKDF_MOST = 255 * 32


class _SeededStream:
    """Draw n of a seeded run: HKDF-SHA-256 of the seed, with the draw's
    number in the info, so each draw depends on the seed and on how many
    came before it, never on the sizes asked for later."""

    def __init__(self, seed: bytes) -> None:
        self._seed = seed
        self._draws = itertools.count()
        self._lock = threading.Lock()

    def take(self, length: int) -> bytes:
        with self._lock:
            draw = next(self._draws)
        label = b"warpcrypt seeded draw " + draw.to_bytes(8, "big")
        pieces = []
        for piece, start in enumerate(range(0, length, _HKDF_MOST)):
            size = min(_HKDF_MOST, length - start)
            pieces.append(_native.hkdf("sha256", self._seed, b"", label + piece.to_bytes(4, "big"), size))
        return b"".join(pieces)


_seeded: Optional[_SeededStream] = None


def random_bytes(length: int) -> bytes:
    """`length` random bytes: the library's, or a seeded run's."""
    stream = _seeded
    return stream.take(length) if stream is not None else _native.random_bytes(length)


@contextlib.contextmanager
def seeded(seed: bytes) -> Iterator[None]:
    """Within the block, random_bytes is a stream derived from `seed`, in
    every thread (tests only)."""
    global _seeded
    previous, _seeded = _seeded, _SeededStream(bytes(seed))
    try:
        yield
    finally:
        _seeded = previous
