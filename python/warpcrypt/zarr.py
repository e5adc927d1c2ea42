"""Encrypted Zarr arrays: an AEAD codec, ``"warpcrypt.aead"``, for
zarr-python 3 (a bytes-to-bytes codec) and for numcodecs (zarr format 2
arrays, and anything else that takes a numcodecs codec), under one id.

What is authenticated is the array, not only the chunks that exist:

- Each chunk is sealed with AES-GCM or ChaCha20-Poly1305 under a random
  12-byte nonce. Its associated data binds the array's random id (kept in
  the codec's configuration, never the path the array is opened at), a
  digest of the array's metadata (shape, chunk grid, data type, fill value,
  the codec chain, order, chunk key encoding: everything but the user's
  attributes), the chunk's grid coordinates, and the write generation. A
  chunk on disk is::

      version (1 byte, 2) || generation (8, big-endian) || nonce (12) || ciphertext || tag (16)

- Every chunk is written, fill-value ones included, so a chunk that is
  absent was deleted: reading it fails, unless a commit recorded it as
  never written.
- The sealed object ``warpcrypt.manifest`` beside the array's metadata is
  written when :func:`create_array` makes the array (saying it was never
  committed), so an array without one had it deleted, and is refused.
  :func:`commit` authenticates every chunk and records in the manifest
  which version (nonce) of each is current and the new generation; chunks
  written after it carry the next generation. A chunk put back from an
  earlier commit then fails, as does a deleted or older manifest under
  chunks written after it. :func:`commit` and :func:`verify` return a
  digest of the committed array, for a caller to pin against a rollback of
  the whole store.
- A protection named in metadata can be taken out of it: zarr opens an
  array whose codec was removed as one in the clear. :func:`open_array`,
  which names the key_id the array must be sealed under, refuses it; it is
  the way to open an encrypted array.

Between commits, a chunk can be put back to any version written since the
last commit (the codec cannot tell which of them is newest without
coordinating the writers); commit when no writer is writing (after a Dask
job, on the client). docs/security.md, "Zarr arrays", has the full list.

The store's metadata names only the AEAD, a ``key_id`` and the array id;
the key comes from the caller (``key=``, held in memory, never serialised or
pickled), or from :func:`register_key` / :func:`set_key_provider` by its
``key_id``, in every process that reads or writes (each Dask worker too).

zarr-python 3 tells a codec neither the array nor the chunk's place, so
importing this module makes zarr's codec pipeline :class:`CodecPipeline`,
which does what zarr's own does (``BatchedCodecPipeline``) and also names
each chunk's array, coordinates and current version to the codec. A codec
asked to work without them refuses. Outside zarr, :func:`chunk_key` names
the position for a numcodecs codec's ``encode``/``decode``.

Random nonces bound one key to about 2**32 chunk writes (NIST SP 800-38D,
8.3); use a key per dataset, and rotate.

With ``zarr.config.enable_gpu()``, chunks are CuPy arrays and are sealed and
opened on their GPU.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import hashlib
import json
import math
import re
import struct
from collections.abc import Awaitable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, TypeVar, cast

import numcodecs  # type: ignore[import-untyped, unused-ignore]
import numcodecs.abc  # type: ignore[import-untyped, unused-ignore]
import numpy as np
import zarr
import zarr.registry
from zarr.abc.codec import BytesBytesCodec, Codec
from zarr.abc.store import Store
from zarr.codecs.sharding import ShardingCodec
from zarr.core.array import create_codec_pipeline
from zarr.core.array_spec import ArrayConfig, ArraySpec
from zarr.core.buffer import Buffer, default_buffer_prototype
from zarr.core.codec_pipeline import BatchedCodecPipeline
from zarr.core.sync import sync
from zarr.storage import StoreLike, StorePath

from warpcrypt._random import random_bytes
from warpcrypt.aead import AESGCM, ChaCha20Poly1305
from warpcrypt.exceptions import FormatError, InvalidArgument, InvalidKey, InvalidTag

__all__ = ["CODEC_ID", "AeadCodec", "AeadNumcodec", "CodecPipeline", "chunk_key", "commit", "create_array",
           "open_array", "register_key", "set_key_provider", "verify"]

CODEC_ID = "warpcrypt.aead"
# Version 1 (before the array was authenticated) bound the store key only.
_VERSION = 2
_HEAD = struct.Struct(">BQ12s")  # version, write generation, nonce
_TAG_LEN = 16
_OVERHEAD = _HEAD.size + _TAG_LEN
_MANIFEST = "warpcrypt.manifest"
_MANIFEST_HEAD = struct.Struct(">4sBQ12s")  # magic, version, generation, nonce
_MANIFEST_MAGIC = b"WCZM"
_MANIFEST_VERSION = 1
_ENTRY = 12  # a manifest entry: the committed chunk's nonce; a manifest of generation 0 (never committed) has none
_ABSENT = bytes(_ENTRY)  # the entry of a chunk committed as never written
_AEADS: dict[str, Callable[[bytes], AESGCM | ChaCha20Poly1305]] = {
    "aes-128-gcm": AESGCM, "aes-256-gcm": AESGCM, "chacha20-poly1305": ChaCha20Poly1305}
_KEY_LENS = {"aes-128-gcm": 16, "aes-256-gcm": 32, "chacha20-poly1305": 32}
_ARRAY_ID = re.compile(r"[0-9a-f]{32}")

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


# ---- what a chunk is bound to -------------------------------------------------


@dataclass(frozen=True)
class _Position:
    """What the pipeline tells the codec about the chunk it seals or opens."""

    array: str  # the digest of the array's metadata; "" outside zarr
    coords: str  # the chunk's grid coordinates ("0,1"); outside zarr the name given to chunk_key
    name: str  # the chunk's store key, for messages
    committed: int  # the last committed generation; 0 before the first commit
    expected: Optional[bytes]  # the committed version's nonce (_ABSENT: none); None before the first commit


_position: contextvars.ContextVar[Optional[_Position]] = contextvars.ContextVar("warpcrypt_zarr_position",
                                                                                default=None)


@contextlib.contextmanager
def chunk_key(key: str) -> Iterator[None]:
    """Names the position of the chunks encoded or decoded in this block:
    for numcodecs codecs used outside zarr-python 3 (zarr's pipeline names
    each chunk's array and coordinates itself)."""
    token = _position.set(_Position("", key, key, 0, None))
    try:
        yield
    finally:
        _position.reset(token)


def _current_position() -> _Position:
    position = _position.get()
    if position is None:
        raise InvalidArgument(f"{CODEC_ID} binds each chunk to its array and position, and none was named: zarr's "
                              "codec pipeline must be warpcrypt.zarr.CodecPipeline (importing warpcrypt.zarr sets "
                              "it; another codec_pipeline.path was configured after), the codec cannot run inside a "
                              "sharding codec, and outside zarr the call must be wrapped in "
                              "warpcrypt.zarr.chunk_key(...)")
    return position


def _check_current(position: _Position, generation: int, nonce: bytes) -> None:
    """Refuses a chunk (authentic, of this array and position) that is not
    the current version: the committed one, or one written since."""
    if generation <= position.committed:
        if nonce != position.expected:
            raise InvalidTag(f"{CODEC_ID}: chunk {position.name!r} is not the version committed at generation "
                             f"{position.committed}: an earlier version was put back")
    elif generation != position.committed + 1:
        raise InvalidTag(f"{CODEC_ID}: chunk {position.name!r} was written in generation {generation}, after the "
                         f"last commit the store holds ({position.committed}): {_MANIFEST} was put back to an "
                         "earlier one")


def _framed(*parts: bytes) -> bytes:
    # Each part length-prefixed, so no two lists of parts give one string.
    return b"".join(len(part).to_bytes(4, "big") + part for part in parts)


# ---- sealing one chunk -------------------------------------------------------


class _Sealer:
    """An AEAD, key and array id for chunks, and the one rule for their layout."""

    def __init__(self, aead: str, key_id: str, key: Optional[bytes], array_id: Optional[str]) -> None:
        if aead not in _AEADS:
            raise InvalidArgument(f"unknown AEAD {aead!r} for {CODEC_ID}: choose from {', '.join(_AEADS)}")
        if key is not None and len(key) != _KEY_LENS[aead]:
            raise InvalidKey(f"{aead} takes a {_KEY_LENS[aead]}-byte key, not {len(key)} bytes")
        if array_id is not None and not _ARRAY_ID.fullmatch(array_id):
            raise FormatError(f"{CODEC_ID}: array_id must be 32 lowercase hex digits, not {array_id!r}")
        self.aead, self.key_id, self.array_id, self._key = aead, key_id, array_id, key
        self._bound: Optional[AESGCM | ChaCha20Poly1305] = None

    def __getstate__(self) -> dict[str, Any]:
        # Pickled with the array (a Dask graph) without the key and its
        # cipher: an unpickled one resolves key_id.
        return {"aead": self.aead, "key_id": self.key_id, "array_id": self.array_id}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["aead"], state["key_id"], None, state["array_id"])  # type: ignore[misc]

    def cipher(self) -> AESGCM | ChaCha20Poly1305:
        if self._bound is None:
            key = _resolve_key(self.key_id, self._key)
            if len(key) != _KEY_LENS[self.aead]:
                raise InvalidKey(f"the key of key_id {self.key_id!r} has {len(key)} bytes; {self.aead} takes "
                                 f"{_KEY_LENS[self.aead]}")
            self._bound = _AEADS[self.aead](key)
        return self._bound

    def associated_data(self, domain: str, array: str, *parts: bytes) -> bytes:
        if self.array_id is None:
            raise InvalidArgument(f"{CODEC_ID}: this codec names no array yet; zarr gives it the array's id when "
                                  "it creates the array (outside zarr, use AeadNumcodec, which makes one)")
        return _framed(domain.encode(), self.aead.encode(), self.array_id.encode(), array.encode(), *parts)

    def seal(self, data: Any, position: _Position) -> Any:
        """`data`: a 1-D uint8 NumPy or CuPy array; the sealed chunk, of the same kind."""
        nonce = random_bytes(12)
        head = _HEAD.pack(_VERSION, position.committed + 1, nonce)
        cipher = self.cipher()
        aad = self.associated_data(f"{CODEC_ID} v{_VERSION}", position.array, position.coords.encode(), head)
        head_array = np.frombuffer(head, dtype=np.uint8)
        if isinstance(data, np.ndarray):
            return np.concatenate([head_array, np.frombuffer(cipher.encrypt(nonce, data, aad), dtype=np.uint8)])
        # A GPU array: sealed on its device into the new chunk's own memory.
        xp = _array_module(data)
        sealed = xp.empty(len(data) + _OVERHEAD, dtype=xp.uint8)
        sealed[:_HEAD.size] = xp.asarray(head_array)
        body = sealed[_HEAD.size:_HEAD.size + len(data)]
        cipher.encrypt_into(nonce, data, aad, body, tag=sealed[_HEAD.size + len(data):])
        return sealed

    def open(self, sealed: Any, position: _Position) -> Any:
        """The plaintext of a sealed chunk, once its tag matched and it is
        the current version; of the same kind."""
        if len(sealed) < _OVERHEAD:
            raise FormatError(f"{CODEC_ID}: chunk {position.name!r} is shorter than its header and tag")
        head = sealed[:_HEAD.size].tobytes() if isinstance(sealed, np.ndarray) \
            else bytes(sealed[:_HEAD.size].tolist())
        version, generation, nonce = _chunk_head(head, position.name)
        cipher = self.cipher()
        aad = self.associated_data(f"{CODEC_ID} v{_VERSION}", position.array, position.coords.encode(), head)
        try:
            if isinstance(sealed, np.ndarray):
                plain = np.frombuffer(cipher.decrypt(nonce, sealed[_HEAD.size:], aad), dtype=np.uint8)
            else:
                xp = _array_module(sealed)
                plain = xp.empty(len(sealed) - _OVERHEAD, dtype=xp.uint8)
                cipher.decrypt_into(nonce, sealed[_HEAD.size:len(sealed) - _TAG_LEN], aad, plain,
                                    tag=sealed[len(sealed) - _TAG_LEN:])
        except InvalidTag:
            raise InvalidTag(f"{CODEC_ID}: chunk {position.name!r} did not authenticate: wrong key, a changed chunk "
                             "or array metadata, or a chunk from another position or array") from None
        _check_current(position, generation, nonce)
        return plain


