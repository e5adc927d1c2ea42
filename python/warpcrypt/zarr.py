"""Encrypted Zarr arrays: an AEAD codec, ``"warpcrypt.aead"``, for
zarr-python 3 (a bytes-to-bytes codec) and for numcodecs (zarr format 2
arrays, and anything else that takes a numcodecs codec), under one id.

Each chunk is sealed with AES-GCM or ChaCha20-Poly1305 under a random
12-byte nonce, with associated data that names the chunk's key in the store
(the array's path and the chunk's coordinates, ``"group/array/c/0/1"``): a
chunk copied to another position or into another array fails to open. A
chunk on disk is::

    version (1 byte, 1) || nonce (12 bytes) || ciphertext || tag (16 bytes)

The store's metadata names only the AEAD and a ``key_id``; the key comes
from the caller (``key=``, held in memory, never serialised or pickled), or
from :func:`register_key` / :func:`set_key_provider` by its ``key_id``, in
every process that reads or writes (each Dask worker too).

zarr-python 3 does not tell a codec where its chunk goes, so importing this
module makes zarr's codec pipeline :class:`CodecPipeline`, which does what
zarr's own does (``BatchedCodecPipeline``) and also hands each chunk's key
to the codec. A codec asked to work without a chunk key refuses: binding the
position is the point. Outside zarr, :func:`chunk_key` names the position
for a numcodecs codec's ``encode``/``decode``.

Random nonces bound one key to about 2**32 chunk writes (NIST SP 800-38D,
8.3); use a key per dataset, and rotate.

With ``zarr.config.enable_gpu()``, chunks are CuPy arrays and are sealed and
opened on their GPU.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, cast

import numcodecs  # type: ignore[import-untyped, unused-ignore]
import numcodecs.abc  # type: ignore[import-untyped, unused-ignore]
import numpy as np
import zarr
import zarr.registry
from zarr.abc.codec import BytesBytesCodec
from zarr.core.array_spec import ArraySpec
from zarr.core.buffer import Buffer
from zarr.core.codec_pipeline import BatchedCodecPipeline

from warpcrypt.aead import AESGCM, ChaCha20Poly1305
from warpcrypt.exceptions import FormatError, InvalidArgument, InvalidKey, InvalidTag

__all__ = ["CODEC_ID", "AeadCodec", "AeadNumcodec", "CodecPipeline", "chunk_key", "register_key",
           "set_key_provider"]

CODEC_ID = "warpcrypt.aead"
_VERSION = 1
_NONCE_LEN = 12
_TAG_LEN = 16
_OVERHEAD = 1 + _NONCE_LEN + _TAG_LEN
_AEADS: dict[str, Callable[[bytes], AESGCM | ChaCha20Poly1305]] = {
    "aes-128-gcm": AESGCM, "aes-256-gcm": AESGCM, "chacha20-poly1305": ChaCha20Poly1305}
_KEY_LENS = {"aes-128-gcm": 16, "aes-256-gcm": 32, "chacha20-poly1305": 32}

# ---- keys --------------------------------------------------------------------

_keys: dict[str, bytes] = {}
_provider: Optional[Callable[[str], bytes]] = None


def register_key(key_id: str, key: bytes) -> None:
    """Makes `key` the key of `key_id` in this process, for every codec whose
    metadata names that key_id and that was not given a key."""
    _keys[key_id] = bytes(key)


def set_key_provider(provider: Optional[Callable[[str], bytes]]) -> None:
    """`provider(key_id)` returns the key of a key_id not registered with
    :func:`register_key` (a key manager's client, say); None removes it."""
    global _provider
    _provider = provider


def _resolve_key(key_id: str, given: Optional[bytes]) -> bytes:
    if given is not None:
        return given
    if key_id in _keys:
        return _keys[key_id]
    if _provider is not None:
        return bytes(_provider(key_id))
    raise InvalidArgument(f"no key for key_id {key_id!r}: pass key=, or call warpcrypt.zarr.register_key or "
                          "set_key_provider in this process")


# ---- the chunk's position ----------------------------------------------------

_chunk_key: contextvars.ContextVar[Optional[str]] = contextvars.ContextVar("warpcrypt_zarr_chunk_key", default=None)


@contextlib.contextmanager
def chunk_key(key: str) -> Iterator[None]:
    """Names the position of the chunks encoded or decoded in this block:
    for numcodecs codecs used outside zarr-python 3 (zarr's pipeline names
    each chunk's store key itself)."""
    token = _chunk_key.set(key)
    try:
        yield
    finally:
        _chunk_key.reset(token)


def _current_chunk_key() -> str:
    key = _chunk_key.get()
    if key is None:
        raise InvalidArgument(f"{CODEC_ID} binds each chunk to its position, and none was named: zarr's codec "
                              "pipeline must be warpcrypt.zarr.CodecPipeline (importing warpcrypt.zarr sets it; "
                              "another codec_pipeline.path was configured after), or wrap the call in "
                              "warpcrypt.zarr.chunk_key(...)")
    return key


def _store_key(getter: object) -> str:
    path = getattr(getter, "path", None)
    if not isinstance(path, str):
        raise InvalidArgument(f"{CODEC_ID}: the chunk's store key is unknown ({type(getter).__name__}); the codec "
                              "cannot run inside a sharding codec")
    return path


class CodecPipeline(BatchedCodecPipeline):
    """zarr's BatchedCodecPipeline, which also names each chunk's store key
    to the codecs that work on it (:func:`chunk_key`)."""

    async def read_batch(self, batch_info: Iterable[Any], out: Any, drop_axes: tuple[int, ...] = ()) -> Any:
        # zarr 3.1 returns nothing here; 3.2 and later a result per chunk
        # (present or missing), which its read() collects: pass them on.
        results: list[Any] = []
        for info in batch_info:
            with chunk_key(_store_key(info[0])):
                results.extend(await cast(Any, super()).read_batch([info], out, drop_axes) or ())
        return tuple(results)

    async def write_batch(self, batch_info: Iterable[Any], value: Any, drop_axes: tuple[int, ...] = ()) -> None:
        for info in batch_info:
            with chunk_key(_store_key(info[0])):
                await super().write_batch([info], value, drop_axes)


zarr.registry.register_pipeline(CodecPipeline)
zarr.config.set({"codec_pipeline.path": f"{CodecPipeline.__module__}.{CodecPipeline.__qualname__}"})

# ---- sealing one chunk -------------------------------------------------------


class _Sealer:
    """An AEAD and key for chunks, and the one rule for their layout."""

    def __init__(self, aead: str, key_id: str, key: Optional[bytes]) -> None:
        if aead not in _AEADS:
            raise InvalidArgument(f"unknown AEAD {aead!r} for {CODEC_ID}: choose from {', '.join(_AEADS)}")
        if key is not None and len(key) != _KEY_LENS[aead]:
            raise InvalidKey(f"{aead} takes a {_KEY_LENS[aead]}-byte key, not {len(key)} bytes")
        self.aead, self.key_id, self._key = aead, key_id, key
        self._bound: Optional[AESGCM | ChaCha20Poly1305] = None

    def _cipher(self) -> AESGCM | ChaCha20Poly1305:
        if self._bound is None:
            key = _resolve_key(self.key_id, self._key)
            if len(key) != _KEY_LENS[self.aead]:
                raise InvalidKey(f"the key of key_id {self.key_id!r} has {len(key)} bytes; {self.aead} takes "
                                 f"{_KEY_LENS[self.aead]}")
            self._bound = _AEADS[self.aead](key)
        return self._bound

    def _associated_data(self, position: str) -> bytes:
        return f"{CODEC_ID} v{_VERSION}\0{self.aead}\0{position}".encode()

    def seal(self, data: Any, position: str) -> Any:
        """`data`: a 1-D uint8 NumPy or CuPy array; the sealed chunk, of the same kind."""
        cipher, aad, nonce = self._cipher(), self._associated_data(position), os.urandom(_NONCE_LEN)
        head = np.frombuffer(bytes([_VERSION]) + nonce, dtype=np.uint8)
        if isinstance(data, np.ndarray):
            return np.concatenate([head, np.frombuffer(cipher.encrypt(nonce, data, aad), dtype=np.uint8)])
        # A GPU array: sealed on its device into the new chunk's own memory.
        xp = _array_module(data)
        sealed = xp.empty(len(data) + _OVERHEAD, dtype=xp.uint8)
        sealed[:len(head)] = xp.asarray(head)
        body = sealed[len(head):len(head) + len(data)]
        cipher.encrypt_into(nonce, data, aad, body, tag=sealed[len(head) + len(data):])
        return sealed

    def open(self, sealed: Any, position: str) -> Any:
        """The plaintext of a sealed chunk, once its tag matched; of the same kind."""
        if len(sealed) < _OVERHEAD:
            raise FormatError(f"{CODEC_ID}: chunk {position!r} is shorter than its nonce and tag")
        head = bytes(sealed[:1 + _NONCE_LEN].tolist()) if not isinstance(sealed, np.ndarray) \
            else sealed[:1 + _NONCE_LEN].tobytes()
        if head[0] != _VERSION:
            raise FormatError(f"{CODEC_ID}: chunk {position!r} has unknown version {head[0]}")
        cipher, aad, nonce = self._cipher(), self._associated_data(position), head[1:]
        try:
            if isinstance(sealed, np.ndarray):
                return np.frombuffer(cipher.decrypt(nonce, sealed[1 + _NONCE_LEN:], aad), dtype=np.uint8)
            xp = _array_module(sealed)
            plain = xp.empty(len(sealed) - _OVERHEAD, dtype=xp.uint8)
            cipher.decrypt_into(nonce, sealed[1 + _NONCE_LEN:len(sealed) - _TAG_LEN], aad, plain,
                                tag=sealed[len(sealed) - _TAG_LEN:])
            return plain
        except InvalidTag:
            raise InvalidTag(f"{CODEC_ID}: chunk {position!r} did not authenticate: wrong key, a changed chunk, "
                             "or a chunk from another position or array") from None


def _array_module(array: Any) -> Any:
    module = type(array).__module__.partition(".")[0]
    if module != "cupy":
        raise TypeError(f"{CODEC_ID} takes NumPy or CuPy chunks, not {type(array).__name__}")
    import cupy  # type: ignore[import-not-found, unused-ignore]
    return cupy


# ---- zarr-python 3 -----------------------------------------------------------


@dataclass(frozen=True)
class AeadCodec(BytesBytesCodec):
    """The zarr-python 3 codec: ``zarr.create_array(..., compressors=[...,
    AeadCodec(key=key)])`` (after any compressor: ciphertext does not
    compress). `aead`: "aes-256-gcm" (default), "aes-128-gcm" or
    "chacha20-poly1305". `key_id` names the key in the metadata; `key` is
    never written there."""

    aead: str = "aes-256-gcm"
    key_id: str = "default"
    key: Optional[bytes] = field(default=None, repr=False, compare=False)
    is_fixed_size = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "_sealer", _Sealer(self.aead, self.key_id, self.key))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AeadCodec:
        configuration = data.get("configuration", {})
        if data.get("name") != CODEC_ID or not isinstance(configuration, dict):
            raise FormatError(f"not a {CODEC_ID} codec: {data!r}")
        return cls(aead=str(configuration.get("aead", "aes-256-gcm")),
                   key_id=str(configuration.get("key_id", "default")))

    def to_dict(self) -> dict[str, Any]:
        return {"name": CODEC_ID, "configuration": {"aead": self.aead, "key_id": self.key_id}}

    def __getstate__(self) -> dict[str, Any]:
        # Pickled (a Dask graph) without the key: a worker resolves key_id.
        return {"aead": self.aead, "key_id": self.key_id}

    def __setstate__(self, state: dict[str, Any]) -> None:
        object.__setattr__(self, "aead", state["aead"])
        object.__setattr__(self, "key_id", state["key_id"])
        object.__setattr__(self, "key", None)
        self.__post_init__()

    def compute_encoded_size(self, input_byte_length: int, _chunk_spec: ArraySpec) -> int:
        return input_byte_length + _OVERHEAD

    async def _encode_single(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> Buffer | None:
        sealer: _Sealer = getattr(self, "_sealer")
        sealed = await asyncio.to_thread(sealer.seal, chunk_bytes.as_array_like(), _current_chunk_key())
        return chunk_spec.prototype.buffer.from_array_like(sealed)

    async def _decode_single(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> Buffer:
        sealer: _Sealer = getattr(self, "_sealer")
        plain = await asyncio.to_thread(sealer.open, chunk_bytes.as_array_like(), _current_chunk_key())
        return chunk_spec.prototype.buffer.from_array_like(plain)


zarr.registry.register_codec(CODEC_ID, AeadCodec)

# ---- numcodecs ---------------------------------------------------------------


class AeadNumcodec(numcodecs.abc.Codec):  # type: ignore[misc]
    """The numcodecs codec, of the same id, chunk layout and key rules: for
    zarr format 2 arrays (``compressor=``, or last among ``filters=``) and
    other numcodecs users, who name each chunk's position with
    :func:`chunk_key`."""

    codec_id = CODEC_ID

    def __init__(self, aead: str = "aes-256-gcm", key_id: str = "default", key: Optional[bytes] = None) -> None:
        self.aead, self.key_id = aead, key_id
        self._sealer = _Sealer(aead, key_id, key)

    def encode(self, buf: Any) -> Any:
        data = numcodecs.compat.ensure_contiguous_ndarray(buf).reshape(-1).view(np.uint8)
        return self._sealer.seal(data, _current_chunk_key())

    def decode(self, buf: Any, out: Any = None) -> Any:
        sealed = numcodecs.compat.ensure_contiguous_ndarray(buf).reshape(-1).view(np.uint8)
        plain = self._sealer.open(sealed, _current_chunk_key())
        return numcodecs.compat.ndarray_copy(plain, out) if out is not None else plain

    def get_config(self) -> dict[str, Any]:
        return {"id": CODEC_ID, "aead": self.aead, "key_id": self.key_id}

    def __getstate__(self) -> dict[str, Any]:
        return self.get_config()

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["aead"], state["key_id"])  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"AeadNumcodec(aead={self.aead!r}, key_id={self.key_id!r})"


numcodecs.register_codec(AeadNumcodec)
