"""encrypt_array and decrypt_array: a dask array encrypted chunk by chunk,
each chunk under its own key and nonce, derived from the master key, the
array's id and the chunk's place in the chunk grid. The worker that runs a
chunk's task derives them from the master key it holds: the graph carries
the chunk's index, never a key.

Chunks are encrypted where they live: NumPy chunks on the CPU (or the
worker's GPU, by the library's backend), CuPy chunks on their own device,
through the library's calls on device memory (__cuda_array_interface__),
without a copy to the host. The code below uses ndarray methods, which CuPy
shares, and np.empty_like, which dispatches to CuPy for CuPy chunks (NEP
18), so one code path serves both.

With an AEAD (the default, AES-256-GCM) the ciphertext keeps the array's
shape, chunks and dtype, and a second array holds each chunk's 16-byte tag;
the array's layout is every chunk's associated data, so a chunk moved,
dropped or reinterpreted does not authenticate. A plain stream cipher
(CTR, ChaCha20, Salsa20) gives the ciphertext alone, unauthenticated.
"""

from __future__ import annotations

import hashlib
import json
import math
import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import dask.array as da
import numpy as np
from dask.array.utils import meta_from_array
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

import warpcrypt
from warpcrypt.aead import AESGCM, ChaCha20Poly1305
from warpcrypt.dask._kdf import JOB_ID_LEN, DerivedKey, chunk_cipher_sizes, derive_chunk_key, is_sealed_cipher, new_id
from warpcrypt.dask._keyring import HeldKey, KeyRef, held_key, key_ref
from warpcrypt.dask._worker import DECRYPT, ENCRYPT, resolve_backend

if TYPE_CHECKING:
    from dask.typing import Key

# Chunks of up to 64 MiB: tens of milliseconds of work per task on a CPU
# worker, against about a millisecond of Dask's overhead, and small enough
# that a few chunks per worker thread fit in memory.
DEFAULT_CHUNK_BYTES = 64 << 20
TAG_LEN = 16
LAYOUT_LABEL = b"warpcrypt-dask v1 array layout"


@dataclass(frozen=True)
class EncryptedArray:
    """What encrypt_array returns, and decrypt_array takes.

    `ciphertext` has the plaintext's shape, chunks and dtype. `tags` (AEADs
    only, else None) is a uint8 array of shape ``numblocks + (16,)``: the tag
    of chunk ``i, j, ...`` at ``tags[i, j, ...]``. `array_id` is public and
    must be kept with them: every chunk's key derives from it.
    """

    ciphertext: da.Array
    tags: da.Array | None
    array_id: bytes
    cipher: str


def _chunk_cipher(cipher: str) -> str:
    name, _, _ = chunk_cipher_sizes(cipher)
    if not is_sealed_cipher(name) and warpcrypt.cipher_info(name).padded:
        raise warpcrypt.InvalidArgument(
            f"{name} does not keep a chunk's size; use an AEAD such as aes-256-gcm or a stream cipher "
            "such as aes-256-ctr")
    return name


def on_device(block: object) -> bool:
    """Whether a chunk lives in GPU memory (CuPy, or anything else with
    __cuda_array_interface__)."""
    return hasattr(block, "__cuda_array_interface__")


def _contiguous(block: np.ndarray) -> np.ndarray:
    """The chunk as one C-ordered buffer, where it lives (np.ascontiguousarray
    would refuse a CuPy chunk rather than copy it to the host)."""
    return block if block.flags.c_contiguous else block.copy(order="C")


def _backend(requested: str, block: np.ndarray, cipher: str, *, decrypt: bool, threads: int) -> str:
    return resolve_backend(requested, cipher, data="device" if on_device(block) else "pageable", size=block.nbytes,
                           decrypt=decrypt, threads=threads)


def _aead(cipher: str, key: bytes, backend: str, threads: int) -> AESGCM | ChaCha20Poly1305:
    aead = ChaCha20Poly1305 if cipher == "chacha20-poly1305" else AESGCM
    return aead(key, backend=backend, threads=threads)


def _chunk_key(cell: np.ndarray, key: KeyRef, array_id: bytes,
               cipher: str) -> tuple[tuple[int, ...], DerivedKey[bytes]]:
    """The chunk's index, from its cell of the index array, and its key,
    derived here on the worker."""
    index = cell.flat[0]
    return index, derive_chunk_key(held_key(key), array_id, index, cipher=cipher)


def _layout(array: da.Array) -> bytes:
    """The associated data of every chunk: a digest of the array's shape,
    chunk grid and dtype."""
    if any(math.isnan(size) for sizes in array.chunks for size in sizes):
        raise ValueError("the array's chunk sizes are unknown: call compute_chunk_sizes() first")
    description = json.dumps({"shape": [int(n) for n in array.shape],
                              "chunks": [[int(size) for size in sizes] for sizes in array.chunks],
                              "dtype": array.dtype.str}, separators=(",", ":"))
    return LAYOUT_LABEL + b"\0" + hashlib.sha256(description.encode()).digest()


