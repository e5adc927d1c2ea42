"""The checkpoint format of :mod:`warpcrypt.torch` (version 2), without
PyTorch: the header is read, authenticated and checked here, and each
tensor's bytes located and opened, so the parsing can be tested and fuzzed
where PyTorch is not installed. :mod:`warpcrypt.torch` only turns tensors
into sealed bytes and back, on their devices.

A checkpoint, in this order:

* a 48-byte prefix, the only bytes read before anything authenticates:
  magic ``WCTORCH\\0``, version (u16, big-endian), AEAD (u8: 1, 2, 3 for
  AES-128/192/256-GCM), a zero byte, a random 16-byte salt, a random 16-byte
  checkpoint id and the header's length (u32, at most :data:`MAX_HEADER_LEN`);
* the header, UTF-8 JSON sealed with the AEAD under nonce 0 and the prefix
  as associated data, then its 16-byte tag: the tensor table (name, dtype,
  shape, device, byte length of each) and the state around the tensors;
* per tensor ``i`` of ``n``, in the table's order, its ciphertext then its
  tag, sealed under nonce ``i + 1`` with associated data binding the
  checkpoint id, ``i``, ``n`` and its table entry.

The key is HKDF-SHA256 of the caller's key and the salt. The file's length
must be exactly what the authenticated header adds up to.
"""

from __future__ import annotations

import json
import math
import os
import re
import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any, TypeVar, Union

from warpcrypt import _native
from warpcrypt._files import _input, _output
from warpcrypt._random import random_bytes
# A length the file claims is never allocated before that many bytes arrive:
# reads ask the stream for a step at a time, as the sealed reader's do.
from warpcrypt._sealed_io import _READ_STEP, _read_exactly
from warpcrypt._typing import PathLike
from warpcrypt.aead import AESGCM
from warpcrypt.exceptions import FormatError, InvalidArgument, InvalidKey, InvalidTag, _tensor_not_authentic

FORMAT = "warpcrypt-torch-checkpoint"
MAGIC = b"WCTORCH\0"
VERSION = 2
# magic, version, AEAD, zero, salt, checkpoint id, header length
_PREFIX = struct.Struct(">8sHBB16s16sI")
PREFIX_LEN = _PREFIX.size
TAG_LEN = 16
# The most read before the header authenticates (with the prefix and tag):
# room for about 100,000 tensors with their names, or megabytes of state.
MAX_HEADER_LEN = 16 << 20
MAX_DIMS = 64
# Nesting of the state around the tensors; deeper input would otherwise end
# in a RecursionError on either side.
MAX_DEPTH = 64
# The most one GCM nonce may seal (SP 800-38D); a larger tensor cannot be
# saved, so a header that lists one is refused.
MAX_TENSOR_BYTES = 2**36 - 32
_AEADS = {1: ("aes-128-gcm", 16), 2: ("aes-192-gcm", 24), 3: ("aes-256-gcm", 32)}
_AEAD_IDS = {name: ident for ident, (name, _) in _AEADS.items()}
_HKDF_INFO = b"warpcrypt torch checkpoint v2"
_HEADER_NONCE = bytes(12)
_DEVICE = re.compile(r"cpu|cuda:[0-9]{1,4}")
# PyTorch's dtypes by the names str(dtype) gives them, with their sizes.
DTYPE_SIZES = {
    "bool": 1, "uint8": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8,
    "uint16": 2, "uint32": 4, "uint64": 8,
    "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8,
    "complex32": 4, "complex64": 8, "complex128": 16,
    "float8_e4m3fn": 1, "float8_e4m3fnuz": 1, "float8_e5m2": 1, "float8_e5m2fnuz": 1, "float8_e8m0fnu": 1,
}
_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}

Source = Union[PathLike, IO[bytes]]
T = TypeVar("T")


@dataclass(frozen=True)
class TensorInfo:
    """One entry of the tensor table: tensor `index` of the checkpoint, at
    `name` (its path in the state, such as ``linear.weight`` or
    ``state[0]['exp_avg']``)."""

    index: int
    name: str
    dtype: str
    shape: tuple[int, ...]
    device: str

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * DTYPE_SIZES[self.dtype]


