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

import contextlib
import contextvars
import io
import os
import time
from dataclasses import dataclass
from typing import IO, Callable, Iterator, Optional, Protocol, Sequence, Union

from warpcrypt import _native, _table
from warpcrypt._sealed_io import KDFS, SealedReader, SealedWriter, is_path, kdf_arguments, secret_of
from warpcrypt._typing import PathLike, Secret
from warpcrypt.exceptions import Cancelled, InvalidArgument

# A path, or a binary stream: seal_file and open_file take either on each side.
PathOrStream = Union[PathLike, IO[bytes]]
# progress(done_bytes, total_bytes); a true result cancels the job, which
# then raises warpcrypt.Cancelled. It runs on the library's worker threads.
ProgressCallback = Callable[[int, int], object]

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


def encrypt_file(cipher: str, key: Secret, iv: Optional[Secret], src: PathLike, dst: PathLike, *,
                 padding: bool = True,
                 backend: str = "auto", threads: int = 0,
                 progress: Optional[ProgressCallback] = None) -> JobStats:
    """Encrypts the file ``src`` into ``dst``, byte-identical to ``openssl enc
    -<cipher> -K <key> -iv <iv> [-nopad]``. A file that cannot be read or
    written raises the OSError subclass its errno picks (FileNotFoundError,
    PermissionError, ...; also an IOFailure) naming that file, and no
    ``dst`` is left behind."""
    return _crypt_file(_native.ENCRYPT, cipher, key, iv, src, dst, padding, backend, threads, progress)


def decrypt_file(cipher: str, key: Secret, iv: Optional[Secret], src: PathLike, dst: PathLike, *,
                 padding: bool = True,
                 backend: str = "auto", threads: int = 0,
                 progress: Optional[ProgressCallback] = None) -> JobStats:
    """Decrypts the file ``src`` into ``dst``; the inverse of
    :func:`encrypt_file`. A wrong key with padding on raises BadDecrypt."""
    return _crypt_file(_native.DECRYPT, cipher, key, iv, src, dst, padding, backend, threads, progress)


def seal_file(src: PathOrStream, dst: PathOrStream, *, key: Optional[Secret] = None,
              passphrase: Union[str, bytes, None] = None,
              aead: str = "aes-256-gcm", chunk_size: int = _native.SEAL_DEFAULT_CHUNK_BYTES,
              kdf: Optional[str] = None, kdf_ops: Optional[int] = None, kdf_memory: Optional[int] = None,
              iterations: Optional[int] = None, digest: Optional[str] = None, backend: str = "auto", threads: int = 0,
              progress: Optional[ProgressCallback] = None) -> JobStats:
    """Seals the file ``src`` into ``dst`` in the sealed-file format.

    Each of ``src`` and ``dst`` is a path or a binary stream (a stream is
    read to its end, or written, and left open). Path to path runs on the
    library's parallel engine; a stream on either side goes through
    :class:`SealedWriter` in this thread (``threads`` is then unused).

    Give exactly one secret: ``key``, random bytes of the AEAD's key length
    (one key may seal any number of files: each file's key is derived from
    it and the file's own random salt), or ``passphrase`` (an empty one is
    refused). A passphrase goes through ``kdf``: ``"argon2id"``, the default,
    with ``kdf_ops`` passes over ``kdf_memory`` bytes (libsodium's MODERATE
    preset unless given), or ``"pbkdf2"`` with ``iterations`` and
    ``digest`` (SHA-256 unless given); giving ``iterations`` alone chooses
    PBKDF2, as ``-iter`` does for ``warpcrypt seal``. A key goes through
    HKDF with ``digest``. The KDF and its costs are stored in the header. ``chunk_size`` is the plaintext per authenticated chunk, a power
    of two from 4 KiB to 1 GiB. A value out of range, zero included, raises
    InvalidArgument; it never stands for the default.
    """
    if not (is_path(src) and is_path(dst)):
        started = time.perf_counter()
        with _input(src) as source, SealedWriter(dst, key=key, passphrase=passphrase, aead=aead,
                                                 chunk_size=chunk_size, kdf=kdf, kdf_ops=kdf_ops,
                                                 kdf_memory=kdf_memory, iterations=iterations, digest=digest,
                                                 backend=backend) as sealed:
            done = _copy(source, sealed, sealed.chunk_size, progress)
        return _stream_stats(done, sealed.bytes_out, started, backend)
    key_source, secret = secret_of(key, passphrase)
    return JobStats(*_native.seal_file(_path(src), _path(dst), key_source, secret, aead, chunk_size,
                                       *kdf_arguments(passphrase is not None, kdf, kdf_ops, kdf_memory, iterations,
                                                      digest),
                                       _table.backend_value(backend), threads, progress))


