"""Block cipher modes for :class:`~warpcrypt.algorithms.AES`, named and
shaped as in pyca/cryptography's ``cryptography.hazmat.primitives.ciphers.modes``.

Semantics are OpenSSL's: CFB is CFB128; CTR treats the 16-byte nonce as one
128-bit big-endian counter that carries across all 128 bits. Unlike
pyca/cryptography, ECB and CBC pad with PKCS#7 unless the cipher is made
with ``padding=False`` (see :class:`~warpcrypt.Cipher`).
"""

from __future__ import annotations

__all__ = ["Mode", "ECB", "CBC", "CFB", "CFB8", "OFB", "CTR"]


def as_bytes(value: object, what: str) -> bytes:
    """An immutable copy of a bytes-like key, IV or nonce."""
    try:
        return bytes(memoryview(value))  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{what} must be bytes-like, not {type(value).__name__}") from None


class Mode:
    """Base class of the modes."""

    name: str
    _suffix: str  # the mode's part of the library's cipher name
    _iv: bytes

    def __repr__(self) -> str:
        return f"modes.{self.name}()"


class ECB(Mode):
    """Electronic codebook: no IV. Only ever for data that is itself random."""

    name = "ECB"
    _suffix = "ecb"
    _iv = b""


class _IVMode(Mode):
    def __init__(self, initialization_vector: bytes) -> None:
        self._iv = as_bytes(initialization_vector, "initialization_vector")

    @property
    def initialization_vector(self) -> bytes:
        return self._iv


class CBC(_IVMode):
    """Cipher block chaining. Encryption of one message is sequential and runs
    on the CPU; decryption also runs on the GPU."""

    name = "CBC"
    _suffix = "cbc"


class CFB(_IVMode):
    """128-bit cipher feedback (OpenSSL's aes-*-cfb)."""

    name = "CFB"
    _suffix = "cfb"


class CFB8(_IVMode):
    """8-bit cipher feedback; CPU only."""

    name = "CFB8"
    _suffix = "cfb8"


class OFB(_IVMode):
    """Output feedback; CPU only, as its keystream is sequential."""

    name = "OFB"
    _suffix = "ofb"


class CTR(Mode):
    """Counter mode: the 16-byte nonce is the initial 128-bit big-endian
    counter block."""

    name = "CTR"
    _suffix = "ctr"

    def __init__(self, nonce: bytes) -> None:
        self._iv = as_bytes(nonce, "nonce")

    @property
    def nonce(self) -> bytes:
        return self._iv
