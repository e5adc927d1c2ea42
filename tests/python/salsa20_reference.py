"""Salsa20/20 in plain Python, from djb's specification ("Salsa20
specification", 2005), as the reference for warpcrypt's Salsa20, which
pyca/cryptography lacks. Slow: for tests only."""

from __future__ import annotations

import struct

_MASK = 0xFFFFFFFF
# Section 9: the constants for 32-byte and 16-byte keys.
_SIGMA = struct.unpack("<4I", b"expand 32-byte k")
_TAU = struct.unpack("<4I", b"expand 16-byte k")


def _rotl(value: int, count: int) -> int:
    return ((value << count) & _MASK) | (value >> (32 - count))


def _quarter_round(x: list[int], a: int, b: int, c: int, d: int) -> None:
    x[b] ^= _rotl((x[a] + x[d]) & _MASK, 7)
    x[c] ^= _rotl((x[b] + x[a]) & _MASK, 9)
    x[d] ^= _rotl((x[c] + x[b]) & _MASK, 13)
    x[a] ^= _rotl((x[d] + x[c]) & _MASK, 18)


def block(key: bytes, nonce: bytes, counter: int) -> bytes:
    """Salsa20_k(nonce || counter): one 64-byte keystream block (sections 8-10)."""
    constants = _SIGMA if len(key) == 32 else _TAU
    k = struct.unpack("<8I", key if len(key) == 32 else key + key)
    n = struct.unpack("<2I", nonce)
    state = [
        constants[0], k[0], k[1], k[2],
        k[3], constants[1], n[0], n[1],
        counter & _MASK, counter >> 32, constants[2], k[4],
        k[5], k[6], k[7], constants[3],
    ]
    x = list(state)
    for _ in range(10):  # a column round and a row round each
        _quarter_round(x, 0, 4, 8, 12)
        _quarter_round(x, 5, 9, 13, 1)
        _quarter_round(x, 10, 14, 2, 6)
        _quarter_round(x, 15, 3, 7, 11)
        _quarter_round(x, 0, 1, 2, 3)
        _quarter_round(x, 5, 6, 7, 4)
        _quarter_round(x, 10, 11, 8, 9)
        _quarter_round(x, 15, 12, 13, 14)
    return struct.pack("<16I", *((a + b) & _MASK for a, b in zip(x, state)))


def xor(key: bytes, nonce: bytes, data: bytes, counter: int = 0) -> bytes:
    """`data` XOR the keystream starting at block `counter` (section 10)."""
    stream = b"".join(block(key, nonce, counter + i) for i in range((len(data) + 63) // 64))
    return bytes(a ^ b for a, b in zip(data, stream))