def _chunk_head(head: bytes, name: str) -> tuple[int, int, bytes]:
    version, generation, nonce = cast(tuple[int, int, bytes], _HEAD.unpack(head))
    if version != _VERSION:
        raise FormatError(f"{CODEC_ID}: chunk {name!r} has chunk format version {version}; this warpcrypt reads "
                          f"version {_VERSION} only" + (" (version 1 did not authenticate the array: rewrite it "
                                                        "with this version)" if version == 1 else ""))
    return version, generation, nonce


def _array_module(array: Any) -> Any:
    module = type(array).__module__.partition(".")[0]
    if module != "cupy":
        raise TypeError(f"{CODEC_ID} takes NumPy or CuPy chunks, not {type(array).__name__}")
    import cupy  # type: ignore[import-not-found, unused-ignore]
    return cupy


def _new_array_id() -> str:
    return random_bytes(16).hex()


# ---- zarr-python 3 -----------------------------------------------------------


@dataclass(frozen=True)
class AeadCodec(BytesBytesCodec):
    """The zarr-python 3 codec: ``create_array(..., compressors=[...,
    AeadCodec(key=key)])``, last (after any compressor: ciphertext does not
    compress). `aead`: "aes-256-gcm" (default), "aes-128-gcm" or
    "chacha20-poly1305". `key_id` names the key in the metadata; `key` is
    never written there. `array_id` is made when zarr creates the array, so
    one codec object can serve for several arrays, each with its own id."""

    aead: str = "aes-256-gcm"
    key_id: str = "default"
    key: Optional[bytes] = field(default=None, repr=False, compare=False)
    array_id: Optional[str] = None
    is_fixed_size = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "_sealer", _Sealer(self.aead, self.key_id, self.key, self.array_id))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AeadCodec:
        configuration = data.get("configuration", {})
        if data.get("name") != CODEC_ID or not isinstance(configuration, dict):
            raise FormatError(f"not a {CODEC_ID} codec: {data!r}")
        array_id = configuration.get("array_id")
        if not isinstance(array_id, str):
            raise FormatError(f"{CODEC_ID}: the array's codec configuration has no array_id: an array written by "
                              "an earlier warpcrypt (chunk format 1), which this version does not read")
        return cls(aead=str(configuration.get("aead", "aes-256-gcm")),
                   key_id=str(configuration.get("key_id", "default")), array_id=array_id)

    def to_dict(self) -> dict[str, Any]:
        configuration = {"aead": self.aead, "key_id": self.key_id}
        if self.array_id is not None:
            configuration["array_id"] = self.array_id
        return {"name": CODEC_ID, "configuration": configuration}

    def evolve_from_array_spec(self, array_spec: ArraySpec) -> AeadCodec:
        # zarr calls this as it builds an array's metadata: from the caller's
        # codec when it creates the array (no id yet: a new one), from the
        # stored configuration when it opens one (its id).
        return self if self.array_id is not None else dataclasses.replace(self, array_id=_new_array_id())

    def __getstate__(self) -> dict[str, Any]:
        # Pickled (a Dask graph) without the key: a worker resolves key_id.
        return {"aead": self.aead, "key_id": self.key_id, "array_id": self.array_id}

    def __setstate__(self, state: dict[str, Any]) -> None:
        object.__setattr__(self, "aead", state["aead"])
        object.__setattr__(self, "key_id", state["key_id"])
        object.__setattr__(self, "array_id", state["array_id"])
        object.__setattr__(self, "key", None)
        self.__post_init__()

    def compute_encoded_size(self, input_byte_length: int, _chunk_spec: ArraySpec) -> int:
        return input_byte_length + _OVERHEAD

    async def _encode_single(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> Buffer | None:
        sealer: _Sealer = getattr(self, "_sealer")
        sealed = await asyncio.to_thread(sealer.seal, chunk_bytes.as_array_like(), _current_position())
        return chunk_spec.prototype.buffer.from_array_like(sealed)

    async def _decode_single(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> Buffer:
        sealer: _Sealer = getattr(self, "_sealer")
        plain = await asyncio.to_thread(sealer.open, chunk_bytes.as_array_like(), _current_position())
        return chunk_spec.prototype.buffer.from_array_like(plain)


zarr.registry.register_codec(CODEC_ID, AeadCodec)

# ---- numcodecs ---------------------------------------------------------------


class AeadNumcodec(numcodecs.abc.Codec):  # type: ignore[misc]
    """The numcodecs codec, of the same id, chunk layout and key rules: for
    zarr format 2 arrays (``compressor=``, or last among ``filters=`` without
    a compressor) and other numcodecs users, who name each chunk's position
    with :func:`chunk_key`. A codec object made without `array_id` makes a
    new one: give each array its own codec object (two arrays created with
    one share an id)."""

    codec_id = CODEC_ID

    def __init__(self, aead: str = "aes-256-gcm", key_id: str = "default", key: Optional[bytes] = None,
                 array_id: Optional[str] = None) -> None:
        self.aead, self.key_id = aead, key_id
        self.array_id = array_id if array_id is not None else _new_array_id()
        self._sealer = _Sealer(aead, key_id, key, self.array_id)

    def encode(self, buf: Any) -> Any:
        data = numcodecs.compat.ensure_contiguous_ndarray(buf).reshape(-1).view(np.uint8)
        return self._sealer.seal(data, _current_position())

    def decode(self, buf: Any, out: Any = None) -> Any:
        sealed = numcodecs.compat.ensure_contiguous_ndarray(buf).reshape(-1).view(np.uint8)
        plain = self._sealer.open(sealed, _current_position())
        return numcodecs.compat.ndarray_copy(plain, out) if out is not None else plain

    def get_config(self) -> dict[str, Any]:
        return {"id": CODEC_ID, "aead": self.aead, "key_id": self.key_id, "array_id": self.array_id}

    def __getstate__(self) -> dict[str, Any]:
        return self.get_config()

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["aead"], state["key_id"], array_id=state["array_id"])  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"AeadNumcodec(aead={self.aead!r}, key_id={self.key_id!r}, array_id={self.array_id!r})"


numcodecs.register_codec(AeadNumcodec)

# ---- the array: its metadata, chunk grid and manifest ------------------------


@dataclass(frozen=True)
class _Manifest:
    """The last commit: its generation and each chunk's committed nonce."""

    generation: int
    entries: Optional[bytes]  # None: never committed

    def expected(self, index: int) -> Optional[bytes]:
        return None if self.entries is None else self.entries[index * _ENTRY:(index + 1) * _ENTRY]


def _holds_aead(codecs: Iterable[Any]) -> bool:
    return any(isinstance(codec, AeadCodec) or (isinstance(codec, ShardingCodec) and
                                               _holds_aead([*codec.codecs, *codec.index_codecs]))
               for codec in codecs)


def _codec_name(codec: Any) -> str:
    return str(getattr(codec, "codec_id", None) or cast(Codec, codec).to_dict().get("name"))


@dataclass(frozen=True)
class _Array:
    """An array sealed by this module, as its metadata describes it."""

    sealer: _Sealer
    digest: str  # of the metadata, the user's attributes aside
    grid: tuple[int, ...]  # chunks along each dimension
    encode_key: Callable[[tuple[int, ...]], str]
    key_parts: int  # "/"-separated parts of a chunk key

    @staticmethod
    def of(metadata: Any) -> Optional[_Array]:
        """None for an array without the codec; refuses a codec chain in
        which it is not last (a codec after it would work on ciphertext)."""
        if metadata.zarr_format == 3:
            chain: list[Any] = list(metadata.codecs)
            if any(isinstance(codec, ShardingCodec) for codec in chain) and _holds_aead(
                    codec for codec in chain if isinstance(codec, ShardingCodec)):
                raise InvalidArgument(f"{CODEC_ID} cannot run inside a sharding codec: place it after "
                                      "sharding_indexed, to seal each shard whole")
            kind: type = AeadCodec
        else:
            chain = [*(metadata.filters or ()), *([metadata.compressor] if metadata.compressor is not None else [])]
            kind = AeadNumcodec
        places = [index for index, codec in enumerate(chain) if isinstance(codec, kind)]
        if not places:
            return None
        if places != [len(chain) - 1]:
            raise InvalidArgument(f"{CODEC_ID} must be the last codec, after any compressor (ciphertext does not "
                                  f"compress): the chain is {', '.join(_codec_name(codec) for codec in chain)}")
        description = {name: value for name, value in metadata.to_dict().items() if name != "attributes"}
        digest = hashlib.sha256(json.dumps(description, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
        grid = tuple(math.ceil(size / chunk) for size, chunk in zip(metadata.shape, metadata.chunks))
        encode_key = cast(Callable[[tuple[int, ...]], str], metadata.encode_chunk_key)
        return _Array(cast(Any, chain[-1])._sealer, digest, grid, encode_key,
                      len(encode_key((0,) * len(grid)).split("/")))

    def chunks(self) -> Iterator[tuple[int, ...]]:
        return (tuple(int(c) for c in coords) for coords in np.ndindex(*self.grid))

    def index(self, coords: tuple[int, ...]) -> int:
        return int(np.ravel_multi_index(coords, self.grid)) if self.grid else 0

    def locate(self, path: str) -> tuple[str, tuple[int, ...]]:
        """The array's prefix in the store and the chunk's coordinates, from
        a chunk's store key."""
        parts = path.split("/")
        key, prefix = "/".join(parts[-self.key_parts:]), "/".join(parts[:-self.key_parts])
        numbers = tuple(int(number) for number in re.findall(r"\d+", key))
        coords = numbers[len(numbers) - len(self.grid):] if self.grid else ()
        if (len(parts) < self.key_parts or len(coords) != len(self.grid) or self.encode_key(coords) != key or
                any(not 0 <= c < n for c, n in zip(coords, self.grid))):
            raise FormatError(f"{CODEC_ID}: {path!r} is not a chunk key of this array")
        return prefix, coords

    def position(self, name: str, coords: tuple[int, ...], manifest: _Manifest) -> _Position:
        return _Position(self.digest, ",".join(map(str, coords)), name, manifest.generation,
                         manifest.expected(self.index(coords)))

    def _manifest_aad(self, head: bytes) -> bytes:
        return self.sealer.associated_data(f"{CODEC_ID} manifest v{_MANIFEST_VERSION}", self.digest, head)

    async def manifest(self, store: Store, prefix: str) -> _Manifest:
        """The authenticated manifest; refuses an absent one, which was
        deleted: create_array writes one when it makes the array."""
        name = f"{prefix}/{_MANIFEST}" if prefix else _MANIFEST
        data = await StorePath(store, name).get(default_buffer_prototype())
        if data is None:
            raise InvalidTag(f"{CODEC_ID}: {name!r} is missing: it was deleted (warpcrypt.zarr.create_array writes "
                             "it when it makes an encrypted array; an array made by zarr.create_array has none)")
        sealed = data.to_bytes()
        if len(sealed) < _MANIFEST_HEAD.size + _TAG_LEN:
            raise FormatError(f"{CODEC_ID}: {name!r} is shorter than its header and tag")
        head = sealed[:_MANIFEST_HEAD.size]
        magic, version, generation, nonce = _MANIFEST_HEAD.unpack(head)
        if magic != _MANIFEST_MAGIC or version != _MANIFEST_VERSION:
            raise FormatError(f"{CODEC_ID}: {name!r} is not a version {_MANIFEST_VERSION} manifest")
        try:
            entries = self.sealer.cipher().decrypt(nonce, sealed[_MANIFEST_HEAD.size:], self._manifest_aad(head))
        except InvalidTag:
            raise InvalidTag(f"{CODEC_ID}: {name!r} did not authenticate: wrong key, a changed manifest or array "
                             "metadata, or another array's manifest") from None
        chunks = math.prod(self.grid) if generation else 0
        if len(entries) != _ENTRY * chunks:
            raise FormatError(f"{CODEC_ID}: {name!r} of generation {generation} lists {len(entries) // _ENTRY} "
                              f"chunks, not {chunks}")
        return _Manifest(generation, entries if generation else None)

    async def write_manifest(self, store: Store, prefix: str, manifest: _Manifest) -> None:
        nonce = random_bytes(12)
        head = _MANIFEST_HEAD.pack(_MANIFEST_MAGIC, _MANIFEST_VERSION, manifest.generation, nonce)
        sealed = head + self.sealer.cipher().encrypt(nonce, manifest.entries or b"", self._manifest_aad(head))
        name = f"{prefix}/{_MANIFEST}" if prefix else _MANIFEST
        await StorePath(store, name).set(default_buffer_prototype().buffer.from_bytes(sealed))

    def digest_of(self, manifest: _Manifest) -> str:
        """What a caller pins: the array's id, metadata and committed chunks."""
        return hashlib.sha256(_framed(b"warpcrypt.zarr digest v1", self.digest.encode(),
                                      manifest.generation.to_bytes(8, "big"), manifest.entries or b"")).hexdigest()


def _missing(name: str) -> InvalidTag:
    return InvalidTag(f"{CODEC_ID}: chunk {name!r} is missing: deleted, or never written (an encrypted array has "
                      "every chunk written; warpcrypt.zarr.commit records the chunks never written)")


@dataclass(frozen=True)
class _Chunk:
    """A chunk's place in the store, as zarr's pipeline uses it; reading it
    absent fails unless the array's state allows it."""

    place: Any
    name: str
    absent_allowed: bool

    @property
    def path(self) -> str:
        return self.name

    async def get(self, prototype: Any = None, byte_range: Any = None) -> Optional[Buffer]:
        data = cast(Optional[Buffer], await self.place.get(prototype, byte_range))
        if data is None and not self.absent_allowed:
            raise _missing(self.name)
        return data

    async def set(self, value: Buffer) -> None:
        await self.place.set(value)

    async def delete(self) -> None:
        await self.place.delete()


_T = TypeVar("_T")
_R = TypeVar("_R")


async def _each(items: Sequence[_T], work: Callable[[_T], Awaitable[_R]]) -> list[_R]:
    """`work` on every item, zarr's async.concurrency at a time. On the first
    failure the rest are cancelled and awaited before it is raised: zarr's
    concurrent_map leaves them pending, to be destroyed at interpreter exit
    with a traceback each."""
    limit = asyncio.Semaphore(int(zarr.config.get("async.concurrency")))

    async def limited(item: _T) -> _R:
        async with limit:
            return await work(item)

    tasks = [asyncio.ensure_future(limited(item)) for item in items]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def _store_of(place: object) -> tuple[Store, str]:
    store, path = getattr(place, "store", None), getattr(place, "path", None)
    if not isinstance(store, Store) or not isinstance(path, str):
        raise InvalidArgument(f"{CODEC_ID}: the chunk's store is unknown ({type(place).__name__}); the codec cannot "
                              "run inside a sharding codec")
    return store, path


_P = TypeVar("_P", bound="CodecPipeline")


@dataclass(frozen=True)
class CodecPipeline(BatchedCodecPipeline):
    """zarr's BatchedCodecPipeline, which for an array sealed by this module
    also names each chunk's array, coordinates and committed version to the
    codec, writes every chunk, and refuses a chunk that is absent."""

    array: Optional[_Array] = None

    @classmethod
    def from_array_metadata_and_store(cls: type[_P], array_metadata: Any, store: Store) -> _P:
        array = _Array.of(array_metadata)
        if array is None:
            raise NotImplementedError  # zarr then builds the pipeline from the codecs, as for any array
        return dataclasses.replace(cast(_P, create_codec_pipeline(array_metadata)), array=array)

    async def _state(self, array: _Array, batch: list[Any]) -> tuple[_Manifest, list[tuple[_Position, int]]]:
        """The manifest, and each chunk's position and index in it."""
        store, path = _store_of(batch[0][0])
        prefix = array.locate(path)[0]
        manifest = await array.manifest(store, prefix)
        located = []
        for place, *_ in batch:
            name = _store_of(place)[1]
            coords = array.locate(name)[1]
            located.append((array.position(name, coords, manifest), array.index(coords)))
        return manifest, located

    async def read(self, batch_info: Iterable[Any], out: Any, drop_axes: tuple[int, ...] = ()) -> Any:
        if self.array is None:
            return await super().read(batch_info, out, drop_axes)
        batch = list(batch_info)
        if not batch:
            return ()
        manifest, located = await self._state(self.array, batch)

        async def read_one(chunk: tuple[Any, tuple[_Position, int]]) -> Iterable[Any]:
            (place, *rest), (position, index) = chunk
            _position.set(position)  # in this task's own context
            absent_allowed = manifest.expected(index) == _ABSENT
            # zarr 3.1 returns nothing here; 3.2 and later a result per chunk
            # (present or missing), which its read() collects: pass them on.
            read_batch = cast(Callable[..., Awaitable[Optional[Iterable[Any]]]], BatchedCodecPipeline.read_batch)
            return await read_batch(self, [(_Chunk(place, position.name, absent_allowed), *rest)], out, drop_axes) or ()

        results = await _each(list(zip(batch, located)), read_one)
        return tuple(result for chunk in results for result in chunk)

    async def write(self, batch_info: Iterable[Any], value: Any, drop_axes: tuple[int, ...] = ()) -> None:
        if self.array is None:
            await super().write(batch_info, value, drop_axes)
            return None
        batch = list(batch_info)
        if not batch:
            return None
        manifest, located = await self._state(self.array, batch)

        async def write_one(chunk: tuple[Any, tuple[_Position, int]]) -> None:
            (place, spec, *rest), (position, index) = chunk
            _position.set(position)
            # Before the first commit any chunk may be new; after it, only
            # one the commit found never written.
            absent_allowed = manifest.expected(index) in (None, _ABSENT)
            # Every chunk is written, fill-value ones included: one absent
            # was deleted.
            spec = dataclasses.replace(spec, config=ArrayConfig(spec.config.order, True))
            await BatchedCodecPipeline.write_batch(
                self, [(_Chunk(place, position.name, absent_allowed), spec, *rest)], value, drop_axes)

        await _each(list(zip(batch, located)), write_one)
        return None

    @contextlib.contextmanager
    def _inner_chunks(self) -> Iterator[None]:
        """A pipeline without an array is a sharding codec's, called for its
        inner chunks: the shard's position does not hold for them, and the
        codec refuses to work without one, so it is cleared within this task,
        which set it. The array's own pipeline keeps it: zarr 3.2 and later
        run its writes and reads through encode and decode too."""
        if self.array is not None:
            yield
            return
        token = _position.set(None)
        try:
            yield
        finally:
            _position.reset(token)

    async def decode(self, chunk_bytes_and_specs: Iterable[Any]) -> Iterable[Any]:
        with self._inner_chunks():
            return await super().decode(chunk_bytes_and_specs)

    async def encode(self, chunk_arrays_and_specs: Iterable[Any]) -> Iterable[Any]:
        with self._inner_chunks():
            return await super().encode(chunk_arrays_and_specs)


zarr.registry.register_pipeline(CodecPipeline)
zarr.config.set({"codec_pipeline.path": f"{CodecPipeline.__module__}.{CodecPipeline.__qualname__}"})

# ---- commits -----------------------------------------------------------------


def commit(array: Any) -> str:
    """Records the current version of every chunk of `array` (a zarr Array
    sealed by this codec) and starts a new generation: from then on a chunk
    put back from before, or deleted, fails to read. Reads and
    authenticates every chunk first, and refuses (InvalidTag) if one fails:
    it never records a chunk that does not read. Returns the digest of the
    committed array, to pin against a rollback of the whole store (compare
    :func:`verify`). Commit when no writer is writing: a chunk written
    during the commit fails to read afterwards."""
    return sync(_scan(array, committing=True))


def verify(array: Any) -> str:
    """Reads and authenticates every chunk of `array`, which must all be the
    versions committed last (none written since, none missing), and returns
    the committed digest: equal to the one :func:`commit` returned if the
    store still holds that commit."""
    return sync(_scan(array, committing=False))


async def _scan(array: Any, *, committing: bool) -> str:
    sealed, async_array = _sealed_array(array)
    store, prefix = async_array.store_path.store, async_array.store_path.path
    manifest = await sealed.manifest(store, prefix)
    if not committing and manifest.entries is None:
        raise InvalidTag(f"{CODEC_ID}: array {prefix!r} was never committed: there is no commit to verify")
    prototype = default_buffer_prototype()

    async def scan_one(coords: tuple[int, ...]) -> bytes:
        name = f"{prefix}/{sealed.encode_key(coords)}" if prefix else sealed.encode_key(coords)
        position = sealed.position(name, coords, manifest)
        data = await StorePath(store, name).get(prototype)
        if data is None:
            # Absent is right for a chunk committed as never written, and,
            # before the first commit, for one never written.
            if position.expected in (_ABSENT, None):
                return _ABSENT
            raise _missing(name)
        # What is recorded or verified has authenticated, and is the
        # chunk's current version.
        chunk = np.frombuffer(data.to_bytes(), dtype=np.uint8)
        await asyncio.to_thread(sealed.sealer.open, chunk, position)
        _, generation, nonce = _chunk_head(chunk[:_HEAD.size].tobytes(), name)
        if not committing and generation > manifest.generation:
            raise InvalidTag(f"{CODEC_ID}: chunk {name!r} was written after the last commit")
        return nonce

    entries = b"".join(await _each(list(sealed.chunks()), scan_one))
    if committing:
        manifest = _Manifest(manifest.generation + 1, entries)
        await sealed.write_manifest(store, prefix, manifest)
    return sealed.digest_of(manifest)


# ---- making and opening encrypted arrays -------------------------------------


def _sealed_array(array: Any) -> tuple[_Array, Any]:
    """The sealed array that `array` (a zarr Array or AsyncArray) is, and
    its AsyncArray; refuses one whose metadata names no codec."""
    async_array = getattr(array, "_async_array", array)
    sealed = getattr(getattr(async_array, "codec_pipeline", None), "array", None)
    if not isinstance(sealed, _Array):
        where = getattr(getattr(async_array, "store_path", None), "path", None)
        raise FormatError(f"{CODEC_ID}: the array {where!r} names no {CODEC_ID} codec: it is not encrypted, the "
                          "codec was taken out of its metadata, or warpcrypt.zarr's codec pipeline was not in use "
                          "when it was opened")
    return sealed, async_array


def create_array(store: StoreLike, **options: Any) -> zarr.Array[Any]:
    """``zarr.create_array`` for an encrypted array, with its arguments: the
    codec (:class:`AeadCodec`, or :class:`AeadNumcodec` in format 2) among
    them, last. Also writes the array's manifest, sealed under the codec's
    key, saying it was never committed: an array whose manifest is absent
    later had it deleted, and is refused. Refuses (FormatError) arguments
    that make an array in the clear, leaving nothing in the store, and
    ``data=`` (write the data once the array exists)."""
    if "data" in options:
        raise InvalidArgument(f"{CODEC_ID}: create_array takes no data=: its manifest must exist before its first "
                              "chunk; write the data into the array it returns (array[...] = data)")
    array = zarr.create_array(store, **options)
    async_array = array._async_array
    try:
        sealed, _ = _sealed_array(array)
        sync(sealed.write_manifest(async_array.store_path.store, async_array.store_path.path, _Manifest(0, None)))
    except BaseException:
        # No array is left without its codec or its manifest.
        for document in async_array.metadata.to_buffer_dict(default_buffer_prototype()):
            sync((async_array.store_path / document).delete())
        raise
    return array


def open_array(store: StoreLike, *, key_id: str, mode: str = "r", **options: Any) -> zarr.Array[Any]:
    """``zarr.open_array`` for an encrypted array, and the way to open one
    that is protected against a stripped codec: zarr reads and writes an
    array whose codec was taken out of its metadata in the clear, and this
    refuses it (FormatError), as it refuses one sealed under another key_id
    than `key_id`. It authenticates the array's manifest under the key
    (InvalidTag: a wrong key, edited metadata, a deleted or substituted
    manifest). `mode` is "r" or "r+": :func:`create_array` makes arrays."""
    if mode not in ("r", "r+"):
        raise InvalidArgument(f"{CODEC_ID}: open_array opens an existing array, in mode 'r' or 'r+', not mode "
                              f"{mode!r}: create_array makes one")
    array = zarr.open_array(store, mode=mode, **options)
    sealed, async_array = _sealed_array(array)
    if sealed.sealer.key_id != key_id:
        raise FormatError(f"{CODEC_ID}: the array {async_array.store_path.path!r} is sealed under key_id "
                          f"{sealed.sealer.key_id!r}, not {key_id!r}")
    sync(sealed.manifest(async_array.store_path.store, async_array.store_path.path))
    return array
