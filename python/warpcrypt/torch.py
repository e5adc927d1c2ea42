"""Encrypted PyTorch checkpoints, sealed on the device each tensor lives on.

:func:`save` seals every tensor of a state_dict with AES-GCM where it is: a
CUDA tensor on its GPU, so no plaintext weight crosses PCIe or touches host
memory; a CPU tensor on the CPU. :func:`load` opens each tensor on the
device ``map_location`` puts it on, and releases it only once its tag
matched.

Nothing in a checkpoint is parsed before it authenticates, and nothing is
unpickled at all: the file is warpcrypt's own format (``warpcrypt._checkpoint``
describes it), not a ``torch.save`` file. A fixed 48-byte prefix gives the
length of a sealed header, at most 16 MiB; the header (the tensors' names,
dtypes, shapes, devices and lengths, and the state around them: ints,
floats, strings, lists, tuples and dicts, such as an optimizer's
``state_dict``) is parsed only once its tag matched, and each tensor's
length is checked against it, and the file's length against their sum,
before anything is allocated. Each tensor is sealed with associated data
that binds the checkpoint's random id, the tensor's position, the count and
its table entry: a tensor or header moved, dropped, repeated or taken from
another checkpoint fails to open.

A checkpoint at a path moves its tensors as :mod:`warpcrypt.safetensors`
moves encrypted weights: saved through pinned memory into a file that many
threads fill at once, and loaded by several readers through pinned memory
into each tensor's own allocation, a CUDA tensor opened on its device. A
file object (such as a :class:`warpcrypt.SealedWriter`) is written and read
in order, a tensor at a time.

The key never enters the file: keep it in a key manager, not beside the
checkpoint.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Union

import torch  # type: ignore[import-not-found, unused-ignore]

from warpcrypt import _checkpoint
from warpcrypt._checkpoint import Reader, TensorInfo, Writer
from warpcrypt._cryptotensors import Entry, Sealing
from warpcrypt._files import _input, _is_path
from warpcrypt.aead import AESGCM
from warpcrypt.exceptions import FormatError, InvalidArgument
from warpcrypt.safetensors import _framework, _Job, _load_jobs, _Source, _write_sealed

__all__ = ["load", "save"]

FORMAT = _checkpoint.FORMAT
VERSION = _checkpoint.VERSION

PathOrFile = Union[str, "os.PathLike[str]", Any]

# The tensor library of warpcrypt.safetensors' loader and writer.
_TORCH = _framework("pt")


def save(state_dict: Mapping[str, Any], f: PathOrFile, *, key: bytes, aead: str = "aes-256-gcm") -> None:
    """Seals every tensor of `state_dict` on its own device and writes the
    checkpoint to `f`: a path (written atomically: a temporary file renamed
    over it when complete) or a binary file object, such as a
    :class:`warpcrypt.SealedWriter`.

    `state_dict` maps names to tensors, as ``module.state_dict()`` returns,
    or to None, bool, int, float, str, and lists, tuples and dicts (str or
    int keys) of those and of tensors, as ``optimizer.state_dict()``
    returns; anything else raises TypeError before a byte is written.
    `key`: random bytes of the AEAD's key length (32 for the default
    aes-256-gcm). CUDA work runs on each device's current stream.
    """
    if not _is_path(f):
        _checkpoint.write(f, state_dict, key, aead, _is_tensor, _describe, _seal)
        return
    encoded, infos, tensors = _checkpoint.plan(state_dict, _is_tensor, _describe)
    start = _checkpoint.Start(key, aead, infos, encoded)
    base = len(start.sealed_header)
    sources = []
    for info, tensor, offset in zip(infos, tensors, _checkpoint.body_offsets(infos)):
        # A conjugate or negative view holds its data unconjugated and
        # unnegated, with a bit the bytes would lose: resolve it into them.
        plain = tensor.detach().resolve_conj().resolve_neg()
        entry, sealing = _placed(info, offset, start.aead, start.associated_data(info),
                                 bytearray(_checkpoint.TAG_LEN))
        sources.append(_Source(entry, plain, _TORCH, sealing))

    def finish(out: Any) -> None:
        out.write(0, memoryview(start.sealed_header))
        for source in sources:
            assert source.sealing is not None
            out.write(base + source.entry.end, memoryview(source.sealing.tags))

    _write_sealed(f, base + _checkpoint.body_length(infos), base, sources, finish)


def load(f: PathOrFile, *, key: bytes, map_location: Any = None) -> dict[Any, Any]:
    """Reads a checkpoint :func:`save` wrote and returns its state, each
    tensor opened on the device `map_location` maps it to (a device, a
    string, a dict or a function, as ``torch.load``'s; by default the
    device it was saved from).

    Raises InvalidTag unless the header and every tensor (named) authenticate
    under `key`, and FormatError for a file that is not such a checkpoint or
    whose length differs from what its header lists.
    """
    if not _is_path(f):
        return _checkpoint.read(f, key, lambda reader, info: _open(reader, info, map_location))
    with _input(f) as stream:
        # The prefix and header authenticate, and the file's length is what
        # they list, before anything is allocated.
        reader = Reader(stream, key)
        fd = stream.fileno()
        by_device: dict[Any, list[_Job]] = {}
        plain = []
        for info, offset in zip(reader.tensors, _checkpoint.body_offsets(reader.tensors)):
            tag = os.pread(fd, _checkpoint.TAG_LEN, reader.body_start + offset + info.nbytes)
            if len(tag) < _checkpoint.TAG_LEN:
                raise FormatError(f"truncated warpcrypt.torch checkpoint: it ends inside tensor {info.name!r}")
            device = _device(map_location, info)
            tensor = torch.empty(info.shape, dtype=_dtype(info), device=device)
            plain.append(tensor)
            entry, sealing = _placed(info, offset, reader.aead, reader.associated_data(info), bytearray(tag))
            by_device.setdefault(device, []).append(_Job(entry, sealing, fd, reader.body_start + offset,
                                                         tensor.reshape(-1).view(torch.uint8)))
        _load_jobs(by_device, _TORCH)
    return _checkpoint.fill(reader.state, plain)  # type: ignore[no-any-return]


def _placed(info: TensorInfo, offset: int, aead: AESGCM, associated_data: bytes,
            tag: bytearray) -> tuple[Entry, Sealing]:
    """Tensor `info`, `offset` bytes into the checkpoint's body, as
    warpcrypt.safetensors' loader and writer take a tensor: one message
    under the checkpoint's AEAD, its place bound in the associated data."""
    entry = Entry(info.name, info.dtype, info.shape, offset, offset + info.nbytes)
    return entry, Sealing(aead, [_checkpoint.nonce(info.index)], tag, None, associated_data=associated_data)


