"""The CryptoTensors file format, without any tensor library: a safetensors
file whose tensors are encrypted, and whose header is signed.

Layout (safetensors'): an 8-byte little-endian header length N, N bytes of
JSON, then the tensors' bytes. CryptoTensors adds four strings to the
header's ``__metadata__``:

- ``__crypto_keys__``: JSON naming the master key (``enc``: kty, alg, kid)
  and the signing key (``sign``), the version ("1" or "2") and, in version
  2, ``chunk_size``. The keys themselves are never in the file.
- ``__encryption__``: JSON mapping each encrypted tensor to its data key,
  wrapped (AEAD, random 12-byte nonce, no associated data) under the master
  key, and its data's nonce and tag (version 1: the tensor is one message)
  or base nonce and tags (version 2: chunks of ``chunk_size`` bytes, chunk i
  under the base nonce with i added to its last four bytes, big-endian,
  never wrapping; all tags concatenated; an empty tensor is one empty
  message).
- ``__policy__``: Rego access policies; warpcrypt opens only files whose
  local policy is the allow-all default, since it runs no Rego.
- ``__signature__``: Ed25519 over the header serialized canonically
  (:func:`signed_bytes`) without the signature.

The ciphertext has the plaintext's length, so the tensors' offsets are the
plaintext's. Which bytes are authenticated: the header (signature) and each
encrypted tensor (its chunks' tags, under a key of its own: a chunk moved
within or between tensors fails). A tensor left in the clear is not: its
dtype, shape and offsets are signed, its bytes are not. Nothing binds a
file to its newest version: an older file signed by the same key opens.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import reprlib
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, TypeGuard, Union

from warpcrypt import _native
# One bound on a tensor's dimensions for every format of the package:
# NumPy 2's own limit, where a real checkpoint's tensors have 5 at most.
# The safetensors format sets none; bounded, a shape's product costs a
# fixed time, so that every check of a header is linear in its size.
from warpcrypt._checkpoint import MAX_DIMS as MAX_DIMS
from warpcrypt._random import random_bytes
from warpcrypt._tensor_keys import Keys, read_keys
from warpcrypt.aead import AESGCM, ChaCha20Poly1305
from warpcrypt.exceptions import FormatError, InvalidArgument, InvalidKey, InvalidSignature, InvalidTag, Unsupported

# safetensors' own bound on the header, which both readers apply.
MAX_HEADER_BYTES = 100_000_000
LENGTH_BYTES = 8
# The header's one name that is not a tensor's.
METADATA = "__metadata__"
# Every integer of a header is a size or an offset below 2^63.
_SIZE_LIMIT = 1 << 63
_SIZE_DIGITS = len(str(_SIZE_LIMIT))
DEFAULT_CHUNK_SIZE = 2 * 1024 * 1024
NONCE_BYTES = 12
TAG_BYTES = 16
SIGNATURE_BYTES = 64
ALLOW_ALL_POLICY = "package model\nallow = true"
VERSIONS = ("1", "2")
CRYPTO_FIELDS = ("__crypto_keys__", "__encryption__", "__policy__", "__signature__")

# safetensors' dtypes and their bits per element, in the order its writer
# sorts by (the reverse of this order, then by name).
DTYPE_BITS = {
    "BOOL": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8,
    "I16": 16, "U16": 16, "F16": 16, "BF16": 16, "I32": 32, "U32": 32, "F32": 32, "C64": 64, "F64": 64,
    "I64": 64, "U64": 64,
}
_DTYPE_RANK = {name: rank for rank, name in enumerate(DTYPE_BITS)}

# The AEADs by their CryptoTensors names, which are compared without dashes
# and case, as the reference implementation does.
_AEADS: dict[str, tuple[type[AESGCM] | type[ChaCha20Poly1305], int]] = {
    "aes128gcm": (AESGCM, 16),
    "aes256gcm": (AESGCM, 32),
    "chacha20poly1305": (ChaCha20Poly1305, 32),
}

Aead = Union[AESGCM, ChaCha20Poly1305]


def aead_name(alg: object) -> str:
    """The canonical name of a CryptoTensors AEAD ("aes256gcm", ...)."""
    name = alg.replace("-", "").lower() if isinstance(alg, str) else None
    if name not in _AEADS:
        raise Unsupported(f"unknown encryption algorithm {_brief(alg)}: CryptoTensors has {', '.join(_AEADS)}")
    return name


def make_aead(alg: str, key: bytes) -> Aead:
    cls, size = _AEADS[aead_name(alg)]
    if len(key) != size:
        raise InvalidKey(f"{alg} takes a {size}-byte key, not {len(key)} bytes")
    return cls(key)


# ---------------------------------------------------------------- the header


@dataclass(frozen=True)
class Entry:
    """One tensor of the header: its bytes are data[start:end] of the data
    section, which follows the header."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    start: int
    end: int

    @property
    def nbytes(self) -> int:
        return self.end - self.start