@dataclass(frozen=True)
class RawTensor:
    """A tensor as bytes in host memory: what :func:`read_raw` returns and
    :func:`write_raw` takes, so the format is usable without PyTorch."""

    dtype: str
    shape: tuple[int, ...]
    data: bytes
    device: str = "cpu"


@dataclass(frozen=True)
class _TensorRef:
    index: int


def checkpoint_aead(key: bytes, aead: str, salt: bytes) -> AESGCM:
    """The checkpoint's own AEAD, keyed by HKDF-SHA256 of `key` and `salt`."""
    ident = _AEAD_IDS.get(aead)
    if ident is None:
        raise InvalidArgument(f"unknown checkpoint AEAD {aead!r}: choose from {', '.join(_AEAD_IDS)}")
    key_len = _AEADS[ident][1]
    if len(key) != key_len:
        raise InvalidKey(f"{aead} takes a {key_len}-byte key, not {len(key)} bytes")
    return AESGCM(_native.hkdf("sha256", key, salt, _HKDF_INFO, key_len))


def check_tensor(info: TensorInfo) -> None:
    """Refuses a table entry that no saved tensor has: an unknown dtype or
    device, more than MAX_DIMS dimensions, or more than MAX_TENSOR_BYTES
    (zero dimensions counted as one, so that no shape overflows where it is
    allocated)."""
    if info.dtype not in DTYPE_SIZES:
        raise FormatError(f"tensor {info.name!r}: unsupported dtype {info.dtype!r}")
    if not _DEVICE.fullmatch(info.device):
        raise FormatError(f"tensor {info.name!r}: unsupported device {info.device!r}")
    if len(info.shape) > MAX_DIMS:
        raise FormatError(f"tensor {info.name!r}: {len(info.shape)} dimensions, more than {MAX_DIMS}")
    size = DTYPE_SIZES[info.dtype]
    for dim in info.shape:
        size *= max(dim, 1)
        if dim < 0 or size > MAX_TENSOR_BYTES:
            raise FormatError(f"tensor {info.name!r}: shape {list(info.shape)} is negative or over "
                              f"{MAX_TENSOR_BYTES} bytes")


def nonce(index: int) -> bytes:
    """Tensor `index`'s nonce; the header has nonce 0."""
    return (index + 1).to_bytes(12, "big")


def associated_data(checkpoint_id: bytes, count: int, info: TensorInfo) -> bytes:
    # JSON, so no name can be read as another split of the same bytes.
    return json.dumps([FORMAT, VERSION, checkpoint_id.hex(), info.index, count, info.name, info.dtype,
                       list(info.shape), info.device, info.nbytes], ensure_ascii=False).encode()


def sealed_header(key: bytes, aead: str, header: bytes, salt: bytes, checkpoint_id: bytes) -> tuple[bytes, AESGCM]:
    """The prefix and the sealed header for a header's JSON bytes, and the
    AEAD that seals the checkpoint's tensors."""
    if len(header) > MAX_HEADER_LEN:
        raise InvalidArgument(f"the checkpoint's header takes {len(header)} bytes, over the limit of "
                              f"{MAX_HEADER_LEN}: too many tensors or too much state besides them")
    sealer = checkpoint_aead(key, aead, salt)
    prefix = _PREFIX.pack(MAGIC, VERSION, _AEAD_IDS[aead], 0, salt, checkpoint_id, len(header))
    return prefix + sealer.encrypt(_HEADER_NONCE, header, prefix), sealer