def open_file(src: PathOrStream, dst: PathOrStream, *, key: Optional[Secret] = None,
              passphrase: Union[str, bytes, None] = None,
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

    ``src`` and ``dst`` may be binary streams, as for :func:`seal_file`
    (through :class:`SealedReader`); a stream ``dst`` then holds the chunks
    authenticated before a failure, as a pipe would. A range needs a
    seekable ``src``.
    """
    if offset < 0 or (length is not None and length < 0):
        raise InvalidArgument("offset and length must not be negative")
    if not (is_path(src) and is_path(dst)):
        started = time.perf_counter()
        with SealedReader(src, key=key, passphrase=passphrase, max_iterations=max_iterations,
                          max_kdf_ops=max_kdf_ops, max_kdf_memory=max_kdf_memory,
                          backend=backend) as sealed, _output(dst, reads=[src]) as target:
            if offset or length is not None:
                if not sealed.seekable():
                    raise InvalidArgument(f"{sealed.name}: a range needs a seekable sealed file")
                sealed.seek(offset)
            done = _copy(sealed, target, sealed.chunk_size, progress, length)
            if length == 0:
                # An empty range still opens the final chunk, as the library does.
                sealed.seek(0, io.SEEK_END)
                sealed.read(1)
        return _stream_stats(done, done, started, backend)
    key_source, secret = secret_of(key, passphrase)
    return JobStats(*_native.open_file(_path(src), _path(dst), key_source, secret, offset,
                                       (1 << 64) - 1 if length is None else length, max_iterations,
                                       max_kdf_ops, max_kdf_memory, _table.backend_value(backend), threads,
                                       progress))


def sealed_info(path: PathLike) -> SealedInfo:
    """Reads and checks a sealed file's header (FormatError if it is not
    one). Needs no secret: the header is public, only authenticated."""
    (aead, key_source, digest, iterations, chunk_size, chunks, plaintext_len, salt, nonce_prefix, kdf, kdf_ops,
     kdf_memory) = _native.sealed_info(_path(path))
    kdf_name = next((name for name, value in KDFS.items() if value == kdf), None)
    return SealedInfo(aead, "passphrase" if key_source == _native.SEAL_PASSPHRASE else "key", digest, iterations,
                      chunk_size, chunks, plaintext_len, salt, nonce_prefix, kdf_name, kdf_ops, kdf_memory)


def _crypt_file(direction: int, cipher: str, key: Secret, iv: Optional[Secret], src: PathLike, dst: PathLike,
                padding: bool, backend: str, threads: int, progress: Optional[ProgressCallback]) -> JobStats:
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


class _Borrowed:
    """A caller's stream in a ``with`` block that leaves it open."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream

    def __enter__(self) -> IO[bytes]:
        return self.stream

    def __exit__(self, *exc: object) -> None:
        pass


def _is_path(place: object) -> bool:
    """A path rather than a caller's stream (file object)."""
    return isinstance(place, (str, os.PathLike))


def _input(src: PathOrStream) -> Union[IO[bytes], _Borrowed]:
    return open(src, "rb") if _is_path(src) else _Borrowed(src)  # type: ignore[arg-type]


# Descriptors of files a command read for its work (its key files), which
# no output written inside `reading()` may be; per thread and task.
_files_read: contextvars.ContextVar[tuple[int, ...]] = contextvars.ContextVar("warpcrypt_files_read", default=())


@contextlib.contextmanager
def reading(*streams: object) -> Iterator[None]:
    """Within the block, no output path is any file `streams` (open files)
    are open on, as the library refuses an output that is a job's input: for
    a command that reads key files before the job runs."""
    token = _files_read.set(_files_read.get() + tuple(_descriptors(streams)))
    try:
        yield
    finally:
        _files_read.reset(token)


def _output(dst: PathOrStream, reads: Sequence[object] = (), *, secret: bool = False) -> Union[_Borrowed, "_AtomicFile"]:
    """`dst` to write; a path may not be any of the files `reads` (streams
    with descriptors) are open on, nor one read for the command (reading()).
    A `secret` (a key) stays mode 0600 when complete."""
    if not _is_path(dst):
        return _Borrowed(dst)  # type: ignore[arg-type]
    return _AtomicFile(_path(dst), [*_descriptors(reads), *_files_read.get()], secret)  # type: ignore[arg-type]


def _descriptors(streams: Sequence[object]) -> list[int]:
    """The descriptors of those of `streams` that have one."""
    found = []
    for stream in streams:
        try:
            found.append(stream.fileno())  # type: ignore[attr-defined]
        except (AttributeError, OSError, ValueError):
            continue
    return found


class _AtomicFile:
    """A path written as the library writes every output: beside the
    target, renamed over it only when the block ends without an exception.
    `inputs`: descriptors of the files read for it, which it may not be;
    `secret`: a key, mode 0600 once complete."""

    def __init__(self, path: str, inputs: Sequence[int] = (), secret: bool = False) -> None:
        self._output = _native.AtomicOutput(path, list(inputs), secret)
        self._file = open(self._output.fd, "wb", closefd=False)

    def __enter__(self) -> IO[bytes]:
        return self._file

    def __exit__(self, kind: object, *rest: object) -> None:
        try:
            if kind is None:
                self._file.close()
                self._output.commit()
        finally:
            self._file.close()
            self._output.discard()


class _Source(Protocol):
    def read(self, size: int = -1, /) -> bytes | None: ...


class _Sink(Protocol):
    def write(self, data: bytes, /) -> int | None: ...


def _copy(source: _Source, target: _Sink, block: int, progress: Optional[ProgressCallback],
          limit: Optional[int] = None) -> int:
    """Copies `source` to `target` a block at a time, up to `limit` bytes,
    calling `progress` (done, 0) after each block; a true answer cancels."""
    done = 0
    while limit is None or done < limit:
        piece = source.read(block if limit is None else min(block, limit - done))
        if not piece:
            break
        target.write(piece)
        done += len(piece)
        if progress is not None and progress(done, 0):
            raise Cancelled("cancelled by the progress callback")
    return done


def _stream_stats(bytes_in: int, bytes_out: int, started: float, backend: str) -> JobStats:
    on_gpu = backend == "gpu"
    return JobStats(bytes_in, bytes_out, time.perf_counter() - started, 0 if on_gpu else bytes_in,
                    bytes_in if on_gpu else 0)
