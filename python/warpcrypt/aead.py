"""Authenticated encryption with associated data, named and shaped as in
pyca/cryptography's ``cryptography.hazmat.primitives.ciphers.aead``:
:class:`AESGCM` (AES-128/192/256-GCM, NIST SP 800-38D) and
:class:`ChaCha20Poly1305` (RFC 8439).

``encrypt`` returns the ciphertext with the 16-byte tag appended, and
``decrypt`` takes it that way, byte for byte as pyca/cryptography and OpenSSL
do, so each opens what the other sealed. A wrong key, nonce or associated
data, or any changed bit, raises :class:`~warpcrypt.InvalidTag`, and no
plaintext is released.

warpcrypt adds, as keyword arguments:

* ``backend`` and ``threads`` on the constructors, as for
  :class:`~warpcrypt.Cipher`; ``tag_length`` on :class:`AESGCM`.
* ``encrypt_into`` and ``decrypt_into`` (pyca/cryptography's, which attach
  the tag) also take ``tag=``, an array of its own for the tag, and work on
  GPU arrays (CuPy, PyTorch CUDA tensors, anything with ``__dlpack__`` or
  ``__cuda_array_interface__``) in place, on the caller's current stream or
  ``stream=``.
* ``encrypt_batch`` and ``decrypt_batch`` seal or open many messages under
  one key in one library call, spread over the CPU's threads or in one GPU
  kernel.

A key must never seal two messages under the same nonce.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from warpcrypt import _native, _streams, _table
from warpcrypt._random import random_bytes
from warpcrypt._typing import overload
from warpcrypt.exceptions import InvalidKey, InvalidTag

__all__ = ["AESGCM", "ChaCha20Poly1305", "BatchInvalidTag"]



class AeadSizes(NamedTuple):
    """An AEAD of the library's table and its sizes in bytes. Plain values:
    module state holds no extension object (see exceptions.Status)."""

    name: str
    key_size: int
    nonce_size: int  # the recommended one
    max_message_size: int  # the longest message one nonce may seal


_INFOS: dict[str, AeadSizes] = {row[0]: AeadSizes(*row) for row in _native.aead_table()}


class BatchInvalidTag(InvalidTag):
    """``decrypt_batch``: some messages failed authentication. ``failed``
    lists their indices, in order. With ``bufs=``, the plaintext of those
    messages is zeroed in their bufs, and the others' bufs hold theirs."""

    def __init__(self, failed: Sequence[int]) -> None:
        self.failed: tuple[int, ...] = tuple(failed)
        super().__init__(f"authentication failed for {len(self.failed)} message(s), at indices "
                         f"{', '.join(map(str, self.failed))}")

    def __reduce__(self) -> tuple[type[BatchInvalidTag], tuple[tuple[int, ...]]]:
        # Rebuilt from `failed`, not from the message, when pickled (multiprocessing).
        return type(self), (self.failed,)


def _byte_size(value: object, what: str) -> int:
    try:
        return memoryview(value).nbytes  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{what} must be bytes-like, not {type(value).__name__}") from None


def _list_or_none(items: Sequence[object] | None) -> list[object] | None:
    return None if items is None else list(items)


