"""Sealed data as binary file objects: :class:`SealedWriter` seals what is
written to it into any binary stream or file, :class:`SealedReader` opens
it again, so whatever writes to or reads from a file object (``pickle``,
``numpy.save``, ``torch.save``, ``safetensors``) works on sealed data.

Both move bytes only: the format (header, key derivation, each chunk's
nonce, associated data and lengths, the last-chunk rule) is the C library's
(``wc_sealed_stream``), and their output is the sealed-file format of
docs/format.md, which ``warpcrypt open`` and :func:`warpcrypt.open_file`
read.
"""

from __future__ import annotations

import io
import os
from types import TracebackType
from typing import IO, Optional, TypeGuard, Union

from warpcrypt import _native, _table
from warpcrypt._typing import PathLike, Secret
from warpcrypt.exceptions import InvalidArgument

__all__ = ["SealedReader", "SealedWriter"]


def secret_of(key: Optional[Secret], passphrase: Union[str, bytes, None]) -> tuple[int, Secret]:
    """The library's key source and the secret's bytes, from exactly one of
    ``key=`` and ``passphrase=``."""
    if (key is None) == (passphrase is None):
        raise InvalidArgument("give exactly one of key= and passphrase=")
    if key is not None:
        return _native.SEAL_KEY, key
    assert passphrase is not None
    return _native.SEAL_PASSPHRASE, passphrase.encode() if isinstance(passphrase, str) else passphrase


# The passphrase KDFs by their names in this API and the CLI.
KDFS = {"argon2id": _native.SEAL_ARGON2ID, "pbkdf2": _native.SEAL_PBKDF2}


def kdf_arguments(passphrase: bool, kdf: Optional[str], kdf_ops: Optional[int], kdf_memory: Optional[int],
                  iterations: Optional[int], digest: Optional[str]) -> tuple[int, int, int, int, str]:
    """(kdf, passes, memory, iterations, digest) for the library from a
    seal's options: Argon2id unless ``kdf`` says otherwise or ``iterations``
    alone is given (as ``-iter`` chooses PBKDF2 for ``warpcrypt seal``).
    A passphrase's KDF refuses the other KDF's costs; ``digest`` is
    PBKDF2's or a key's HKDF's, so Argon2id refuses it too."""
    kdf = kdf if kdf is not None else "pbkdf2" if iterations is not None else "argon2id"
    if kdf not in KDFS:
        raise InvalidArgument(f"kdf must be 'argon2id' or 'pbkdf2', not {kdf!r}")
    if passphrase and kdf == "argon2id" and (iterations is not None or digest is not None):
        raise InvalidArgument("iterations and digest are PBKDF2's: Argon2id takes kdf_ops and kdf_memory")
    if passphrase and kdf == "pbkdf2" and (kdf_ops is not None or kdf_memory is not None):
        raise InvalidArgument("kdf_ops and kdf_memory are Argon2id's, not PBKDF2's")
    return (KDFS[kdf],
            _native.SEAL_DEFAULT_ARGON2_OPS if kdf_ops is None else kdf_ops,
            _native.SEAL_DEFAULT_ARGON2_MEMORY if kdf_memory is None else kdf_memory,
            _native.SEAL_DEFAULT_ITERATIONS if iterations is None else iterations,
            "sha256" if digest is None else digest)


def is_path(target: object) -> TypeGuard[PathLike]:
    return isinstance(target, (str, os.PathLike))


def _name(target: object) -> str:
    if is_path(target):
        return os.fsdecode(os.fspath(target))
    return str(getattr(target, "name", None) or repr(target))


# The most one read asks a stream for: the header's chunk size is not
# authenticated until a chunk opens, and a read of a forged 1 GiB chunk must
# not allocate it before that many bytes arrive.
_READ_STEP = 1 << 20


def _read_exactly(stream: IO[bytes], size: int) -> bytes:
    """Up to `size` bytes, fewer only at the end of the stream (a raw stream
    may return less per call)."""
    pieces = []
    while size > 0:
        piece = stream.read(min(size, _READ_STEP))
        if not piece:
            break
        pieces.append(piece)
        size -= len(piece)
    return b"".join(pieces)