@dataclass
class Header:
    """A header as read, before anything in it is trusted."""

    length: int  # N, the JSON's bytes (padding included)
    entries: list[Entry]  # in the order of their offsets
    metadata: dict[str, str] | None

    @property
    def data_start(self) -> int:
        return LENGTH_BYTES + self.length

    @property
    def data_length(self) -> int:
        return self.entries[-1].end if self.entries else 0

    @property
    def encrypted(self) -> bool:
        return self.metadata is not None and "__encryption__" in self.metadata

    def user_metadata(self) -> dict[str, str] | None:
        """__metadata__ without CryptoTensors' own fields."""
        if self.metadata is None:
            return None
        return {k: v for k, v in self.metadata.items() if k not in CRYPTO_FIELDS}


def read_file(stream: IO[bytes], file_size: int, keys: KeySet | None) -> tuple[Header, Crypto | None]:
    """Reads the header of the file open as `stream` (at 0), whose size is
    `file_size`, and decides whether to trust it, in this order: its JSON
    and the types of its entries; for an encrypted file, the signature under
    the caller's key, before any other field is used; the layout (each
    tensor's byte count is its shape's, the tensors tile the data section
    from 0, and the data section ends where the file does); then the
    encryption fields, each tensor's data key unwrapped. Nothing is
    allocated from the file's numbers before they are checked against its
    size. A plain file is refused when keys are given, so that a stripped
    file cannot pass for a verified one; an encrypted one when they are not.
    """
    header = parse_header(_read_exactly(stream, _read_length(stream, file_size), file_size))
    if header.encrypted:
        if keys is None:
            raise InvalidArgument("the file is encrypted (CryptoTensors): pass keys=")
        verify_signature(header, keys)
    elif keys is not None:
        raise FormatError("not a signed CryptoTensors file; keys were given, so it is refused: pass keys=None "
                          "to load a plain safetensors file")
    check_layout(header, file_size)
    return header, (read_crypto(header, keys) if header.encrypted and keys is not None else None)


def read_unverified(stream: IO[bytes], file_size: int) -> Header:
    """The header's syntax and layout, its signature NOT checked: for
    showing what a file claims (warpcrypt-tensors inspect without keys),
    never for loading it."""
    length = _read_length(stream, file_size)
    header = parse_header(_read_exactly(stream, length, file_size))
    check_layout(header, file_size)
    return header


def parse_header(text: bytes) -> Header:
    """The header's JSON, its types checked (not its layout)."""
    try:
        decoded = _json_object(text.decode("utf-8"), "the header")
    except UnicodeDecodeError as error:
        raise FormatError(f"the header is not JSON: {error}") from None
    metadata = decoded.pop(METADATA, None)
    if metadata is not None:
        if not (isinstance(metadata, dict) and all(isinstance(v, str) for v in metadata.values())):
            raise FormatError(f"{METADATA} is not an object of strings")
        if not all(_is_text(k) and _is_text(v) for k, v in metadata.items()):
            raise FormatError(f"{METADATA} holds a string that is not Unicode text (half of a surrogate pair)")
    entries = [_entry(name, value) for name, value in decoded.items()]
    # Sorted by offsets, as safetensors orders them; a stable sort keeps the
    # file's order for ties (empty tensors), which is how the writer signed.
    entries.sort(key=lambda e: (e.start, e.end))
    return Header(len(text), entries, metadata)


def check_layout(header: Header, file_size: int) -> None:
    position = 0
    for entry in header.entries:
        if entry.start != position or entry.end < entry.start:
            raise FormatError(f"tensor {_brief(entry.name)}: data_offsets [{entry.start}, {entry.end}] do not follow "
                              f"the tensor before it, which ends at {position}")
        bits = tensor_bits(entry.dtype, entry.shape)
        if bits % 8 or bits // 8 != entry.nbytes:
            raise FormatError(f"tensor {_brief(entry.name)}: a {entry.dtype} tensor of shape "
                              f"{_brief(list(entry.shape))} holds {size_text(bits)}, but its data_offsets give "
                              f"{entry.nbytes}")
        position = entry.end
    held = file_size - header.data_start
    if held < position:
        raise FormatError(f"truncated: the tensors need {position} bytes of data, the file holds {held}")
    if held > position:
        raise FormatError(f"{held - position} bytes follow the last tensor's data")