class _AEAD:
    """What AESGCM and ChaCha20Poly1305 share: a key bound to one AEAD of
    the library's table, held (and wiped when collected) by the extension."""

    def __init__(self, name: str, key: bytes, tag_length: int, backend: str, threads: int) -> None:
        self._name = name
        self._aead = _native.Aead(name, key, tag_length, _table.backend_value(backend), threads)

    @property
    def tag_length(self) -> int:
        """The tag's length in bytes: 16 unless the constructor said otherwise."""
        return self._aead.tag_size

    def encrypt(self, nonce: bytes, data: object, associated_data: bytes | None) -> bytes:
        """Seals `data` (bytes-like, a NumPy array or a CPU tensor) under
        `nonce` and returns the ciphertext with the tag appended.
        `associated_data` is authenticated but not encrypted; None is
        empty. As pyca/cryptography, data or associated data longer than
        2**31 - 1 bytes raises OverflowError (``encrypt_into`` takes up to
        the AEAD's limit)."""
        # The extension checks every argument, the lengths included.
        return self._aead.seal(nonce, data, associated_data, _streams.current)

    def decrypt(self, nonce: bytes, data: object, associated_data: bytes | None) -> bytes:
        """Opens `data`, a ciphertext with its tag appended, and returns the
        plaintext; raises InvalidTag unless the tag matches `nonce`, `data`
        and `associated_data` under this key."""
        return self._aead.open(nonce, data, associated_data, _streams.current)

    def encrypt_into(
        self,
        nonce: bytes,
        data: object,
        associated_data: bytes | None,
        buf: object,
        *,
        tag: object = None,
        stream: object = None,
    ) -> int:
        """Seals `data` into `buf` and returns the bytes written.

        Without `tag`, as pyca/cryptography: `buf` receives the ciphertext
        and then the tag, so it needs ``len(data) + tag_length`` bytes (or
        more: pyca/cryptography insists on exactly that many). With `tag`, an
        array of exactly `tag_length` bytes, `buf` receives the ciphertext
        alone and `tag` the tag. ``buf=data`` works in place with `tag`;
        with the tag attached, pass ``data=buf[:n]``.

        `data`, `buf` and `tag` are all in host memory or all GPU arrays on
        one device. GPU work is queued on `stream` (a ``torch.cuda.Stream``,
        ``cupy.cuda.Stream`` or int ``cudaStream_t``), by default the caller's
        current PyTorch or CuPy stream, and the call returns once it is
        queued, as with :func:`warpcrypt.encrypt`.
        """
        return self._aead.seal_into(nonce, data, associated_data, buf, tag, _streams.handle(stream),
                                    _streams.current)

    def decrypt_into(
        self,
        nonce: bytes,
        data: object,
        associated_data: bytes | None,
        buf: object,
        *,
        tag: object = None,
        stream: object = None,
        verified: object = None,
    ) -> int:
        """Opens `data` into `buf` and returns the plaintext bytes written.

        Without `tag`, as pyca/cryptography: `data` is the ciphertext with
        the tag appended, and `buf` needs ``len(data) - tag_length`` bytes.
        With `tag`, `data` is the ciphertext alone, `buf` needs ``len(data)``
        bytes, and ``buf=data`` works in place. On failure InvalidTag is
        raised and what `buf` received is zeroed.

        GPU arrays: as :meth:`encrypt_into`, except that checking the tag
        means waiting for the stream to get there, so the call returns when
        the work has run. To keep it asynchronous, pass `verified`, an int32
        GPU array: ``verified[0]`` becomes 1 (authentic) or 0 (`buf` zeroed)
        when the stream gets there, and nothing is raised for a failed tag.
        Nothing may read `buf` before that point of the stream.
        """
        return self._aead.open_into(nonce, data, associated_data, buf, tag, verified, _streams.handle(stream),
                                    _streams.current)

    # Without bufs= the results come back as bytes; with them, None.
    @overload
    def encrypt_batch(self, nonces: Sequence[bytes], messages: Sequence[object],
                      associated_data: Sequence[bytes | None] | None = None, *, bufs: None = None,
                      tags: Sequence[object] | None = None, stream: object = None) -> list[bytes]: ...
    @overload
    def encrypt_batch(self, nonces: Sequence[bytes], messages: Sequence[object],
                      associated_data: Sequence[bytes | None] | None = None, *, bufs: Sequence[object],
                      tags: Sequence[object] | None = None, stream: object = None) -> None: ...

    def encrypt_batch(
        self,
        nonces: Sequence[bytes],
        messages: Sequence[object],
        associated_data: Sequence[bytes | None] | None = None,
        *,
        bufs: Sequence[object] | None = None,
        tags: Sequence[object] | None = None,
        stream: object = None,
    ) -> list[bytes] | None:
        """Seals ``messages[i]`` under ``nonces[i]`` with
        ``associated_data[i]`` (None: none for any message), all in one
        library call.

        Without `bufs`, the messages are in host memory, and each comes back
        as :meth:`encrypt` returns it. With `bufs`, each ``bufs[i]`` is
        filled as :meth:`encrypt_into` fills `buf` (with ``tags[i]``, if
        `tags` is given), and None is returned; GPU arrays run in one kernel
        on `stream`. Buffers may not overlap, except ``bufs[i] is
        messages[i]`` with `tags` (in place).
        """
        return self._aead.seal_batch(list(nonces), list(messages), _list_or_none(associated_data),
                                     _list_or_none(bufs), _list_or_none(tags), _streams.handle(stream),
                                     _streams.current)

    @overload
    def decrypt_batch(self, nonces: Sequence[bytes], messages: Sequence[object],
                      associated_data: Sequence[bytes | None] | None = None, *, bufs: None = None,
                      tags: Sequence[object] | None = None, stream: object = None,
                      verified: object = None) -> list[bytes]: ...
    @overload
    def decrypt_batch(self, nonces: Sequence[bytes], messages: Sequence[object],
                      associated_data: Sequence[bytes | None] | None = None, *, bufs: Sequence[object],
                      tags: Sequence[object] | None = None, stream: object = None,
                      verified: object = None) -> None: ...

    def decrypt_batch(
        self,
        nonces: Sequence[bytes],
        messages: Sequence[object],
        associated_data: Sequence[bytes | None] | None = None,
        *,
        bufs: Sequence[object] | None = None,
        tags: Sequence[object] | None = None,
        stream: object = None,
        verified: object = None,
    ) -> list[bytes] | None:
        """Opens what :meth:`encrypt_batch` sealed, all in one library call:
        the plaintexts as a list of bytes, or with `bufs` (and `tags`, for
        detached tags) into those, returning None.

        Every message is opened. If any fails, :class:`BatchInvalidTag` (an
        InvalidTag) is raised, whose ``failed`` names every message that
        failed (one shorter than its tag included), and no list is returned;
        with `bufs`, the failed messages' plaintext is zeroed in their bufs
        and the others' bufs hold theirs.

        GPU arrays wait for the stream, as :meth:`decrypt_into`, unless
        `verified` is given: an int32 GPU array of one verdict per message,
        which the stream fills with 1 or 0, and then nothing is raised for
        failed tags.
        """
        results, failed = self._aead.open_batch(list(nonces), list(messages), _list_or_none(associated_data),
                                                _list_or_none(bufs), _list_or_none(tags), verified,
                                                _streams.handle(stream), _streams.current)
        if failed:
            raise BatchInvalidTag(failed)
        return results

    def encrypt_chunks(self, nonces: object, data: object, chunk_size: int, tags: object, *, buf: object = None,
                       stream: object = None) -> None:
        """Seals `data` cut into messages of `chunk_size` bytes (the last
        one shorter where its length is not a multiple), in place or into
        `buf`: chunk i under the 12-byte nonce ``nonces[12*i:12*i+12]``, its
        tag written to ``tags[t*i:t*i+t]`` (t: the tag length). `nonces` and
        `tags` are arrays of exactly that many bytes, in the same memory as
        `data`. On a GPU every chunk is sealed in one pass queued on
        `stream`, with no work per chunk on the host: the layout of
        encrypted tensors and of chunked files.
        """
        self._aead.seal_chunks(nonces, data, chunk_size, tags, buf, _streams.handle(stream), _streams.current)

    def decrypt_chunks(self, nonces: object, data: object, chunk_size: int, tags: object, *, buf: object = None,
                       stream: object = None, verified: object = None) -> None:
        """Opens what :meth:`encrypt_chunks` sealed. Every chunk is opened;
        if any fails, :class:`BatchInvalidTag` names them, and their
        plaintext is zeroed. GPU arrays wait for the stream, unless
        `verified` is given (an int32 GPU array of one verdict per chunk,
        as in :meth:`decrypt_batch`).
        """
        failed = self._aead.open_chunks(nonces, data, chunk_size, tags, buf, verified, _streams.handle(stream),
                                        _streams.current)
        if failed:
            raise BatchInvalidTag(failed)

    def __repr__(self) -> str:
        return f"<warpcrypt.aead.{type(self).__name__} {self._name}, {self.tag_length}-byte tags>"