def _is_tensor(value: object) -> bool:
    return isinstance(value, torch.Tensor)


def _describe(index: int, name: str, tensor: Any) -> TensorInfo:
    dtype = str(tensor.dtype).removeprefix("torch.")
    if dtype not in _checkpoint.DTYPE_SIZES or tensor.layout != torch.strided or \
            tensor.device.type not in ("cpu", "cuda"):
        raise TypeError(f"{name} is a {dtype} tensor of layout {tensor.layout} on {tensor.device}: warpcrypt.torch "
                        f"saves dense tensors on the CPU or a CUDA device, of dtypes "
                        f"{', '.join(_checkpoint.DTYPE_SIZES)}")
    return TensorInfo(index, name, dtype, tuple(tensor.shape), str(tensor.device))


def _seal(writer: Writer, info: TensorInfo, tensor: Any) -> None:
    # The tensor's own bytes, contiguous, on its device (a copy only where
    # it is a strided view); the live model keeps its plaintext. A conjugate
    # or negative view holds its data unconjugated and unnegated, with a bit
    # that contiguous() keeps: resolve it into the bytes.
    plain = tensor.detach().resolve_conj().resolve_neg().contiguous()
    ciphertext = bytearray(info.nbytes)
    tag = bytearray(_checkpoint.TAG_LEN)
    nonce = _checkpoint.nonce(info.index)
    if plain.device.type == "cuda":
        sealed = torch.empty(info.nbytes, dtype=torch.uint8, device=plain.device)
        sealed_tag = torch.empty(_checkpoint.TAG_LEN, dtype=torch.uint8, device=plain.device)
        writer.aead.encrypt_into(nonce, plain, writer.associated_data(info), sealed, tag=sealed_tag)
        # Copies on the current stream, after the sealing queued there.
        _host(ciphertext).copy_(sealed)
        _host(tag).copy_(sealed_tag)
    else:
        writer.aead.encrypt_into(nonce, plain, writer.associated_data(info), ciphertext, tag=tag)
    writer.write_tensor(info, ciphertext, tag)


def _dtype(info: TensorInfo) -> Any:
    dtype = getattr(torch, info.dtype, None)
    if not isinstance(dtype, torch.dtype):
        raise FormatError(f"tensor {info.name!r} is of dtype {info.dtype}, which this PyTorch lacks")
    return dtype


def _open(reader: Reader, info: TensorInfo, map_location: Any) -> Any:
    dtype = _dtype(info)
    device = _device(map_location, info)
    ciphertext, tag = reader.read_tensor(info)
    plain = torch.empty(info.shape, dtype=dtype, device=device)
    if device.type == "cuda":
        reader.open_into(info, _host(ciphertext).to(device), _host(bytearray(tag)).to(device), plain)
    else:
        reader.open_into(info, ciphertext, tag, plain)
    return plain


def _device(map_location: Any, info: TensorInfo) -> Any:
    """Where tensor `info` opens, as ``torch.load`` would restore it."""
    if map_location is None:
        target = torch.device(info.device)
    elif isinstance(map_location, Mapping):
        target = torch.device(map_location.get(info.device, info.device))
    elif callable(map_location):
        moved = map_location(torch.UntypedStorage(0), info.device)  # type: ignore[no-untyped-call, unused-ignore]
        target = torch.device(info.device) if moved is None else moved.device
    else:
        target = torch.device(map_location)
    if target.type not in ("cpu", "cuda"):
        raise InvalidArgument(f"map_location puts tensor {info.name!r} on {target}: warpcrypt.torch opens tensors "
                              "on the CPU or a CUDA device")
    if target.type == "cuda" and not torch.cuda.is_available():
        raise InvalidArgument(f"tensor {info.name!r} was saved on {info.device} and no CUDA device is available: "
                              "pass map_location='cpu'")
    return target


def _host(buffer: bytearray) -> Any:
    """A uint8 CPU tensor over `buffer`'s memory (frombuffer refuses an
    empty one)."""
    return torch.frombuffer(buffer, dtype=torch.uint8) if buffer else torch.empty(0, dtype=torch.uint8)
