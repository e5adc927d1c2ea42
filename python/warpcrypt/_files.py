"""Whole files through the library's streaming engine: every worker reads,
transforms and writes its own chunks of a regular file at once, and the
output appears atomically (a temporary file beside it, renamed on success,
removed on failure).

``encrypt_file`` / ``decrypt_file`` write what ``openssl enc`` writes for the
same cipher, key and IV (no salt header). ``seal_file`` / ``open_file`` use
the authenticated, chunked sealed-file format of docs/format.md, which
``warpcrypt seal`` and ``warpcrypt open`` read and write too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, Optional, Union

from warpcrypt import _native, _table
from warpcrypt.exceptions import InvalidArgument

PathLike = Union[str, "os.PathLike[str]"]
# progress(done_bytes, total_bytes); a true result cancels the job, which
# then raises warpcrypt.Cancelled. It runs on the library's worker threads.
ProgressCallback = Callable[[int, int], object]

# The passphrase KDFs by their names in this API and the CLI.
_KDFS = {"argon2id": _native.SEAL_ARGON2ID, "pbkdf2": _native.SEAL_PBKDF2}

__all__ = ["JobStats", "SealedInfo", "decrypt_file", "encrypt_file", "open_file", "seal_file", "sealed_info"]


@dataclass(frozen=True)
class JobStats:
    """What a file job did: bytes read and written, its wall time, and the
    input bytes each backend transformed."""

    bytes_in: int
    bytes_out: int
    seconds: float
    cpu_bytes: int
    gpu_bytes: int

    @property
    def backend(self) -> str:
        """``"cpu"``, ``"gpu"`` or ``"hybrid"``: who did the work."""
        if self.gpu_bytes and self.cpu_bytes:
            return "hybrid"
        return "gpu" if self.gpu_bytes else "cpu"

    @property
    def throughput(self) -> float:
        """Input bytes per second (0 for an instant job)."""
        return self.bytes_in / self.seconds if self.seconds > 0 else 0.0


@dataclass(frozen=True)
class SealedInfo:
    """A sealed file's header, and what its size says about it."""

    aead: str
    key_source: str  # "passphrase" or "key"
    digest: Optional[str]  # PBKDF2's or the key's HKDF's; None for Argon2id
    iterations: int  # PBKDF2's; 0 otherwise
    chunk_size: int
    chunks: int
    plaintext_len: int
    salt: bytes
    nonce_prefix: bytes
    kdf: Optional[str]  # a passphrase's: "argon2id" or "pbkdf2"; None for a key
    kdf_ops: int  # Argon2id's passes and memory in bytes; 0 otherwise
    kdf_memory: int


def encrypt_file(cipher: str, key, iv, src: PathLike, dst: PathLike, *, padding: bool = True,
                 backend: str = "auto", threads: int = 0,
                 progress: Optional[ProgressCallback] = None) -> JobStats:
    """Encrypts the file ``src`` into ``dst``, byte-identical to ``openssl enc
    -<cipher> -K <key> -iv <iv> [-nopad]``. Raises IOFailure (an OSError)
    when a file cannot be read or written, and leaves no ``dst`` behind."""
    return _crypt_file(_native.ENCRYPT, cipher, key, iv, src, dst, padding, backend, threads, progress)


def decrypt_file(cipher: str, key, iv, src: PathLike, dst: PathLike, *, padding: bool = True,
                 backend: str = "auto", threads: int = 0,
                 progress: Optional[ProgressCallback] = None) -> JobStats:
    """Decrypts the file ``src`` into ``dst``; the inverse of
    :func:`encrypt_file`. A wrong key with padding on raises BadDecrypt."""
    return _crypt_file(_native.DECRYPT, cipher, key, iv, src, dst, padding, backend, threads, progress)


