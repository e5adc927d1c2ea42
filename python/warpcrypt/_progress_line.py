"""The progress line of warpcrypt's Python command lines (``python -m
warpcrypt.dask``, ``warpcrypt-tensors``), drawn here alone so that they all
read alike::

    encrypting: 54.4 MiB of 56.3 MiB (96 %), 3 of 4 files
"""

from __future__ import annotations

import sys


def binary_size(size: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024:
            return f"{size:.1f} {unit}" if unit != "B" else f"{size:.0f} B"
        size /= 1024
    return f"{size:.1f} TiB"


class ProgressLine:
    """One line on stderr counting the bytes done, rewritten in place: each
    drawing starts with a carriage return and is padded to cover a longer
    one before it, and the last ends the line. It keeps no lock: callers
    drawing from several threads hold their own around `draw`."""

    def __init__(self, verb: str) -> None:
        self._verb = verb
        self._width = 0  # of the line last drawn, which a shorter one must cover

    def draw(self, done: int, total: int, *, last: bool, files: tuple[int, int] | None = None) -> None:
        """`files`: (finished, all) where the work comes in files, shown
        after the bytes."""
        if total:
            percent = 100 * done // total
        elif files is not None and files[1]:
            # Empty files have no bytes to count: the files stand in.
            percent = 100 * files[0] // files[1]
        else:
            percent = 100
        line = f"{self._verb}: {binary_size(done)} of {binary_size(total)} ({percent} %)"
        if files is not None:
            line += f", {files[0]} of {files[1]} files"
        print(f"\r{line:<{self._width}}", end="\n" if last else "", file=sys.stderr, flush=True)
        self._width = len(line)
