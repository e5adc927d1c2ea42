"""Key derivation for warpcrypt.dask: HKDF-SHA256 (RFC 5869) over the master
key, so that every file of every job and every array chunk gets a key (and
an array chunk its nonce or IV) of its own. docs/dask.md gives the exact
inputs. Workers run these derivations themselves, from the master key they
hold (_keyring.py): no derived key travels in a task.

HKDF is the C library's (wc_hkdf, on OpenSSL); the AEADs and their sizes come
from its table.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import warpcrypt
from warpcrypt import _native
from warpcrypt._random import random_bytes
from warpcrypt.aead import _INFOS

# Each use has its own label, so that no two derivations can ever yield the
# same bytes for different purposes. v2: file keys bind the job id.
SEALED_FILE_LABEL = b"warpcrypt-dask v2 sealed file key"
# Manifests of version 3 and before took a plain-cipher file's IV from this
# derivation too, after its key: the IV is now drawn for each run that
# encrypts the file (new_plain_iv). The key is the derivation's first bytes
# still (HKDF's output does not depend on the length asked for), so the
# files of those jobs open as before.
PLAIN_FILE_LABEL = b"warpcrypt-dask v2 plain file key and iv"
ARRAY_CHUNK_LABEL = b"warpcrypt-dask v1 array chunk key and nonce"
KEY_CHECK_LABEL = b"warpcrypt-dask v1 key check"
MANIFEST_MAC_LABEL = b"warpcrypt-dask v1 manifest mac key"
MANIFEST_MAC_KEY_LEN = 32  # HMAC-SHA256's output size: no shorter key would do

# The sealed-file format (docs/format.md) takes every AEAD of the library.
SEALED_AEADS = _INFOS
# The longest AEAD key; shorter keys are its prefix.
SEALED_SECRET_LEN = max(info.key_size for info in SEALED_AEADS.values())

JOB_ID_LEN = 16
MIN_MASTER_KEY_LEN = 16

# What a derivation gives besides the key: an IV or nonce (bytes), or None.
_IV = TypeVar("_IV", bound="bytes | None", covariant=True)


@dataclass(frozen=True)
class DerivedKey(Generic[_IV]):
    """A derived key and, for an array chunk, its nonce or IV. A file's has
    None: the sealed format draws its own nonces, and a plain-cipher file's
    IV is drawn for each run that encrypts it and recorded in the manifest
    (new_plain_iv). The repr shows the key's length, never its bytes; the IV
    is public. Typed by its IV: ``DerivedKey[bytes]`` always has one."""

    key: bytes = field(repr=False)
    iv: _IV

    def __repr__(self) -> str:
        iv = None if self.iv is None else self.iv.hex()
        return f"DerivedKey(key=<{len(self.key)} secret bytes>, iv={iv!r})"


def hkdf_sha256(ikm: bytes, salt: bytes, info: bytes, length: int) -> bytes:
    """HKDF-SHA256 (RFC 5869): extract, then expand to `length` bytes (1 to
    8160). An empty salt stands for 32 zero bytes."""
    return _native.hkdf("sha256", ikm, salt, info, length)


def check_master_key(key: bytes) -> bytes:
    """The master key as bytes; refuses keys too short to stand for 128 bits."""
    if not isinstance(key, (bytes, bytearray, memoryview)):
        raise TypeError(f"the master key must be bytes, not {type(key).__name__}")
    key = bytes(key)
    if len(key) < MIN_MASTER_KEY_LEN:
        raise warpcrypt.InvalidKey(
            f"the master key has {len(key)} bytes; it needs at least {MIN_MASTER_KEY_LEN} random bytes")
    return key


def read_key_file(path: str) -> bytes:
    """The master key in the file at `path`. As ssh does with a private key,
    a file that its group or others may read or write is refused. The mode
    is checked on the opened file (fstat), so it is that of the bytes read,
    even if the path is replaced meanwhile."""
    with open(path, "rb") as file:
        mode = stat.S_IMODE(os.fstat(file.fileno()).st_mode)
        if mode & 0o077:
            raise warpcrypt.InvalidKey(f"the key file {path} has mode {mode:04o}, so users other than its owner "
                                       f"may read or replace it: chmod 600 {path}")
        return check_master_key(file.read())


def key_check_value(master_key: bytes) -> str:
    """A value that identifies the master key without revealing it (a PRF
    output): the manifest stores it, so a rerun with another key is refused."""
    return _native.hmac("sha256", master_key, KEY_CHECK_LABEL, 32).hex()


def manifest_mac_key(master_key: bytes) -> bytes:
    """The key of the job manifest's HMAC-SHA256 (_manifest.py): derived
    apart from every file and chunk key, so that a MAC reveals nothing about
    them and no file key can forge one."""
    return hkdf_sha256(check_master_key(master_key), b"", MANIFEST_MAC_LABEL, MANIFEST_MAC_KEY_LEN)


def new_id() -> bytes:
    """A fresh random job or array id."""
    return random_bytes(JOB_ID_LEN)


def new_plain_iv(cipher: str) -> bytes:
    """A fresh random IV for one run's encryption of one file under a plain
    cipher. A rerun encrypts a file again under the same derived key, and
    nothing the job can see proves that the file's contents are those it
    encrypted before (a file rewritten in place with its modification time
    set back, a store that lists no version, a manifest rolled back): a
    fresh IV makes each encryption's key stream its own whatever the
    contents."""
    return random_bytes(plain_cipher_info(cipher).iv_size)


def is_sealed_cipher(cipher: str) -> bool:
    return cipher.lower() in SEALED_AEADS


def plain_cipher_info(cipher: str) -> warpcrypt.CipherInfo:
    """The table entry of a plain cipher usable with derived nonces; ECB,
    which takes no IV and shows equal blocks as equal, is refused."""
    info = warpcrypt.cipher_info(cipher)
    if info.iv_size == 0:
        raise warpcrypt.InvalidArgument(f"{info.name} takes no IV; choose a mode with one, such as aes-256-ctr")
    return info


def _check_job_id(job_id: bytes) -> bytes:
    if not isinstance(job_id, (bytes, bytearray)) or len(job_id) != JOB_ID_LEN:
        raise warpcrypt.InvalidArgument(f"job_id must be the job's {JOB_ID_LEN} bytes (the manifest's \"job_id\")")
    return bytes(job_id)


def sealed_file_secret(master_key: bytes, job_id: bytes, identifier: str) -> bytes:
    """The 32 bytes from which a sealed file's key is cut: its first L bytes
    for an AEAD with L-byte keys. (HKDF-SHA256's output up to 32 bytes is one
    block, so this equals HKDF with length L, and opening a file needs no
    knowledge of its AEAD before the worker reads its header.)"""
    info = SEALED_FILE_LABEL + b"\0" + _check_job_id(job_id) + os.fsencode(identifier)
    return hkdf_sha256(master_key, b"", info, SEALED_SECRET_LEN)


def derive_file_key(master_key: bytes, identifier: str, *, job_id: bytes,
                    cipher: str = "aes-256-gcm") -> DerivedKey[None]:
    """The key of one file of one job.

    `identifier` is the file's path relative to the job's input root, with
    "/" between its parts, as the manifest lists it; `job_id` the job's 16
    random bytes (``bytes.fromhex(manifest["job_id"])``). The key opens what
    that job wrote for that identifier, and nothing else: not the same path
    in another job, not another file of this one. A plain-cipher file's IV
    is not derived: its manifest entry records it (``"iv"``, hex).
    """
    name = cipher.lower()
    if is_sealed_cipher(name):
        secret = sealed_file_secret(check_master_key(master_key), job_id, identifier)
        return DerivedKey(secret[: SEALED_AEADS[name].key_size], None)
    return DerivedKey(plain_file_key(master_key, identifier, job_id=job_id, cipher=name), None)


def plain_file_key(master_key: bytes, identifier: str, *, job_id: bytes, cipher: str) -> bytes:
    """derive_file_key's key for a plain cipher."""
    master_key = check_master_key(master_key)
    info = plain_cipher_info(cipher)
    return hkdf_sha256(master_key, b"",
                       PLAIN_FILE_LABEL + b"\0" + _check_job_id(job_id) + info.name.encode() + b"\0"
                       + os.fsencode(identifier), info.key_size)


