"""warpcrypt: bulk symmetric encryption on NVIDIA GPUs and on the CPU,
byte-identical to OpenSSL.

One-shot calls take an ``openssl enc`` cipher name::

    ciphertext = warpcrypt.encrypt("aes-256-ctr", key, iv, data)
    warpcrypt.encrypt("aes-256-ctr", key, iv, tensor, out=tensor)   # in place, on the GPU

Cipher objects are shaped like pyca/cryptography's::

    from warpcrypt import Cipher, algorithms, modes
    encryptor = Cipher(algorithms.AES(key), modes.CTR(nonce)).encryptor()
    ciphertext = encryptor.update(data) + encryptor.finalize()

See docs/python.md for GPU arrays, streams, padding and errors.
"""

from warpcrypt import _native, aead, algorithms, modes
from warpcrypt._cipher import Cipher
from warpcrypt._devices import Device, built_with_cuda, devices
from warpcrypt._files import JobStats, SealedInfo, decrypt_file, encrypt_file, open_file, seal_file, sealed_info
from warpcrypt._native import CipherContext, CipherInfo
from warpcrypt._oneshot import decrypt, encrypt
from warpcrypt._plan import Plan, describe_plan
from warpcrypt._sealed_io import SealedReader, SealedWriter
from warpcrypt._table import backends, cipher_info, ciphers
from warpcrypt.exceptions import *  # noqa: F403  (the error classes belong at the top level)
from warpcrypt.exceptions import __all__ as _exception_names

__version__: str = _native.version()

__all__ = [
    "Cipher",
    "CipherContext",
    "CipherInfo",
    "Device",
    "JobStats",
    "Plan",
    "SealedInfo",
    "SealedReader",
    "SealedWriter",
    "aead",
    "algorithms",
    "backends",
    "built_with_cuda",
    "cipher_info",
    "ciphers",
    "decrypt",
    "decrypt_file",
    "describe_plan",
    "devices",
    "encrypt",
    "encrypt_file",
    "modes",
    "open_file",
    "seal_file",
    "sealed_info",
    *_exception_names,
]