def tensor_bits(dtype: str, shape: Sequence[int]) -> int:
    """The bits a tensor of this dtype and shape holds (whole bytes or not).
    A shape of more than MAX_DIMS dimensions is refused before its product,
    whose cost grows with the square of the dimensions; only a writer meets
    this refusal, since a reader refuses such a shape as it parses it."""
    if len(shape) > MAX_DIMS:
        raise InvalidArgument(f"a shape of {len(shape)} dimensions, more than {MAX_DIMS}")
    return DTYPE_BITS[dtype] * math.prod(shape)


def size_text(bits: int) -> str:
    """A tensor's size in a message: whole bytes, else bits; never a float,
    which the product of a shape can overflow."""
    if bits > 8 * _SIZE_LIMIT:
        return "more than 2^63 bytes"
    return f"{bits // 8} bytes" if bits % 8 == 0 else f"{bits} bits"


def signed_bytes(entries: Sequence[Entry], metadata: Mapping[str, str] | None) -> bytes:
    """What the signature covers: the header as the reference
    implementation serializes it, without __signature__."""
    unsigned = None if metadata is None else {k: v for k, v in metadata.items() if k != "__signature__"}
    return _serialize(entries, unsigned)


def header_bytes(entries: Sequence[Entry], metadata: Mapping[str, str] | None) -> bytes:
    """The header as written: the same serialization, signature included,
    padded with spaces to a multiple of 8 bytes as safetensors pads."""
    text = _serialize(entries, metadata)
    return text + b" " * (-len(text) % LENGTH_BYTES)


def _serialize(entries: Sequence[Entry], metadata: Mapping[str, str] | None) -> bytes:
    """serde_json's compact form of a safetensors header, as the reference
    implementation writes and verifies it: __metadata__ first with its keys
    sorted, then the tensors in the order of their offsets, each as dtype,
    shape, data_offsets. Python's json escapes strings as serde_json does
    (the same short escapes, \\u00xx for other control characters, nothing
    else escaped)."""
    document: dict[str, Any] = {}
    if metadata is not None:
        document[METADATA] = {k: metadata[k] for k in sorted(metadata)}
    for entry in entries:
        document[entry.name] = {"dtype": entry.dtype, "shape": list(entry.shape),
                                "data_offsets": [entry.start, entry.end]}
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()


# ---------------------------------------------------------------- keys


@dataclass(frozen=True)
class KeyName:
    """A key as the header names it (never the key itself)."""

    kty: str
    alg: str
    kid: str | None = None
    jku: str | None = None

    def to_json(self) -> dict[str, str]:
        named = {"alg": self.alg, "kid": self.kid, "kty": self.kty, "jku": self.jku}
        return {k: v for k, v in sorted(named.items()) if v is not None}


@dataclass(frozen=True)
class _Jwk:
    name: KeyName
    secret: bytes | None = field(repr=False)  # k for oct, d for okp
    public: bytes | None = None  # x for okp


class KeySet:
    """The caller's keys: JWKs as CryptoTensors uses them. A master key is
    ``{"kty": "oct", "alg": "aes256gcm", "kid": ..., "k": base64}``; a
    signing key ``{"kty": "okp", "alg": "ed25519", "kid": ..., "x": base64,
    "d": base64}``, where ``d`` is needed to sign and ``x`` alone verifies.
    Base64 is standard (CryptoTensors' choice) or URL-safe (JWK's, RFC 7517).
    A header names its keys by kid; the keys come from here only.

    `keys` is any source warpcrypt._tensor_keys reads (JWKs, a key file, an
    environment variable), or a KeySet already read; every message names
    that source, so that a user can tell which keys fell short."""

    _keys: list[_Jwk]
    origin: str  # "the key file 'keys.jwk'", as messages name it

    def __init__(self, keys: Keys) -> None:
        if isinstance(keys, KeySet):
            self._keys, self.origin = keys._keys, keys.origin
            return
        jwks, self.origin = read_keys(keys)
        if isinstance(jwks, Mapping) and "keys" in jwks:
            jwks = jwks["keys"]
        if isinstance(jwks, Mapping):
            jwks = [jwks]
        if not isinstance(jwks, (list, tuple)) or not jwks:
            raise InvalidArgument(f"{self.origin} must be a JWK, a list of JWKs or a JWK Set ({{'keys': [...]}})")
        self._keys = [_parse_jwk(index, jwk, self.origin) for index, jwk in enumerate(jwks)]

    def __repr__(self) -> str:
        named = ", ".join(f"{k.name.kty}:{k.name.kid or '-'}" for k in self._keys)
        return f"KeySet({named} from {self.origin})"

    def master_key(self, name: KeyName) -> bytes:
        jwk = self._find(name, "oct", "master key", "the tensors' data keys cannot be unwrapped")
        if jwk.secret is None:
            raise InvalidKey(f"the master key {_describe(name)} has no 'k'")
        if jwk.name.alg and aead_name(jwk.name.alg) != aead_name(name.alg):
            raise InvalidKey(f"the master key {_describe(name)} is for {jwk.name.alg}, the file uses {name.alg}")
        return jwk.secret

    def verifying_key(self, name: KeyName) -> bytes:
        jwk = self._find(name, "okp", "signature key", "the header's signature cannot be verified")
        assert jwk.public is not None
        return jwk.public

    def writing_keys(self) -> tuple[_Jwk, _Jwk]:
        """The master key and the signing key to write with: exactly one of
        each kind."""
        masters = [k for k in self._keys if k.name.kty == "oct"]
        signers = [k for k in self._keys if k.name.kty == "okp"]
        rule = "writing takes exactly one master key and one signing key"
        if not masters:
            raise InvalidArgument(f"no master key (kty 'oct') among {self.origin}: {rule}")
        if not signers:
            raise InvalidArgument(f"no signing key (kty 'okp') among {self.origin}: {rule}")
        if len(masters) > 1 or len(signers) > 1:
            raise InvalidArgument(f"{len(masters)} master keys and {len(signers)} signing keys among {self.origin}: "
                                  f"{rule}")
        master, signer = masters[0], signers[0]
        if master.secret is None:
            raise InvalidKey("the master key has no 'k'")
        if signer.secret is None:
            raise InvalidKey(f"the signing key {_describe(signer.name)} of {self.origin} has no 'd': a public key "
                             "verifies but cannot sign")
        make_aead(master.name.alg or "aes256gcm", master.secret)  # its length fits its algorithm
        return master, signer

    def _find(self, name: KeyName, kty: str, what: str, consequence: str) -> _Jwk:
        kinds = [k for k in self._keys if k.name.kty == kty]
        found = [k for k in kinds if k.name.kid == name.kid] if name.kid is not None else kinds
        if not found:
            raise InvalidKey(f"no {what} {_describe(name)} among {self.origin}: {consequence}")
        if len(found) > 1:
            raise InvalidKey(f"{len(found)} keys of {self.origin} match the {what} {_describe(name)}: give one")
        return found[0]