def chunk_cipher_sizes(cipher: str) -> tuple[str, int, int]:
    """(name, key length, nonce or IV length) of a cipher for array chunks:
    an AEAD of the sealed format, or a plain cipher with an IV."""
    name = cipher.lower()
    if is_sealed_cipher(name):
        return name, SEALED_AEADS[name].key_size, SEALED_AEADS[name].nonce_size
    info = plain_cipher_info(name)
    return info.name, info.key_size, info.iv_size


def derive_chunk_key(master_key: bytes, array_id: bytes, block_index: tuple[int, ...], *,
                     cipher: str = "aes-256-gcm") -> DerivedKey[bytes]:
    """The key and nonce (or IV) of the array chunk at `block_index` (its
    place in the chunk grid, as dask's ``block_id``) of the array
    `array_id`, for `cipher`: an AEAD ("aes-256-gcm", 12-byte nonce) or a
    plain cipher ("aes-256-ctr", its IV)."""
    master_key = check_master_key(master_key)
    name, key_size, nonce_size = chunk_cipher_sizes(cipher)
    position = bytes([len(block_index)]) + b"".join(i.to_bytes(8, "big") for i in block_index)
    material = hkdf_sha256(master_key, bytes(array_id),
                           ARRAY_CHUNK_LABEL + b"\0" + name.encode() + b"\0" + position, key_size + nonce_size)
    return DerivedKey(material[:key_size], material[key_size:])