def _seal_chunk(block: np.ndarray, cell: np.ndarray, *, key: KeyRef, array_id: bytes, cipher: str, layout: bytes,
                backend: str, threads: int) -> tuple[np.ndarray, np.ndarray]:
    _, derived = _chunk_key(cell, key, array_id, cipher)
    data = _contiguous(block)
    out = np.empty_like(data)
    # On the chunk's own device for a CuPy chunk, as the ciphertext.
    tag = np.empty_like(data, dtype=np.uint8, shape=(1,) * data.ndim + (TAG_LEN,))
    chosen = _backend(backend, data, cipher, decrypt=False, threads=threads)
    _aead(cipher, derived.key, chosen, threads).encrypt_into(
        derived.iv, data, layout, out, tag=tag.reshape(-1))
    return out, tag


def _open_chunk(block: np.ndarray, tag: np.ndarray, cell: np.ndarray, *, key: KeyRef, array_id: bytes, cipher: str,
                layout: bytes, backend: str, threads: int) -> np.ndarray:
    index, derived = _chunk_key(cell, key, array_id, cipher)
    data = _contiguous(block)
    out = np.empty_like(data)
    chosen = _backend(backend, data, cipher, decrypt=True, threads=threads)
    try:
        _aead(cipher, derived.key, chosen, threads).decrypt_into(
            derived.iv, data, layout, out, tag=_contiguous(tag).reshape(-1))
    except warpcrypt.InvalidTag:
        raise warpcrypt.InvalidTag(f"chunk {index} of the array failed authentication: a wrong key or "
                                   "array id, a changed chunk or tag, or another shape, chunking or dtype") from None
    return out


def _crypt_chunk(block: np.ndarray, cell: np.ndarray, *, key: KeyRef, array_id: bytes, operation: str, cipher: str,
                 backend: str, threads: int) -> np.ndarray:
    _, derived = _chunk_key(cell, key, array_id, cipher)
    data = _contiguous(block)
    out = np.empty_like(data)
    crypt = warpcrypt.encrypt if operation == ENCRYPT else warpcrypt.decrypt
    chosen = _backend(backend, data, cipher, decrypt=operation == DECRYPT, threads=threads)
    crypt(cipher, derived.key, derived.iv, data, out=out, backend=chosen, threads=threads)
    return out


def _axes(ndim: int) -> tuple[str, ...]:
    """blockwise's index names for an array's axes (strings, which it sorts)."""
    return tuple(f"axis{axis}" for axis in range(ndim))


def _chunk_indices(array: da.Array, token: str) -> da.Array:
    """An object array with one element per chunk: its index in the chunk
    grid, which blockwise hands to the chunk's task beside the chunk."""
    name = f"warpcrypt-chunk-index-{token}"
    layer: dict[Key, np.ndarray] = {}
    for index in np.ndindex(*array.numblocks):
        cell = np.empty((1,) * array.ndim, dtype=object)
        cell.flat[0] = index
        layer[(name, *index)] = cell
    return da.Array(HighLevelGraph.from_collections(name, layer, dependencies=[]), name,  # type: ignore[no-untyped-call]
                    chunks=tuple((1,) * blocks for blocks in array.numblocks), dtype=object)