def generate_keys(*, alg: str = "aes256gcm", enc_kid: str | None = None,
                  sign_kid: str | None = None) -> dict[str, list[dict[str, str]]]:
    """A new master key and signing key, as a JWK Set."""
    _, size = _AEADS[aead_name(alg)]
    seed = random_bytes(32)
    public = _native.ed25519_public_key(seed)
    enc = {"kty": "oct", "alg": aead_name(alg), "k": _b64(random_bytes(size))}
    sign = {"kty": "okp", "alg": "ed25519", "x": _b64(public), "d": _b64(seed)}
    if enc_kid is not None:
        enc["kid"] = enc_kid
    if sign_kid is not None:
        sign["kid"] = sign_kid
    return {"keys": [enc, sign]}


def _parse_jwk(index: int, jwk: object, origin: str) -> _Jwk:
    where = f"key {index} of {origin}"
    if not isinstance(jwk, Mapping):
        raise InvalidArgument(f"{where} is not a JWK (a JSON object)")
    kty = jwk.get("kty")
    kty = kty.lower() if isinstance(kty, str) else kty
    kid, jku, alg = jwk.get("kid"), jwk.get("jku"), jwk.get("alg", "")
    for label, value in (("kid", kid), ("jku", jku)):
        if value is not None and not isinstance(value, str):
            raise InvalidArgument(f"{where}: '{label}' is not a string")
    if not isinstance(alg, str):
        raise InvalidArgument(f"{where}: 'alg' is not a string")
    if kid is not None:
        where = f"key {_brief(kid)} of {origin}"
    if kty == "oct":
        secret = _jwk_bytes(jwk, "k", where, None)
        if alg:
            try:
                make_aead(alg, secret)
            except (Unsupported, InvalidKey) as error:
                raise type(error)(f"{where}: {error}") from None
        return _Jwk(KeyName("oct", aead_name(alg) if alg else "", kid, jku), secret)
    if kty == "okp":
        if alg and alg.upper() != "ED25519":
            raise Unsupported(f"{where}: signature algorithm {_brief(alg)}: CryptoTensors signs with ed25519")
        crv = jwk.get("crv", "Ed25519")
        if crv != "Ed25519":
            raise Unsupported(f"{where}: curve {_brief(crv)}: CryptoTensors signs with Ed25519")
        seed = _jwk_bytes(jwk, "d", where, 32) if "d" in jwk else None
        public = _jwk_bytes(jwk, "x", where, 32) if "x" in jwk else None
        if seed is not None:
            derived = _native.ed25519_public_key(seed)
            if public is not None and public != derived:
                raise InvalidKey(f"{where}: 'x' is not the public key of 'd'")
            public = derived
        if public is None:
            raise InvalidKey(f"{where}: an okp key needs 'x' (to verify) or 'd' (to sign)")
        return _Jwk(KeyName("okp", "ed25519", kid, jku), seed, public)
    raise Unsupported(f"{where}: key type {_brief(jwk.get('kty'))}: CryptoTensors uses 'oct' (master) and 'okp' "
                      "(signing) keys")


