"""Cipher objects shaped like pyca/cryptography's ``Cipher``."""

from __future__ import annotations

from typing import Union

from warpcrypt import _native, _table
from warpcrypt.algorithms import AES, ChaCha20, Salsa20
from warpcrypt.exceptions import InvalidIV
from warpcrypt.modes import Mode

Algorithm = Union[AES, ChaCha20, Salsa20]


class Cipher:
    """An algorithm and a mode, from which encryption and decryption contexts
    are made::

        cipher = Cipher(algorithms.AES(key), modes.CTR(nonce))
        encryptor = cipher.encryptor()
        ciphertext = encryptor.update(data) + encryptor.finalize()

    As in pyca/cryptography, except:

    * ``padding``: ECB and CBC pad with PKCS#7 by default, as OpenSSL does, so
      any length encrypts and ``finalize()`` returns the last, padded block.
      ``padding=False`` matches pyca/cryptography, which never pads (there,
      ``cryptography.hazmat.primitives.padding.PKCS7`` pads in a separate
      step), and raises NotBlockAligned for data that is not whole blocks.
    * ``backend``: where the work runs: "auto" (the GPU where the library
      measured it faster), "cpu", "gpu" (an error without a device, never a
      silent fallback), or another of ``warpcrypt.backends()``.
    * ``threads``: CPU worker threads; 0 uses every core.

    Contexts work on host memory: bytes, bytearray, memoryview, NumPy arrays
    and CPU tensors. For GPU arrays use :func:`warpcrypt.encrypt` and
    :func:`warpcrypt.decrypt` with ``out=`` and ``cipher.name``.
    """

    def __init__(
        self,
        algorithm: Algorithm,
        mode: Mode | None = None,
        *,
        backend: str = "auto",
        padding: bool = True,
        threads: int = 0,
    ) -> None:
        self.algorithm = algorithm
        self.mode = mode
        self.name = algorithm._cipher_name(mode)
        self._info = _table.cipher_info(self.name)
        self._iv = algorithm._iv(mode)
        if len(self._iv) != self._info.iv_size:
            wanted = self._info.iv_size
            what = "no IV" if wanted == 0 else f"a {wanted}-byte IV"
            raise InvalidIV(f"{self.name} takes {what}, not {len(self._iv)} bytes")
        self._settings = (bool(padding), _table.backend_value(backend), int(threads))

    def encryptor(self) -> _native.CipherContext:
        return _native.CipherContext(self._info, _native.ENCRYPT, self.algorithm.key, self._iv, *self._settings)

    def decryptor(self) -> _native.CipherContext:
        return _native.CipherContext(self._info, _native.DECRYPT, self.algorithm.key, self._iv, *self._settings)

    def __repr__(self) -> str:
        return f"<warpcrypt.Cipher {self.name}>"