def encrypt_array(
    array: da.Array,
    key: HeldKey,
    *,
    cipher: str = "aes-256-gcm",
    array_id: bytes | None = None,
    chunk_bytes: int | None = DEFAULT_CHUNK_BYTES,
    backend: str = "auto",
    threads: int = 0,
) -> EncryptedArray:
    """Encrypts a dask array, lazily like any dask operation: computing (or
    storing) the result runs one task per chunk on the cluster.

    `array` holds NumPy or CuPy chunks of any dtype but object; each chunk
    is encrypted as the bytes it holds, CuPy chunks on their device. `key`:
    an InstalledKey (install_key) or a KeyFile, held by the workers until
    the result has been computed. `cipher`: an AEAD ("aes-256-gcm",
    "aes-128-gcm", "aes-192-gcm", "chacha20-poly1305"), which adds a tags
    array, or a stream cipher ("aes-256-ctr", "chacha20", ...), which does
    not authenticate. `array_id`: 16 bytes that must never serve two
    different arrays under one master key, as a nonce; by default fresh
    random bytes. `chunk_bytes`: rechunk to chunks of about that many bytes
    first, for throughput; None keeps the array's chunks.

    Compute the ciphertext and the tags together (``dask.compute(c, t)``,
    ``da.store([c, t], ...)``) so that each chunk is encrypted once.
    """
    ref = key_ref(key)
    name = _chunk_cipher(cipher)
    if array.dtype.hasobject:
        raise TypeError("an array of Python objects has no bytes to encrypt")
    array_id = new_id() if array_id is None else bytes(array_id)
    if len(array_id) != JOB_ID_LEN:
        raise warpcrypt.InvalidArgument(f"array_id must have {JOB_ID_LEN} bytes")
    if chunk_bytes is not None:
        array = array.rechunk("auto", block_size_limit=chunk_bytes)  # type: ignore[no-untyped-call]
    token = tokenize(ENCRYPT, array.name, array_id, name, ref, backend, threads)
    keys = _chunk_indices(array, token)
    axes = _axes(array.ndim)
    meta = meta_from_array(array, array.ndim, array.dtype)  # type: ignore[no-untyped-call]
    options = {"key": ref, "array_id": array_id, "cipher": name, "backend": backend, "threads": threads}
    if not is_sealed_cipher(name):
        ciphertext = da.blockwise(  # type: ignore[no-untyped-call]
            _crypt_chunk, axes, array, axes, keys, axes,
            # The index array has one element per chunk: pair the two by chunk index.
            align_arrays=False, dtype=array.dtype, meta=meta, name=f"warpcrypt-encrypt-array-{token}",
            operation=ENCRYPT, **options)
        return EncryptedArray(ciphertext, None, array_id, name)
    sealed = da.blockwise(  # type: ignore[no-untyped-call]
        _seal_chunk, axes, array, axes, keys, axes,
        align_arrays=False, dtype=array.dtype, meta=meta, name=f"warpcrypt-seal-array-{token}",
        layout=_layout(array), **options)
    # Each sealing task returns (ciphertext, tag); the two arrays take their halves.
    ciphertext = sealed.map_blocks(operator.itemgetter(0), dtype=array.dtype, meta=meta,
                                   name=f"warpcrypt-ciphertext-{token}")
    tags_meta = meta_from_array(array, array.ndim + 1, np.uint8)  # type: ignore[no-untyped-call]
    tags = sealed.map_blocks(operator.itemgetter(1), dtype=np.uint8, new_axis=array.ndim,
                             chunks=keys.chunks + ((TAG_LEN,),), meta=tags_meta,
                             name=f"warpcrypt-tags-{token}")
    return EncryptedArray(ciphertext, tags, array_id, name)


def decrypt_array(encrypted: EncryptedArray, key: HeldKey, *, backend: str = "auto", threads: int = 0) -> da.Array:
    """Decrypts what encrypt_array returned, lazily. The ciphertext must have
    the chunks it was encrypted with (as stored); with an AEAD, computing a
    chunk that does not authenticate raises InvalidTag naming the chunk.
    `key` as for encrypt_array."""
    ref = key_ref(key)
    name = _chunk_cipher(encrypted.cipher)
    ciphertext = encrypted.ciphertext
    tags_name = encrypted.tags.name if encrypted.tags is not None else None
    token = tokenize(DECRYPT, ciphertext.name, tags_name, encrypted.array_id, name, ref, backend, threads)
    keys = _chunk_indices(ciphertext, token)
    axes = _axes(ciphertext.ndim)
    meta = meta_from_array(ciphertext, ciphertext.ndim, ciphertext.dtype)  # type: ignore[no-untyped-call]
    options = {"key": ref, "array_id": bytes(encrypted.array_id), "cipher": name, "backend": backend,
               "threads": threads}
    if not is_sealed_cipher(name):
        plaintext: da.Array = da.blockwise(  # type: ignore[no-untyped-call]
            _crypt_chunk, axes, ciphertext, axes, keys, axes,
            align_arrays=False, dtype=ciphertext.dtype, meta=meta, name=f"warpcrypt-decrypt-array-{token}",
            operation=DECRYPT, **options)
        return plaintext
    if encrypted.tags is None or encrypted.tags.shape != ciphertext.numblocks + (TAG_LEN,):
        raise ValueError(f"{name} needs the tags array, of shape numblocks + ({TAG_LEN},) = "
                         f"{ciphertext.numblocks + (TAG_LEN,)}")
    tags = encrypted.tags.rechunk(keys.chunks + ((TAG_LEN,),))  # type: ignore[no-untyped-call]
    opened: da.Array = da.blockwise(  # type: ignore[no-untyped-call]
        # "tag" is the tags' last axis, absent from the output: its one chunk
        # is handed over whole.
        _open_chunk, axes, ciphertext, axes, tags, axes + ("tag",), keys, axes,
        align_arrays=False, concatenate=True, dtype=ciphertext.dtype, meta=meta,
        name=f"warpcrypt-open-array-{token}", layout=_layout(ciphertext), **options)
    return opened