def _jwk_bytes(jwk: Mapping[str, object], member: str, where: str, size: int | None) -> bytes:
    value = jwk.get(member)
    if not isinstance(value, str):
        raise InvalidKey(f"{where}: '{member}' is missing or not a string")
    try:
        if "-" in value or "_" in value or len(value) % 4:
            raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
        else:
            raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidKey(f"{where}: '{member}' is not base64") from None
    if size is not None and len(raw) != size:
        raise InvalidKey(f"{where}: '{member}' is {len(raw)} bytes, not {size}")
    return raw


def _describe(name: KeyName) -> str:
    return _brief(name.kid) if name.kid is not None else "(no kid)"


# ---------------------------------------------------------------- sealing


@dataclass
class Sealing:
    """How one tensor is encrypted: the AEAD keyed for it, and the nonce and
    tag of each message. A CryptoTensors tensor has a data key of its own,
    which the header carries wrapped under the master key. The tensors of a
    warpcrypt.torch checkpoint, which the same loader and writer move, share
    the checkpoint's key and have no data key, but each is one message whose
    associated data binds its place in the checkpoint."""

    aead: Aead = field(repr=False)
    nonces: list[bytes]
    tags: bytearray  # 16 bytes per message, in order (filled in as a writer seals)
    chunk_size: int | None  # None: the whole tensor is one message (version 1)
    data_key: bytes = field(default=b"", repr=False)
    associated_data: bytes | None = None  # of a one-message tensor

    def messages(self, nbytes: int) -> list[tuple[int, int]]:
        """Each message's [start, end) within the tensor."""
        if self.chunk_size is None or nbytes == 0:
            return [(0, nbytes)] if self.nonces else []
        return [(s, min(s + self.chunk_size, nbytes)) for s in range(0, nbytes, self.chunk_size)]


@dataclass
class Crypto:
    """An encrypted file's verified crypto: the keys' names and each
    encrypted tensor's sealing."""

    version: str
    chunk_size: int | None
    enc: KeyName
    sign: KeyName
    sealings: dict[str, Sealing]


@dataclass(frozen=True)
class Claims:
    """What an encrypted header says of its encryption: the format version,
    the chunk size (None in version 1), the keys' names, and each encrypted
    tensor's __encryption__ entry, by name, its fields not yet read. Only
    claims until the header's signature verifies."""

    version: str
    chunk_size: int | None
    enc: KeyName
    sign: KeyName
    sealed: dict[str, Any]


def verify_signature(header: Header, keys: KeySet) -> None:
    """Verifies the header's signature under the caller's key for the
    signer it names. Nothing but the signer's name is read before the
    signature verifies."""
    assert header.metadata is not None
    metadata = header.metadata
    sign = _signer(_crypto_keys(metadata))
    public = keys.verifying_key(sign)
    try:
        signature = base64.b64decode(metadata["__signature__"], validate=True)
    except (binascii.Error, ValueError):
        raise InvalidSignature("the header's signature is not base64") from None
    if len(signature) != SIGNATURE_BYTES or not _native.ed25519_verify(
            public, signature, signed_bytes(header.entries, metadata)):
        raise InvalidSignature(f"the header's signature does not verify under the key {_describe(sign)}: "
                               "the header was changed, or another key signed it")


def read_claims(header: Header) -> Claims:
    """What the encrypted `header` claims, each field's syntax checked: read
    once its signature has verified, or to show what a file claims
    (warpcrypt-tensors inspect without keys), never to open one unverified."""
    assert header.metadata is not None
    metadata = header.metadata
    described = _crypto_keys(metadata)
    sign = _signer(described)
    version = described.get("version")
    if version not in VERSIONS:
        raise Unsupported(f"CryptoTensors version {_brief(version)}: warpcrypt reads versions {', '.join(VERSIONS)}")
    chunk_size = described.get("chunk_size", DEFAULT_CHUNK_SIZE if version == "2" else None)
    if version == "1":
        chunk_size = None
    elif not (type(chunk_size) is int and chunk_size > 0):
        raise FormatError(f"chunk_size {_brief(chunk_size)} is not a positive integer")
    enc = _key_name(described.get("enc"), "oct", "__crypto_keys__.enc")
    sealed = _json_object(metadata["__encryption__"], "__encryption__")
    tensors = {entry.name for entry in header.entries}
    for name in sealed:
        if name not in tensors:
            raise FormatError(f"__encryption__ names {_brief(name)}, which is no tensor of the file")
    return Claims(version, chunk_size, enc, sign, sealed)


