"""Cipher algorithms, named and shaped as in pyca/cryptography's
``cryptography.hazmat.primitives.ciphers.algorithms``.

Key and nonce sizes come from the C library's cipher table; a wrong size
raises :class:`~warpcrypt.InvalidKey` or :class:`~warpcrypt.InvalidIV`
(both ``ValueError``).
"""

from __future__ import annotations

from warpcrypt import _table
from warpcrypt.exceptions import InvalidIV, InvalidKey
from warpcrypt.modes import Mode, as_bytes

__all__ = ["AES", "ChaCha20", "Salsa20"]


def _key_sizes(prefix: str) -> tuple[int, ...]:
    return tuple(sorted({c.key_size for c in _table.ciphers() if c.name.startswith(prefix)}))


class AES:
    """AES with a 16-, 24- or 32-byte key, in one of the modes of
    :mod:`warpcrypt.modes`."""

    name = "AES"
    block_size = 128
    key_sizes = frozenset(8 * n for n in _key_sizes("aes-"))

    def __init__(self, key: bytes) -> None:
        self.key = as_bytes(key, "key")
        if self.key_size not in self.key_sizes:
            sizes = ", ".join(str(n // 8) for n in sorted(self.key_sizes))
            raise InvalidKey(f"AES takes a key of {sizes} bytes, not {len(self.key)} bytes")

    @property
    def key_size(self) -> int:
        """Key size in bits."""
        return 8 * len(self.key)

    def _cipher_name(self, mode: Mode | None) -> str:
        if mode is None:
            raise TypeError("AES needs a mode, e.g. modes.CTR(nonce)")
        return f"aes-{self.key_size}-{mode._suffix}"

    def _iv(self, mode: Mode | None) -> bytes:
        # _cipher_name has refused a missing mode already.
        return mode._iv if mode is not None else b""


class _StreamCipher:
    """A stream cipher: keyed and nonced by itself, used with mode None."""

    name: str
    _names: dict[int, str]  # key length in bytes -> the library's cipher name

    def __init__(self, key: bytes, nonce: bytes) -> None:
        self.key = as_bytes(key, "key")
        self.nonce = as_bytes(nonce, "nonce")
        table_name = self._names.get(len(self.key))
        if table_name is None:
            sizes = " or ".join(str(n) for n in sorted(self._names))
            raise InvalidKey(f"{self.name} takes a {sizes}-byte key, not {len(self.key)} bytes")
        wanted = _table.cipher_info(table_name).iv_size
        if len(self.nonce) != wanted:
            raise InvalidIV(f"{self.name} takes a {wanted}-byte nonce, not {len(self.nonce)} bytes")
        self._table_name = table_name

    @property
    def key_size(self) -> int:
        """Key size in bits."""
        return 8 * len(self.key)

    def _cipher_name(self, mode: Mode | None) -> str:
        if mode is not None:
            raise TypeError(f"{self.name} is a stream cipher: pass mode=None")
        return self._table_name

    def _iv(self, mode: Mode | None) -> bytes:
        return self.nonce


class ChaCha20(_StreamCipher):
    """ChaCha20 with a 32-byte key and a 16-byte nonce laid out as OpenSSL and
    pyca/cryptography lay it out: a 4-byte little-endian initial block
    counter, then the 12-byte nonce of RFC 8439. A counter that passes 2**32
    carries into the nonce's first word, as OpenSSL's does."""

    name = "ChaCha20"
    _names = {info.key_size: info.name for info in _table.ciphers() if info.name == "chacha20"}


class Salsa20(_StreamCipher):
    """djb's Salsa20/20 with a 32-byte (or 16-byte) key and an 8-byte nonce;
    the 64-bit block counter starts at 0. pyca/cryptography has no Salsa20."""

    name = "Salsa20"
    _names = {info.key_size: info.name for info in _table.ciphers() if info.name.startswith("salsa20")}