class Start:
    """A new checkpoint's beginning: its random id, its prefix and sealed
    header (the table of `tensors` and the `state` around them), and the
    AEAD that seals its tensors."""

    def __init__(self, key: bytes, aead: str, tensors: Sequence[TensorInfo], state: Any) -> None:
        self.tensors = tensors
        self.checkpoint_id = random_bytes(16)
        header = json.dumps({"tensors": [{"name": t.name, "dtype": t.dtype, "shape": list(t.shape),
                                          "device": t.device, "nbytes": t.nbytes} for t in tensors],
                             "state": state}, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        self.sealed_header, self.aead = sealed_header(key, aead, header.encode(), random_bytes(16),
                                                      self.checkpoint_id)

    def associated_data(self, info: TensorInfo) -> bytes:
        return associated_data(self.checkpoint_id, len(self.tensors), info)


def body_offsets(tensors: Sequence[TensorInfo]) -> list[int]:
    """Where each tensor's ciphertext starts, counted from the end of the
    sealed header; its tag follows it."""
    offsets, at = [], 0
    for info in tensors:
        offsets.append(at)
        at += info.nbytes + TAG_LEN
    return offsets


def body_length(tensors: Sequence[TensorInfo]) -> int:
    """The bytes after the sealed header: each tensor's ciphertext and tag."""
    return sum(info.nbytes + TAG_LEN for info in tensors)


class Writer:
    """Writes a checkpoint to `stream`: the prefix and header at once, then
    each tensor's ciphertext and tag as :meth:`write_tensor` is given them,
    in the table's order."""

    def __init__(self, stream: IO[bytes], key: bytes, aead: str, tensors: Sequence[TensorInfo],
                 state: Any) -> None:
        self._stream = stream
        self.tensors = tensors
        self.start = Start(key, aead, tensors, state)
        self.aead = self.start.aead
        self._next = 0
        _write_all(stream, self.start.sealed_header)

    def associated_data(self, info: TensorInfo) -> bytes:
        return self.start.associated_data(info)

    def write_tensor(self, info: TensorInfo, ciphertext: object, tag: object) -> None:
        """Writes tensor `info`'s ciphertext and tag (bytes-like, in host
        memory), which must come next."""
        assert info.index == self._next, "tensors are written in the table's order"
        _write_all(self._stream, ciphertext)
        _write_all(self._stream, tag)
        self._next += 1


class Reader:
    """Reads a checkpoint from `stream`: on construction the prefix (48
    bytes) and the sealed header, which must authenticate under `key` before
    it is parsed; then, for each tensor in the table's order,
    :meth:`read_tensor` and :meth:`open_into`; then :meth:`finish`."""

    def __init__(self, stream: IO[bytes], key: bytes) -> None:
        self._stream = stream
        left = _bytes_left(stream)
        prefix = _read_exactly(stream, PREFIX_LEN)
        if len(prefix) < PREFIX_LEN or not prefix.startswith(MAGIC):
            raise FormatError(_not_a_checkpoint(prefix))
        _, version, aead_id, zero, salt, self.checkpoint_id, header_len = _PREFIX.unpack(prefix)
        if version != VERSION:
            raise FormatError(f"unsupported warpcrypt.torch checkpoint version {version}: this release reads "
                              f"version {VERSION}")
        if aead_id not in _AEADS or zero != 0:
            raise FormatError(f"damaged warpcrypt.torch checkpoint: unknown AEAD {aead_id} or flags {zero}")
        if header_len > MAX_HEADER_LEN:
            raise FormatError(f"damaged warpcrypt.torch checkpoint: a header of {header_len} bytes, over the "
                              f"limit of {MAX_HEADER_LEN}")
        if left is not None:
            left -= PREFIX_LEN + header_len + TAG_LEN
            if left < 0:
                raise FormatError("truncated warpcrypt.torch checkpoint: it ends inside its header")
        sealed = _read_exactly(stream, header_len + TAG_LEN)
        if len(sealed) < header_len + TAG_LEN:
            raise FormatError("truncated warpcrypt.torch checkpoint: it ends inside its header")
        aead, key_len = _AEADS[aead_id]
        if len(key) != key_len:
            # The AEAD named is not authenticated yet: a key of another
            # length is a wrong key, or the prefix was changed.
            raise InvalidTag(f"the checkpoint's header did not authenticate: its prefix names {aead}, which takes a "
                             f"{key_len}-byte key, not {len(key)} bytes: a wrong key, or a modified prefix")
        self.aead = checkpoint_aead(key, aead, salt)
        try:
            header = self.aead.decrypt(_HEADER_NONCE, sealed, prefix)
        except InvalidTag:
            raise InvalidTag("the checkpoint's header did not authenticate: wrong key, or the header was "
                             "modified or taken from another checkpoint") from None
        self.tensors, self.state = parse_header(header)
        self.body_start = PREFIX_LEN + header_len + TAG_LEN
        body = body_length(self.tensors)
        if left is not None and left != body:
            raise FormatError(f"{'truncated' if left < body else 'extended'} warpcrypt.torch checkpoint: "
                              f"{left} bytes follow its header, which lists {body}")
        self._next = 0

    def read_tensor(self, info: TensorInfo) -> tuple[bytearray, bytes]:
        """Tensor `info`'s ciphertext and tag, which must come next."""
        assert info.index == self._next, "tensors are read in the table's order"
        ciphertext = bytearray(info.nbytes)
        view = memoryview(ciphertext)
        readinto = getattr(self._stream, "readinto", None)
        done = 0
        while done < len(ciphertext):
            step = view[done:done + _READ_STEP]
            if readinto is not None:
                got = readinto(step) or 0
            else:
                piece = self._stream.read(len(step))
                step[:len(piece)] = piece
                got = len(piece)
            if got == 0:
                break
            done += got
        tag = _read_exactly(self._stream, TAG_LEN)
        if done < len(ciphertext) or len(tag) < TAG_LEN:
            raise FormatError(f"truncated warpcrypt.torch checkpoint: it ends inside tensor {info.name!r}")
        self._next += 1
        return ciphertext, tag

    def open_into(self, info: TensorInfo, ciphertext: object, tag: object, buf: object) -> None:
        """Opens tensor `info` into `buf` (host or GPU memory, as
        :meth:`warpcrypt.aead.AESGCM.decrypt_into`), zeroed unless it
        authenticates."""
        try:
            self.aead.decrypt_into(nonce(info.index), ciphertext, self.associated_data(info), buf, tag=tag)
        except InvalidTag:
            raise _tensor_not_authentic(info.name) from None

    def associated_data(self, info: TensorInfo) -> bytes:
        return associated_data(self.checkpoint_id, len(self.tensors), info)

    def finish(self) -> None:
        """Refuses a stream that goes on after the last tensor."""
        assert self._next == len(self.tensors), "every tensor is read"
        if self._stream.read(1):
            raise FormatError("extended warpcrypt.torch checkpoint: bytes follow its last tensor")


def parse_header(header: bytes) -> tuple[tuple[TensorInfo, ...], Any]:
    """The tensor table and the state, with :class:`_TensorRef` where the
    tensors go, of an authenticated header; FormatError unless it is what
    :class:`Writer` writes."""
    try:
        parsed = json.loads(header.decode(), parse_constant=_no_constant)
    except (ValueError, RecursionError) as error:
        raise FormatError(f"damaged warpcrypt.torch checkpoint header: {error}") from None
    if not isinstance(parsed, dict) or parsed.keys() != {"tensors", "state"} or \
            not isinstance(parsed["tensors"], list):
        raise FormatError("damaged warpcrypt.torch checkpoint header: not a table of tensors and a state")
    tensors = tuple(_tensor_info(index, entry) for index, entry in enumerate(parsed["tensors"]))
    state = _decode_state(parsed["state"], tensors)
    return tensors, state


def _tensor_info(index: int, entry: object) -> TensorInfo:
    if not isinstance(entry, dict) or entry.keys() != {"name", "dtype", "shape", "device", "nbytes"}:
        raise FormatError(f"damaged warpcrypt.torch checkpoint header: tensor entry {index} is malformed")
    name, dtype, shape, device, nbytes = (entry[k] for k in ("name", "dtype", "shape", "device", "nbytes"))
    if not isinstance(name, str) or not isinstance(dtype, str) or not isinstance(device, str) or \
            not isinstance(shape, list) or not all(_is_int(dim) for dim in shape):
        raise FormatError(f"damaged warpcrypt.torch checkpoint header: tensor entry {index} is malformed")
    info = TensorInfo(index, name, dtype, tuple(shape), device)
    check_tensor(info)
    if not _is_int(nbytes) or nbytes != info.nbytes:
        raise FormatError(f"tensor {name!r}: {nbytes!r} bytes listed for a {dtype} tensor of shape {shape}")
    return info


def _decode_state(encoded: object, tensors: Sequence[TensorInfo]) -> Any:
    """The state of a header, checked: every tensor appears exactly once,
    in the table's order, at the path its name gives."""
    found: list[int] = []

    def decode(value: object, path: str, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise FormatError(f"damaged warpcrypt.torch checkpoint header: {path} nests deeper than {MAX_DEPTH}")
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        if isinstance(value, list):
            return [decode(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value)]
        if isinstance(value, dict) and len(value) == 1:
            (kind, body), = value.items()
            if kind == "tensor" and _is_int(body) and body == len(found) < len(tensors) and \
                    tensors[body].name == path:
                found.append(body)
                return _TensorRef(body)
            if kind == "float" and isinstance(body, str) and body in _NON_FINITE:
                return _NON_FINITE[body]
            if kind == "tuple" and isinstance(body, list):
                return tuple(decode(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(body))
            if kind == "dict" and isinstance(body, list):
                return decode_dict(body, path, depth)
        raise FormatError(f"damaged warpcrypt.torch checkpoint header: {path or 'the state'} is malformed")

    def decode_dict(pairs: list[object], path: str, depth: int) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        for pair in pairs:
            if not isinstance(pair, list) or len(pair) != 2 or not _is_key(pair[0]) or pair[0] in result:
                raise FormatError(f"damaged warpcrypt.torch checkpoint header: {path or 'the state'} is malformed")
            result[pair[0]] = decode(pair[1], _path(path, pair[0]), depth + 1)
        return result

    if not (isinstance(encoded, dict) and encoded.keys() == {"dict"} and isinstance(encoded["dict"], list)):
        raise FormatError("damaged warpcrypt.torch checkpoint header: the state is not a dict")
    state = decode_dict(encoded["dict"], "", 0)
    if len(found) != len(tensors):
        raise FormatError(f"damaged warpcrypt.torch checkpoint header: its state holds {len(found)} of "
                          f"{len(tensors)} tensors")
    return state


def encode_state(state: Mapping[Any, Any], is_tensor: Callable[[object], bool]) -> tuple[Any, list[tuple[str, Any]]]:
    """The header's JSON for `state`, and its tensors with their names (paths
    in the state), in the order they are written. TypeError names what
    cannot be stored."""
    found: list[tuple[str, Any]] = []

    def encode(value: object, path: str, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise InvalidArgument(f"{path} nests deeper than {MAX_DEPTH}: warpcrypt.torch refuses it")
        if is_tensor(value):
            found.append((path, value))
            return {"tensor": len(found) - 1}
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, int):
            return int(value)
        if isinstance(value, float):
            return float(value) if math.isfinite(value) else {"float": repr(float(value))}
        if isinstance(value, list):
            return [encode(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value)]
        if isinstance(value, tuple):
            return {"tuple": [encode(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value)]}
        if isinstance(value, Mapping):
            return encode_dict(value, path, depth)
        raise TypeError(f"{path or 'the state'} is a {type(value).__name__}: warpcrypt.torch stores tensors, and "
                        "around them None, bool, int, float, str, and lists, tuples and dicts with str or int keys")

    def encode_dict(value: Mapping[Any, Any], path: str, depth: int) -> dict[str, Any]:
        pairs = []
        for key, item in value.items():
            if not _is_key(key):
                raise TypeError(f"{path or 'the state'} has a key of type {type(key).__name__}: warpcrypt.torch "
                                "stores str and int keys")
            pairs.append([key if isinstance(key, str) else int(key), encode(item, _path(path, key), depth + 1)])
        return {"dict": pairs}

    if not isinstance(state, Mapping):
        raise TypeError(f"state_dict is a {type(state).__name__}, not a mapping")
    return encode_dict(state, "", 0), found


def fill(state: Any, tensors: Sequence[object]) -> Any:
    """`state` with each :class:`_TensorRef` replaced by its tensor."""
    if isinstance(state, _TensorRef):
        return tensors[state.index]
    if isinstance(state, list):
        return [fill(item, tensors) for item in state]
    if isinstance(state, tuple):
        return tuple(fill(item, tensors) for item in state)
    if isinstance(state, dict):
        return {key: fill(item, tensors) for key, item in state.items()}
    return state


def read(source: Source, key: bytes, open_tensor: Callable[[Reader, TensorInfo], T]) -> dict[Any, Any]:
    """The state of the checkpoint at `source` (a path or a binary stream),
    each tensor made by `open_tensor` from the reader and its entry."""
    with _input(source) as stream:
        reader = Reader(stream, key)
        tensors = [open_tensor(reader, info) for info in reader.tensors]
        reader.finish()
    result: dict[Any, Any] = fill(reader.state, tensors)
    return result


def write(target: Source, state: Mapping[Any, Any], key: bytes, aead: str, is_tensor: Callable[[object], bool],
          describe: Callable[[int, str, Any], TensorInfo],
          seal_tensor: Callable[[Writer, TensorInfo, Any], None]) -> None:
    """Writes `state` to `target` (a path, written atomically, or a binary
    stream): `describe` gives each tensor's table entry, and `seal_tensor`
    seals it and hands it to the writer. Everything is checked before the
    first byte is written."""
    encoded, infos, tensors = plan(state, is_tensor, describe)
    # A bad key or AEAD raises before the first byte; a failure after it
    # leaves no file at a path (written atomically) and a stream cut short.
    with _output(target) as stream:
        writer = Writer(stream, key, aead, infos, encoded)
        for info, tensor in zip(infos, tensors):
            seal_tensor(writer, info, tensor)


def plan(state: Mapping[Any, Any], is_tensor: Callable[[object], bool],
         describe: Callable[[int, str, Any], TensorInfo]) -> tuple[Any, list[TensorInfo], list[Any]]:
    """The state as the header holds it, the tensor table, and the tensors
    in its order; InvalidArgument or TypeError for anything a checkpoint
    cannot hold, before a byte is written."""
    encoded, found = encode_state(state, is_tensor)
    infos = [describe(index, name, tensor) for index, (name, tensor) in enumerate(found)]
    for info in infos:
        try:
            check_tensor(info)
        except FormatError as error:
            raise InvalidArgument(f"{error}: warpcrypt.torch cannot save it") from None
    return encoded, infos, [tensor for _, tensor in found]


def read_raw(source: Source, key: bytes) -> dict[Any, Any]:
    """A checkpoint's state with its tensors as :class:`RawTensor`: the
    whole reader, without PyTorch."""
    return read(source, key, _open_raw)


def write_raw(target: Source, state: Mapping[Any, Any], key: bytes, aead: str = "aes-256-gcm") -> None:
    """Writes a state whose tensors are :class:`RawTensor`, without PyTorch."""
    write(target, state, key, aead, lambda value: isinstance(value, RawTensor),
          lambda index, name, raw: TensorInfo(index, name, raw.dtype, tuple(raw.shape), raw.device), _seal_raw)


def _open_raw(reader: Reader, info: TensorInfo) -> RawTensor:
    ciphertext, tag = reader.read_tensor(info)
    reader.open_into(info, ciphertext, tag, ciphertext)
    return RawTensor(info.dtype, info.shape, bytes(ciphertext), info.device)


def _seal_raw(writer: Writer, info: TensorInfo, raw: RawTensor) -> None:
    if len(raw.data) != info.nbytes:
        raise InvalidArgument(f"tensor {info.name!r}: {len(raw.data)} bytes for a {info.dtype} tensor of shape "
                              f"{list(info.shape)}")
    sealed = writer.aead.encrypt(nonce(info.index), raw.data, writer.associated_data(info))
    writer.write_tensor(info, sealed[:-TAG_LEN], sealed[-TAG_LEN:])


def _path(path: str, key: object) -> str:
    return key if not path and isinstance(key, str) else f"{path}[{key!r}]"


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_key(value: object) -> bool:
    return isinstance(value, str) or _is_int(value)


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _not_a_checkpoint(prefix: bytes) -> str:
    if prefix.startswith(b"PK\x03\x04") or prefix.startswith(b"\x80"):
        return ("not a warpcrypt.torch checkpoint of version 2 but a torch.save file (pickle), such as a version 1 "
                "checkpoint: those are refused unread, since reading one means unpickling it before anything "
                "authenticates; load it with the release that wrote it and save it again")
    return "not a warpcrypt.torch checkpoint"


def _bytes_left(stream: IO[bytes]) -> int | None:
    """The bytes from the stream's position to its end, where it can seek."""
    try:
        if not stream.seekable():
            return None
        here = stream.tell()
        end = stream.seek(0, os.SEEK_END)
        stream.seek(here)
    except (AttributeError, OSError, ValueError):
        return None
    return end - here


def _write_all(stream: IO[bytes], data: object) -> None:
    view = memoryview(data).cast("B")  # type: ignore[arg-type]
    while view:
        written = stream.write(view)
        view = view[len(view) if written is None else written:]
