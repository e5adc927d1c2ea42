"""Typing helpers the package shares."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Union

# Keys, IVs, nonces and passphrases: bytes-like.
Secret = Union[bytes, bytearray, memoryview]
PathLike = Union[str, "os.PathLike[str]"]

if TYPE_CHECKING:
    from typing import overload
else:
    def overload(function):
        """typing.overload for type checkers only. At run time typing's own
        keeps every variant (for typing.get_overloads) until the interpreter
        exits, and with it the module's globals, which nanobind's leak check
        at exit then reports as leaked extension objects."""
        return function

__all__ = ["PathLike", "Secret", "overload"]