def seal_file(src: PathLike, dst: PathLike, *, key=None, passphrase: Union[str, bytes, None] = None,
              aead: str = "aes-256-gcm", chunk_size: int = _native.SEAL_DEFAULT_CHUNK_BYTES,
              kdf: Optional[str] = None, kdf_ops: Optional[int] = None, kdf_memory: Optional[int] = None,
              iterations: Optional[int] = None, digest: str = "sha256", backend: str = "auto", threads: int = 0,
              progress: Optional[ProgressCallback] = None) -> JobStats:
    """Seals the file ``src`` into ``dst`` in the sealed-file format.

    Give exactly one secret: ``key``, random bytes of the AEAD's key length
    (one key may seal any number of files: each file's key is derived from
    it and the file's own random salt), or ``passphrase`` (an empty one is
    refused). A passphrase goes through ``kdf``: ``"argon2id"``, the default,
    with ``kdf_ops`` passes over ``kdf_memory`` bytes (libsodium's MODERATE
    preset unless given), or ``"pbkdf2"`` with ``iterations`` and
    ``digest``; giving ``iterations`` alone chooses PBKDF2, as ``-iter``
    does for ``warpcrypt seal``. The KDF and its costs are stored in the
    header. ``chunk_size`` is the plaintext per authenticated chunk, a power
    of two from 4 KiB to 1 GiB. A value out of range, zero included, raises
    InvalidArgument; it never stands for the default.
    """
    key_source, secret = _secret(key, passphrase)
    kdf = kdf if kdf is not None else "pbkdf2" if iterations is not None else "argon2id"
    if kdf not in _KDFS:
        raise InvalidArgument(f"kdf must be 'argon2id' or 'pbkdf2', not {kdf!r}")
    if kdf == "argon2id" and iterations is not None:
        raise InvalidArgument("iterations are PBKDF2's: Argon2id takes kdf_ops and kdf_memory")
    if kdf == "pbkdf2" and (kdf_ops is not None or kdf_memory is not None):
        raise InvalidArgument("kdf_ops and kdf_memory are Argon2id's, not PBKDF2's")
    return JobStats(*_native.seal_file(
        _path(src), _path(dst), key_source, secret, aead, chunk_size, _KDFS[kdf],
        _native.SEAL_DEFAULT_ARGON2_OPS if kdf_ops is None else kdf_ops,
        _native.SEAL_DEFAULT_ARGON2_MEMORY if kdf_memory is None else kdf_memory,
        _native.SEAL_DEFAULT_ITERATIONS if iterations is None else iterations,
        digest, _table.backend_value(backend), threads, progress))


def open_file(src: PathLike, dst: PathLike, *, key=None, passphrase: Union[str, bytes, None] = None,
              offset: int = 0, length: Optional[int] = None,
              max_iterations: int = _native.OPEN_DEFAULT_MAX_ITERATIONS,
              max_kdf_ops: int = _native.OPEN_DEFAULT_MAX_ARGON2_OPS,
              max_kdf_memory: int = _native.OPEN_DEFAULT_MAX_ARGON2_MEMORY, backend: str = "auto", threads: int = 0,
              progress: Optional[ProgressCallback] = None) -> JobStats:
    """Opens the sealed file ``src`` into ``dst``, with the secret it was
    sealed with. Every byte written has been authenticated; on any failure
    (InvalidTag, naming the first chunk that failed; FormatError for a file
    that is not sealed or a damaged header) no ``dst`` is left behind.

    ``offset`` and ``length`` select plaintext bytes ``[offset, offset +
    length)``, cut at the end of the file; only the chunks holding them are
    read and authenticated, the final chunk included whenever the range
    reaches the end, so a truncated file fails.

    A passphrase file whose header asks for more than ``max_iterations``
    PBKDF2 iterations, or more than ``max_kdf_ops`` Argon2id passes or
    ``max_kdf_memory`` bytes, raises FormatError before the KDF runs: the
    header is not yet authenticated, and a forged cost must not take minutes
    or gigabytes. Raise them only for a file you expect to need it.
    """
    key_source, secret = _secret(key, passphrase)
    if offset < 0 or (length is not None and length < 0):
        raise InvalidArgument("offset and length must not be negative")
    return JobStats(*_native.open_file(_path(src), _path(dst), key_source, secret, offset,
                                       (1 << 64) - 1 if length is None else length, max_iterations,
                                       max_kdf_ops, max_kdf_memory, _table.backend_value(backend), threads,
                                       progress))


def sealed_info(path: PathLike) -> SealedInfo:
    """Reads and checks a sealed file's header (FormatError if it is not
    one). Needs no secret: the header is public, only authenticated."""
    aead, key_source, *rest, kdf, kdf_ops, kdf_memory = _native.sealed_info(_path(path))
    kdf_name = next((name for name, value in _KDFS.items() if value == kdf), None)
    return SealedInfo(aead, "passphrase" if key_source == _native.SEAL_PASSPHRASE else "key", *rest, kdf_name,
                      kdf_ops, kdf_memory)


def _crypt_file(direction, cipher, key, iv, src, dst, padding, backend, threads, progress) -> JobStats:
    return JobStats(*_native.crypt_file(direction, cipher, key, iv, _path(src), _path(dst), padding,
                                        _table.backend_value(backend), threads, progress))


def _path(path: PathLike) -> str:
    path = os.fspath(path)
    if not isinstance(path, str):
        raise TypeError("paths must be str or os.PathLike[str]")
    # The library takes C strings, which would end at the NUL and name
    # another file; open() refuses such paths the same way.
    if "\0" in path:
        raise ValueError("embedded null byte")
    return path


def _secret(key, passphrase) -> tuple[int, object]:
    if (key is None) == (passphrase is None):
        raise InvalidArgument("give exactly one of key= and passphrase=")
    if key is not None:
        return _native.SEAL_KEY, key
    return _native.SEAL_PASSPHRASE, passphrase.encode() if isinstance(passphrase, str) else passphrase