class SealedWriter(io.RawIOBase):
    """A write-only binary file that seals what is written to it.

    `target` is a path, written atomically (a temporary file beside it,
    renamed over it when the writer closes, removed if the ``with`` block
    raises or a write fails), or any binary stream open for writing, which
    receives the header at once and each chunk as it fills, and is left open.

    Give exactly one secret: ``key`` (the AEAD's key length; each file's key
    is derived from it and a random salt) or ``passphrase`` (through `kdf`,
    `kdf_ops` and `kdf_memory`, or `iterations` and `digest`, as for
    :func:`warpcrypt.seal_file`). `aead`, `chunk_size`: as for
    :func:`warpcrypt.seal_file`. `backend` "gpu" seals the chunks, one at a
    time, on the first CUDA device.

    The last chunk is sealed when the writer closes: close it (``with``)
    before the data is read. A writer collected unclosed seals no last
    chunk and, for a path, leaves no file: a part must not pass for the
    whole. ``tell()`` is the plaintext bytes written.
    """

    def __init__(self, target: Union[PathLike, IO[bytes]], *, key: Optional[Secret] = None,
                 passphrase: Union[str, bytes, None] = None, aead: str = "aes-256-gcm",
                 chunk_size: int = _native.SEAL_DEFAULT_CHUNK_BYTES, kdf: Optional[str] = None,
                 kdf_ops: Optional[int] = None, kdf_memory: Optional[int] = None,
                 iterations: Optional[int] = None, digest: Optional[str] = None, backend: str = "auto") -> None:
        super().__init__()
        key_source, secret = secret_of(key, passphrase)
        self.name = _name(target)
        self._stream, header = _native.SealedStream.seal(
            self.name, key_source, secret, aead, chunk_size,
            *kdf_arguments(passphrase is not None, kdf, kdf_ops, kdf_memory, iterations, digest),
            _table.backend_value(backend))
        self._output: Optional[_native.AtomicOutput] = None
        if isinstance(target, (str, os.PathLike)):
            self._output = _native.AtomicOutput(self.name)
            self._file: IO[bytes] = open(self._output.fd, "wb", buffering=0, closefd=False)
        else:
            self._file = target
        self._pending = bytearray()
        self._chunks = 0
        self._plaintext = 0
        self._failed = False
        self.bytes_out = 0
        self._emit(header)

    @property
    def chunk_size(self) -> int:
        """Plaintext bytes per sealed chunk."""
        return self._stream.chunk_size

    def writable(self) -> bool:
        return True

    def tell(self) -> int:
        self._checkClosed()
        return self._plaintext

    def write(self, data: object) -> int:
        self._checkClosed()
        view = memoryview(data).cast("B")  # type: ignore[arg-type]
        self._pending += view
        self._plaintext += len(view)
        # A full chunk is sealed once a byte beyond it arrives: only then is
        # it known not to be the last.
        chunk = self.chunk_size
        full = (len(self._pending) - 1) // chunk if self._pending else 0
        if full:
            with memoryview(self._pending) as pending:
                for index in range(full):
                    self._seal(pending[index * chunk:(index + 1) * chunk], last=False)
            del self._pending[:full * chunk]
        return len(view)

    def close(self) -> None:
        """Seals the last chunk and, for a path, puts the file in place."""
        if self.closed:
            return
        try:
            if not self._failed:
                self._seal(self._pending, last=True)
                self._file.flush()
                if self._output is not None:
                    self._file.close()
                    self._output.commit()
        finally:
            self._pending.clear()
            self._discard()
            super().close()

    def __del__(self) -> None:
        # Collected without close(): whatever was written may be a part, and
        # sealing its end would make the part pass for the whole.
        if hasattr(self, "_file") and not self.closed:
            self._failed = True
            self.close()

    def __exit__(self, kind: Optional[type[BaseException]], value: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> None:
        if kind is not None:
            # What was written so far is no whole file: never finish it.
            self._failed = True
        self.close()

    def _discard(self) -> None:
        if self._output is not None:
            self._file.close()
            self._output.discard()

    def _seal(self, plaintext: Union[bytearray, memoryview], last: bool) -> None:
        self._emit(self._stream.seal_chunk(self._chunks, last, plaintext))
        self._chunks += 1

    def _emit(self, data: bytes) -> None:
        try:
            view = memoryview(data)
            while view:
                written = self._file.write(view)
                # A raw stream may take part; a non-blocking one may take none.
                if written is None or written == 0:
                    raise BlockingIOError(f"{self.name}: the stream took no bytes")
                view = view[written:]
            self.bytes_out += len(data)
        except BaseException:
            self._failed = True
            raise


class SealedReader(io.RawIOBase):
    """A read-only binary file of the plaintext a sealed file holds.

    `source` is a path or a binary stream open for reading, positioned at
    the header; a stream is left open. Give the secret it was sealed with
    (``key`` or ``passphrase``); `max_iterations`, `max_kdf_ops` and
    `max_kdf_memory` as for :func:`warpcrypt.open_file`.

    Each chunk is authenticated before any of its bytes is returned, and
    only the chunks read are: a wrong secret or a damaged chunk raises
    InvalidTag (FormatError for a damaged header or an impossible length)
    from the read that reaches it. A read that reaches the end opens the
    final chunk with the last-chunk flag, so a file cut at a chunk boundary
    raises there, as ``warpcrypt open`` does.

    A seekable source gives a seekable reader: ``seek`` anywhere and only
    the chunks holding what is read are opened. A pipe or socket is read in
    order.
    """

    def __init__(self, source: Union[PathLike, IO[bytes]], *, key: Optional[Secret] = None,
                 passphrase: Union[str, bytes, None] = None,
                 max_iterations: int = _native.OPEN_DEFAULT_MAX_ITERATIONS,
                 max_kdf_ops: int = _native.OPEN_DEFAULT_MAX_ARGON2_OPS,
                 max_kdf_memory: int = _native.OPEN_DEFAULT_MAX_ARGON2_MEMORY, backend: str = "auto") -> None:
        super().__init__()
        key_source, secret = secret_of(key, passphrase)
        self.name = _name(source)
        self._owned = isinstance(source, (str, os.PathLike))
        self._file: IO[bytes] = open(source, "rb") if isinstance(source, (str, os.PathLike)) else source
        try:
            self._start = self._file.tell() if self._file.seekable() else 0
            header = _read_exactly(self._file, _native.SEAL_HEADER_LEN)
            self._stream = _native.SealedStream.open(self.name, header, key_source, secret, max_iterations,
                                                     max_kdf_ops, max_kdf_memory, _table.backend_value(backend))
            self._seekable = self._file.seekable()
            self._length: Optional[int] = None  # plaintext bytes, where the source's size says
            self._chunks: Optional[int] = None
            if self._seekable:
                body = self._file.seek(0, io.SEEK_END) - self._start - _native.SEAL_HEADER_LEN
                self._chunks, self._length = self._stream.layout(body)
        except BaseException:
            if self._owned:
                self._file.close()
            raise
        self._position = 0
        self._cached_index = -1
        self._cached = b""
        self._cached_last = False
        self._ended = False  # the final chunk has been authenticated
        self._ahead = b""  # a stream's first byte past the chunk read last

    @property
    def chunk_size(self) -> int:
        """Plaintext bytes per sealed chunk."""
        return self._stream.chunk_size

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return self._seekable

    def tell(self) -> int:
        self._checkClosed()
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        self._checkClosed()
        if not self._seekable:
            raise io.UnsupportedOperation(f"{self.name}: a sealed stream that is not seekable is read in order")
        assert self._length is not None
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self._length}.get(whence)
        if base is None:
            raise ValueError(f"invalid whence ({whence}, should be 0, 1 or 2)")
        if base + offset < 0:
            raise ValueError(f"negative seek position {base + offset}")
        self._position = base + offset
        return self._position

    def readinto(self, buffer: object) -> int:
        self._checkClosed()
        target = memoryview(buffer).cast("B")  # type: ignore[arg-type]
        done = 0
        while done < len(target):
            piece = self._peek_at(self._position, len(target) - done)
            if not piece:
                break
            target[done:done + len(piece)] = piece
            done += len(piece)
            self._position += len(piece)
        return done

    def readall(self) -> bytes:
        pieces: list[bytes] = []
        while True:
            piece = self._peek_at(self._position, 1 << 62)
            if not piece:
                return b"".join(pieces)
            pieces.append(bytes(piece))
            self._position += len(piece)

    def peek(self, size: int = 0) -> bytes:
        """Bytes from the current position without moving it: the rest of
        the chunk it is in (at least one byte unless at the end)."""
        self._checkClosed()
        return bytes(self._peek_at(self._position, max(size, 1 << 62)))

    def close(self) -> None:
        if not self.closed and getattr(self, "_owned", False):
            self._file.close()
        self._cached = b""
        super().close()

    def _peek_at(self, position: int, size: int) -> memoryview:
        """Up to `size` authenticated bytes at `position`, from one chunk; empty
        at the end, once the final chunk has authenticated."""
        chunk = self.chunk_size
        index = position // chunk
        if self._length is not None and position >= self._length:
            # Even a read past the end authenticates the final chunk, as the
            # library does for an empty range: a cut file must not read as a
            # shorter whole one.
            assert self._chunks is not None
            if not self._ended:
                self._load(self._chunks - 1)
            return memoryview(b"")
        if index != self._cached_index:
            if self._ended and not self._seekable:
                return memoryview(b"")
            self._load(index)
        begin = position - index * chunk
        if begin >= len(self._cached):
            return memoryview(b"")  # the end of a stream's final chunk
        return memoryview(self._cached)[begin:begin + size]

    def _load(self, index: int) -> None:
        sealed_size = self.chunk_size + _native.SEAL_TAG_LEN
        if self._seekable:
            assert self._chunks is not None
            self._file.seek(self._start + _native.SEAL_HEADER_LEN + index * sealed_size)
            data = _read_exactly(self._file, sealed_size)
            last = index == self._chunks - 1
        else:
            if index != self._cached_index + 1:
                raise io.UnsupportedOperation(f"{self.name}: a sealed stream that is not seekable is read in order")
            # One byte beyond the chunk says whether it is the last.
            data = self._ahead + _read_exactly(self._file, sealed_size + 1 - len(self._ahead))
            last = len(data) <= sealed_size
            data, self._ahead = (data, b"") if last else (data[:sealed_size], data[sealed_size:])
        self._cached = b""
        self._cached = self._stream.open_chunk(index, last, data)
        self._cached_index = index
        self._ended = self._ended or last