class AESGCM(_AEAD):
    """AES-GCM with a 16-, 24- or 32-byte key (AES-128, -192, -256).

    Nonces are 1 to 128 bytes; use 12, which GCM takes as it is (any other
    length is hashed first). pyca/cryptography refuses nonces under 8 bytes;
    warpcrypt takes the NIST vectors' 1-byte ones.

    `tag_length` (4 to 16, default 16) truncates the tag, as SP 800-38D
    allows: a shorter tag is the 16-byte tag's prefix, and makes forgeries
    easier (SP 800-38D, appendix C), so keep 16 unless a protocol says
    otherwise. `backend` ("auto", "cpu", "gpu", ...: see
    :func:`warpcrypt.backends`) picks where host memory is worked on;
    "auto" keeps it on the CPU. GPU arrays run on their device, under every
    backend but "cpu", which raises BackendUnavailable for them (the
    library's rule for its keys). `threads`: CPU workers, 0 for every core.
    """

    _NAMES_BY_KEY_SIZE: dict[int, str] = {
        info.key_size: info.name for info in _INFOS.values() if info.name.startswith("aes-")
    }

    def __init__(self, key: bytes, *, tag_length: int = 16, backend: str = "auto", threads: int = 0) -> None:
        size = _byte_size(key, "key")
        name = self._NAMES_BY_KEY_SIZE.get(size)
        if name is None:
            sizes = ", ".join(map(str, sorted(self._NAMES_BY_KEY_SIZE)))
            raise InvalidKey(f"AESGCM takes a key of {sizes} bytes, not {size} bytes")
        super().__init__(name, key, tag_length, backend, threads)

    @classmethod
    def generate_key(cls, bit_length: int) -> bytes:
        """A random key of `bit_length` bits: 128, 192 or 256."""
        if not isinstance(bit_length, int):
            raise TypeError(f"bit_length must be an int, not {type(bit_length).__name__}")
        bit_sizes = sorted(8 * size for size in cls._NAMES_BY_KEY_SIZE)
        if bit_length not in bit_sizes:
            raise ValueError(f"bit_length must be one of {', '.join(map(str, bit_sizes))}, not {bit_length}")
        return random_bytes(bit_length // 8)


class ChaCha20Poly1305(_AEAD):
    """ChaCha20-Poly1305 (RFC 8439) with a 32-byte key and 12-byte nonces,
    and 16-byte tags: RFC 8439 defines no shorter ones. `backend` and
    `threads` as for :class:`AESGCM`."""

    _INFO = _INFOS["chacha20-poly1305"]

    def __init__(self, key: bytes, *, backend: str = "auto", threads: int = 0) -> None:
        size = _byte_size(key, "key")
        if size != self._INFO.key_size:
            raise InvalidKey(f"ChaCha20Poly1305 takes a {self._INFO.key_size}-byte key, not {size} bytes")
        super().__init__(self._INFO.name, key, _native.AEAD_MAX_TAG_SIZE, backend, threads)

    @classmethod
    def generate_key(cls) -> bytes:
        """A random 32-byte key."""
        return random_bytes(cls._INFO.key_size)