def read_crypto(header: Header, keys: KeySet) -> Crypto:
    """The encryption fields of a header whose signature verified, each
    tensor's data key unwrapped with the caller's master key."""
    assert header.metadata is not None
    claims = read_claims(header)
    _check_policy(header.metadata["__policy__"])
    master = make_aead(claims.enc.alg, keys.master_key(claims.enc))
    sizes = {entry.name: entry.nbytes for entry in header.entries}
    sealings = {name: _sealing(name, sealed, sizes[name], master, claims.enc.alg, claims.chunk_size)
                for name, sealed in claims.sealed.items()}
    return Crypto(claims.version, claims.chunk_size, claims.enc, claims.sign, sealings)


def _crypto_keys(metadata: Mapping[str, str]) -> dict[str, Any]:
    """__crypto_keys__, once every CryptoTensors field is known present."""
    for name in CRYPTO_FIELDS:
        if name not in metadata:
            raise FormatError(f"an encrypted header without {name}")
    return _json_object(metadata["__crypto_keys__"], "__crypto_keys__")


def _signer(described: Mapping[str, Any]) -> KeyName:
    return _key_name(described.get("sign"), "okp", "__crypto_keys__.sign")


def _sealing(name: str, sealed: object, nbytes: int, master: Aead, alg: str, chunk_size: int | None) -> Sealing:
    where = f"tensor {_brief(name)}"
    fields = ("wrapped_key", "key_iv", "key_tag") + (("iv", "tag") if chunk_size is None else ("base_iv", "tags"))
    if not isinstance(sealed, dict) or set(sealed) != set(fields):
        found = list(sealed) if isinstance(sealed, dict) else type(sealed).__name__
        raise FormatError(f"{where}: its __encryption__ entry holds {_brief(found)}, not {list(fields)}")
    raw = {key: _b64_field(sealed[key], f"{where}: {key}") for key in fields}
    _check_length(where, "key_iv", raw["key_iv"], NONCE_BYTES)
    _check_length(where, "key_tag", raw["key_tag"], TAG_BYTES)
    try:
        data_key = master.decrypt(raw["key_iv"], raw["wrapped_key"] + raw["key_tag"], None)
    except InvalidTag:
        raise InvalidTag(f"{where}: its data key does not unwrap: the master key is not the one it was "
                         "wrapped with") from None
    aead = make_aead(alg, data_key)
    if chunk_size is None:
        if nbytes == 0 and not raw["iv"] and not raw["tag"]:
            return Sealing(aead, [], bytearray(), None, data_key)  # the reference writes an empty tensor unencrypted
        _check_length(where, "iv", raw["iv"], NONCE_BYTES)
        _check_length(where, "tag", raw["tag"], TAG_BYTES)
        return Sealing(aead, [raw["iv"]], bytearray(raw["tag"]), None, data_key)
    _check_length(where, "base_iv", raw["base_iv"], NONCE_BYTES)
    count = max(1, -(-nbytes // chunk_size))
    _check_length(where, "tags", raw["tags"], count * TAG_BYTES)
    return Sealing(aead, chunk_nonces(raw["base_iv"], count, where), bytearray(raw["tags"]), chunk_size, data_key)


def chunk_nonces(base: bytes, count: int, where: str) -> list[bytes]:
    """Chunk i's nonce: the base with i added to its last four bytes
    (big-endian); a sum past 2^32 - 1 is refused, as the reference does."""
    (counter,) = struct.unpack(">I", base[8:])
    if counter + count - 1 > 0xFFFFFFFF:
        raise FormatError(f"{where}: {count} chunks overflow the nonce counter")
    prefix = base[:8]
    return [prefix + struct.pack(">I", counter + i) for i in range(count)]


def new_sealing(alg: str, nbytes: int, chunk_size: int | None) -> Sealing:
    """A fresh data key for a tensor of `nbytes`, and its nonces; the tags
    are filled in as the tensor is sealed."""
    _, size = _AEADS[aead_name(alg)]
    data_key = random_bytes(size)
    if chunk_size is None:
        count = 1 if nbytes else 0
        nonces = [random_bytes(NONCE_BYTES)] if nbytes else []
    else:
        count = max(1, -(-nbytes // chunk_size))
        if count > 0x100000000:
            raise InvalidArgument(f"{nbytes} bytes in chunks of {chunk_size} are more than 2^32 chunks")
        # A base whose counter has room for every chunk, so no reader
        # refuses it for overflowing.
        prefix = random_bytes(8)
        counter = int.from_bytes(random_bytes(4), "big") % (0x100000000 - count + 1)
        nonces = chunk_nonces(prefix + struct.pack(">I", counter), count, "")
    return Sealing(make_aead(alg, data_key), nonces, bytearray(TAG_BYTES * count), chunk_size, data_key)


def encryption_entry(sealing: Sealing, wrapped: bytes) -> dict[str, str]:
    """A tensor's __encryption__ entry, in the reference's field order;
    `wrapped` is the wrapped key's nonce, ciphertext and tag."""
    entry = {"wrapped_key": _b64(wrapped[NONCE_BYTES:-TAG_BYTES]), "key_iv": _b64(wrapped[:NONCE_BYTES]),
             "key_tag": _b64(wrapped[-TAG_BYTES:])}
    if sealing.chunk_size is None:
        entry.update(iv=_b64(sealing.nonces[0] if sealing.nonces else b""), tag=_b64(sealing.tags))
    else:
        entry.update(base_iv=_b64(sealing.nonces[0]), tags=_b64(sealing.tags))
    return entry


def wrap_key(master: Aead, data_key: bytes) -> bytes:
    nonce = random_bytes(NONCE_BYTES)
    return nonce + master.encrypt(nonce, data_key, None)


def crypto_metadata(version: str, chunk_size: int | None, enc: KeyName, sign: KeyName,
                    entries: Mapping[str, dict[str, str]]) -> dict[str, str]:
    """__crypto_keys__, __encryption__ and __policy__ as the reference
    writes them (sorted keys for the first, entries sorted by name)."""
    described: dict[str, object] = {"enc": enc.to_json(), "sign": sign.to_json(), "version": version}
    if chunk_size is not None:
        described["chunk_size"] = chunk_size
    compact = {"separators": (",", ":"), "ensure_ascii": False}
    return {
        "__crypto_keys__": json.dumps(described, sort_keys=True, **compact),  # type: ignore[arg-type]
        "__encryption__": json.dumps({k: entries[k] for k in sorted(entries)}, **compact),  # type: ignore[arg-type]
        "__policy__": json.dumps({"local": ALLOW_ALL_POLICY, "remote": ALLOW_ALL_POLICY}, **compact),  # type: ignore[arg-type]
    }


def sign_header(entries: Sequence[Entry], metadata: dict[str, str], seed: bytes) -> dict[str, str]:
    signature = _native.ed25519_sign(seed, signed_bytes(entries, metadata))
    return {**metadata, "__signature__": _b64(signature)}


def layout(tensors: Iterable[tuple[str, str, tuple[int, ...]]]) -> list[Entry]:
    """The entries of tensors (name, dtype, shape) in the order safetensors
    writes them: the widest dtypes first, then by name, each right after
    the one before."""
    entries, position = [], 0
    for name, dtype, shape in sorted(tensors, key=lambda t: (-_DTYPE_RANK[t[1]], t[0])):
        if name == METADATA:
            raise InvalidArgument(f"the tensor name {METADATA!r} is reserved: the header's metadata goes by it")
        if not _is_text(name):
            raise InvalidArgument(f"the tensor name {_brief(name)} is not Unicode text (half of a surrogate pair)")
        bits = tensor_bits(dtype, shape)
        if bits % 8:
            raise InvalidArgument(f"tensor {name!r}: {bits} bits is not whole bytes")
        entries.append(Entry(name, dtype, shape, position, position + bits // 8))
        position += bits // 8
    return entries


def check_user_metadata(metadata: Mapping[str, str] | None) -> dict[str, str] | None:
    if metadata is None:
        return None
    if not isinstance(metadata, Mapping) or not all(isinstance(k, str) and isinstance(v, str)
                                                    for k, v in metadata.items()):
        raise InvalidArgument("metadata must map strings to strings")
    if not all(_is_text(k) and _is_text(v) for k, v in metadata.items()):
        raise InvalidArgument("metadata holds a string that is not Unicode text (half of a surrogate pair)")
    taken = sorted(set(metadata) & set(CRYPTO_FIELDS))
    if taken:
        raise InvalidArgument(f"metadata may not set {', '.join(taken)}: CryptoTensors writes those")
    return dict(metadata)


# ---------------------------------------------------------------- helpers


def _entry(name: str, value: object) -> Entry:
    where = f"tensor {_brief(name)}"
    if not _is_text(name):
        raise FormatError(f"{where}: its name is not Unicode text (half of a surrogate pair)")
    if not isinstance(value, dict) or set(value) != {"dtype", "shape", "data_offsets"}:
        found = list(value) if isinstance(value, dict) else type(value).__name__
        raise FormatError(f"{where}: holds {_brief(found)}, not dtype, shape and data_offsets")
    dtype, shape, offsets = value["dtype"], value["shape"], value["data_offsets"]
    if not isinstance(dtype, str) or dtype not in DTYPE_BITS:
        raise FormatError(f"{where}: unknown dtype {_brief(dtype)}")
    if isinstance(shape, list) and len(shape) > MAX_DIMS:
        raise FormatError(f"{where}: {len(shape)} dimensions, more than {MAX_DIMS}")
    if not (isinstance(shape, list) and all(_is_size(d) for d in shape)):
        raise FormatError(f"{where}: shape {_brief(shape)} is not a list of sizes")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(_is_size(o) for o in offsets)):
        raise FormatError(f"{where}: data_offsets {_brief(offsets)} is not two offsets")
    return Entry(name, dtype, tuple(shape), offsets[0], offsets[1])


def _is_size(value: object) -> bool:
    return type(value) is int and 0 <= value < _SIZE_LIMIT


def _is_text(value: object) -> TypeGuard[str]:
    """Whether `value` is a string UTF-8 can hold. A JSON escape can give
    half of a surrogate pair, which serde_json (safetensors, cryptotensors)
    refuses and which no header can be serialized with, to be signed or
    checked."""
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_BRIEF = reprlib.Repr()
_BRIEF.maxstring = _BRIEF.maxother = 120
_BRIEF.maxlist = _BRIEF.maxtuple = 8


def _brief(value: object) -> str:
    """`value`, from a header, as a message quotes it: its repr, cut short,
    so that a refusal stays one short line however large the header."""
    return _BRIEF.repr(value)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose names are unique: a repeated name could make two
    readers see two different headers."""
    result: dict[str, Any] = {}
    for name, value in pairs:
        if name in result:
            raise ValueError(f"the name {_brief(name)} appears twice")
        result[name] = value
    return result


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _integer(digits: str) -> int:
    """A JSON integer of at most as many digits as a size has: converting
    digits costs time that grows with the square of their count, and
    Python's own guard (4,300 digits) is a setting of the whole process,
    which an application may lift."""
    count = len(digits.lstrip("-"))
    if count > _SIZE_DIGITS:
        raise ValueError(f"an integer of {count} digits is larger than any size")
    return int(digits)


def _json_object(text: str, what: str) -> dict[str, Any]:
    """A JSON object as a header holds one: no name repeated, no NaN or
    Infinity, no integer longer than a size."""
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant, parse_int=_integer)
    except (ValueError, RecursionError) as error:
        raise FormatError(f"{what} is not JSON: {error}") from None
    if not isinstance(value, dict):
        raise FormatError(f"{what} is not a JSON object")
    return value


def _key_name(value: object, kty: str, what: str) -> KeyName:
    if not isinstance(value, dict) or not _is_text(value.get("kty")) or value["kty"].lower() != kty:
        raise FormatError(f"{what} does not name a key of type {kty!r}")
    alg, kid, jku = value.get("alg"), value.get("kid"), value.get("jku")
    if not _is_text(alg) or any(v is not None and not _is_text(v) for v in (kid, jku)):
        raise FormatError(f"{what}: alg, kid and jku must be strings of Unicode text")
    if kty == "okp" and alg.upper() != "ED25519":
        raise Unsupported(f"signature algorithm {_brief(alg)}: warpcrypt verifies ed25519")
    return KeyName(kty, aead_name(alg) if kty == "oct" else "ed25519", kid, jku)


def _check_policy(text: str) -> None:
    policy = _json_object(text, "__policy__")
    if policy.get("local") != ALLOW_ALL_POLICY:
        raise Unsupported("the file carries an access policy (Rego) other than allow-all; warpcrypt does not "
                          "evaluate Rego policies, so it refuses the file rather than ignore its policy")


def _check_length(where: str, name: str, value: bytes, size: int) -> None:
    if len(value) != size:
        raise FormatError(f"{where}: {name} is {len(value)} bytes, not {size}")


def _read_length(stream: IO[bytes], file_size: int) -> int:
    """The header's length, checked against the limit and the file's size."""
    (length,) = struct.unpack("<Q", _read_exactly(stream, LENGTH_BYTES, file_size))
    if length > MAX_HEADER_BYTES:
        raise FormatError(f"a header of {length} bytes is over the limit of {MAX_HEADER_BYTES} bytes")
    if length > file_size - LENGTH_BYTES:
        raise FormatError(f"truncated: the header is {length} bytes, but only {file_size - LENGTH_BYTES} "
                          "bytes follow its length")
    return int(length)


def _read_exactly(stream: IO[bytes], size: int, file_size: int) -> bytes:
    data = stream.read(size)
    if data is None or len(data) != size:
        raise FormatError(f"truncated: a file of {file_size} bytes is too short for a safetensors header")
    return data


def _b64_field(value: object, what: str) -> bytes:
    if isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            pass
    raise FormatError(f"{what} is not base64")


def _b64(data: bytes | bytearray) -> str:
    return base64.b64encode(data).decode()

