"""Sharded checkpoints, laid out as ``huggingface_hub.save_torch_state_dict``
lays them out: a folder of ``model-00001-of-0000N.safetensors`` shards and
``model.safetensors.index.json``, whose ``weight_map`` names each tensor's
shard (a checkpoint of one shard is ``model.safetensors`` alone, with no
index). Each shard of an encrypted checkpoint is a CryptoTensors file that
``cryptotensors`` opens.

The index is not signed itself, but each shard's signed header binds it:
its metadata field ``warpcrypt_checkpoint`` holds the SHA-256 of the index
(its metadata, which names the checkpoint by a random id, and its weight
map, as canonical JSON) and the shard's own file name. So a shard swapped, renamed or taken from another checkpoint, an
index edited (a tensor dropped or moved) and a shard deleted are each
refused, before any tensor is read; and a folder whose save was cut short
holds an index that its new shards do not match, or none. A signature
cannot be taken off a shard, so a checkpoint whose shards bind their index
cannot be passed off as one whose shards do not (_check_shards).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from warpcrypt import _cryptotensors as ct
from warpcrypt._files import _output
from warpcrypt._cryptotensors import KeySet
from warpcrypt._random import random_bytes
from warpcrypt.exceptions import FormatError, InvalidArgument, InvalidSignature
from warpcrypt.safetensors import (DeviceSpec, Keys, PathLike, _File, _Framework, _framework, _frameworks_of, _load,
                                   _placement, save_file)

INDEX_NAME = "model.safetensors.index.json"
SINGLE_NAME = "model.safetensors"
# The signed field of each shard's metadata that binds it to its index.
BINDING_FIELD = "warpcrypt_checkpoint"
# The index's field that makes it unique: the random name of the checkpoint,
# so that the index of another checkpoint of the same tensors differs.
CHECKPOINT_FIELD = "warpcrypt_checkpoint_id"
DEFAULT_MAX_SHARD_SIZE = "5GB"  # huggingface_hub's
# An index names every tensor once; a model of a million tensors has an
# index of about 60 MB.
MAX_INDEX_BYTES = 256 << 20
_SHARD_NAME = re.compile(r"model-(\d{5})-of-(\d{5})\.safetensors")
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([KMGT]i?B|B)?", re.IGNORECASE)
_UNITS = {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}


def shard_size_bytes(size: int | str) -> int:
    """A shard size as huggingface_hub reads it: bytes, or "5GB", "500MiB"."""
    if isinstance(size, int) and not isinstance(size, bool):
        value = size
    else:
        match = _SIZE.fullmatch(size.strip()) if isinstance(size, str) else None
        if match is None:
            raise InvalidArgument(f"max_shard_size is bytes or a size such as '5GB' or '500MiB', not {size!r}")
        value = int(float(match[1]) * _UNITS[(match[2] or "B").lower()])
    if value <= 0:
        raise InvalidArgument(f"max_shard_size must be positive, not {size!r}")
    return value


def plan_shards(sizes: Sequence[tuple[str, int]], max_bytes: int) -> list[list[str]]:
    """Tensors in shards of at most `max_bytes`, in order, as
    huggingface_hub splits them: a tensor larger than that has a shard of
    its own, and a shard that the next tensor would overfill is closed."""
    shards: list[list[str]] = []
    current: list[str] = []
    held = 0
    for name, nbytes in sizes:
        if nbytes > max_bytes:
            shards.append([name])
            continue
        if current and held + nbytes > max_bytes:
            shards.append(current)
            current, held = [], 0
        current.append(name)
        held += nbytes
    if current or not shards:
        shards.append(current)
    return shards


def _digest(index: Mapping[str, Any]) -> str:
    """What a shard's binding holds of the index: a digest of its metadata
    and weight map, however the file spells them."""
    canonical = json.dumps({"metadata": index.get("metadata", {}), "weight_map": index["weight_map"]},
                           sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _binding(digest: str, shard: str) -> str:
    return json.dumps({"index_sha256": digest, "shard": shard}, sort_keys=True, separators=(",", ":"))


def save(tensors: Mapping[str, Any], folder: PathLike, *, keys: Keys, max_shard_size: int | str,
         metadata: Mapping[str, str] | None, shard_metadata: Mapping[str, str]) -> None:
    """Writes `tensors` to `folder` as a checkpoint of shards of at most
    `max_shard_size` (write() says how). As huggingface_hub does, the
    caller's `metadata` goes into the index (or the one file), and each
    shard's metadata is `shard_metadata` ({"format": "pt"}, which
    transformers asks of a shard)."""
    limit = shard_size_bytes(max_shard_size)
    frameworks = _frameworks_of(tensors)
    sizes = []
    for name, tensor in tensors.items():
        dtype, shape = frameworks[name].describe(tensor)  # type: ignore[misc]
        sizes.append((name, _nbytes(dtype, shape)))
    write(tensors, folder, plan_shards(sizes, limit), keys=keys, metadata=ct.check_user_metadata(metadata) or {},
          shard_metadata=shard_metadata)


def _nbytes(dtype: str, shape: Sequence[int]) -> int:
    return -(-ct.tensor_bits(dtype, shape) // 8)


def write(tensors: Mapping[str, Any], folder: PathLike, shards: Sequence[Sequence[str]], *, keys: Keys,
          metadata: Mapping[str, Any], shard_metadata: Mapping[str, str], **options: Any) -> None:
    """Writes `tensors` to `folder` in `shards` (the names each holds),
    each atomically and the index last, with `metadata` in the index (in
    the one file, where there is one shard); then removes what an earlier
    checkpoint there left that this one does not use (shards by the names
    this writes, and a stale index or single file). `options` go to each
    shard's save_file."""
    keys = _read_once(keys)
    os.makedirs(folder, exist_ok=True)
    if len(shards) <= 1:
        save_file(tensors, os.path.join(folder, SINGLE_NAME), keys=keys,
                  metadata={**shard_metadata, **metadata} or None, **options)
        _remove_stale(folder, keep=[SINGLE_NAME])
        return
    frameworks = _frameworks_of(tensors)
    total = sum(_nbytes(*frameworks[name].describe(tensor)) for name, tensor in tensors.items())  # type: ignore[misc]
    names = [f"model-{i:05d}-of-{len(shards):05d}.safetensors" for i in range(1, len(shards) + 1)]
    index = {"metadata": {"total_size": total, **metadata,
                          **({CHECKPOINT_FIELD: random_bytes(16).hex()} if keys is not None else {})},
             "weight_map": {tensor: names[i] for i, shard in enumerate(shards) for tensor in shard}}
    digest = _digest(index)
    for name, shard in zip(names, shards):
        bound = {**shard_metadata, BINDING_FIELD: _binding(digest, name)} if keys is not None else shard_metadata
        save_file({tensor: tensors[tensor] for tensor in shard}, os.path.join(folder, name), keys=keys,
                  metadata=bound or None, **options)
    with _output(os.path.join(folder, INDEX_NAME)) as stream:
        stream.write((json.dumps(index, indent=2) + "\n").encode())
    _remove_stale(folder, keep=[*names, INDEX_NAME])


def _read_once(keys: Keys) -> Keys:
    """`keys` read once for every shard (a key file, a variable)."""
    return None if keys is None else KeySet(keys)


def _remove_stale(folder: PathLike, keep: Sequence[str]) -> None:
    for name in os.listdir(folder):
        if name not in keep and (name in (INDEX_NAME, SINGLE_NAME) or _SHARD_NAME.fullmatch(name)):
            os.unlink(os.path.join(folder, name))


@dataclass
class Checkpoint:
    """A checkpoint opened: its files, each with the tensors it holds, in
    the index's order of shards; every tensor's name in the index's order;
    and the index's metadata (None for one file)."""

    files: list[tuple[_File, list[str]]]
    order: list[str]
    index_metadata: dict[str, Any] | None

    def close(self) -> None:
        for file, _ in self.files:
            file.close()

    def layout(self) -> tuple[list[list[str]], dict[str, Any], dict[str, str]]:
        """What write() takes to write the checkpoint again as it is laid
        out: its shards, the index's metadata but what a save writes itself
        (the total size, the checkpoint's id), and its first shard's
        metadata but the binding (or the one file's metadata)."""
        first = self.files[0][0].user_metadata() or {}
        if self.index_metadata is None:
            return [names for _, names in self.files], first, {}
        metadata = {k: v for k, v in self.index_metadata.items() if k not in ("total_size", CHECKPOINT_FIELD)}
        return [names for _, names in self.files], metadata, {k: v for k, v in first.items() if k != BINDING_FIELD}


def find_checkpoint(path: PathLike) -> str:
    """The file that says what a checkpoint holds: a folder's index, or its
    one model.safetensors; an index or a .safetensors file as it is."""
    path = os.fspath(path)
    if not os.path.isdir(path):
        return path
    for name in (INDEX_NAME, SINGLE_NAME):
        if os.path.exists(os.path.join(path, name)):
            return os.path.join(path, name)
    raise FileNotFoundError(f"{path}: no {INDEX_NAME} or {SINGLE_NAME} in the folder")


def checkpoint_paths(path: PathLike) -> list[str]:
    """Every file of the checkpoint at `path`, as its index names them (a
    missing one too), for a command that must not write over any."""
    found = find_checkpoint(path)
    if not found.endswith(".index.json"):
        return [found]
    _, by_shard = _read_index(found)
    return [found, *(os.path.join(os.path.dirname(found), shard) for shard in by_shard)]


def open_checkpoint(path: PathLike, keys: Keys) -> Checkpoint:
    """The checkpoint at `path`: a folder (its index, or its one
    model.safetensors), an index file, or one .safetensors file. With
    `keys`, every shard is checked against the index (the module's
    docstring says how); the files are closed again on any failure."""
    path = find_checkpoint(path)
    if not path.endswith(".index.json"):
        file = _File(path, keys)
        return Checkpoint([(file, file.names())], file.names(), None)
    index, by_shard = _read_index(path)
    keys = _read_once(keys)
    checkpoint = Checkpoint([], list(index["weight_map"]), index.get("metadata", {}))
    try:
        for shard, names in by_shard.items():
            shard_path = os.path.join(os.path.dirname(path), shard)
            if not os.path.exists(shard_path):
                raise FormatError(f"{shard_path}: the shard that the index names for {len(names)} tensors is "
                                  "missing")
            checkpoint.files.append((_File(shard_path, keys), names))
        _check_shards(checkpoint.files, list(by_shard), _digest(index) if keys is not None else None)
    except BaseException:
        checkpoint.close()
        raise
    return checkpoint


def _read_index(path: str) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """The index, and its tensors by shard, each shard a plain file name
    in the index's folder."""
    with open(path, "rb") as stream:
        data = stream.read(MAX_INDEX_BYTES + 1)
    if len(data) > MAX_INDEX_BYTES:
        raise FormatError(f"{path}: an index of more than {MAX_INDEX_BYTES >> 20} MiB")
    try:
        text = data.decode()
    except UnicodeDecodeError:
        raise FormatError(f"{path}: the index is not UTF-8") from None
    index = ct._json_object(text, f"{path}")
    weight_map, metadata = index.get("weight_map"), index.get("metadata", {})
    if not isinstance(weight_map, dict) or not isinstance(metadata, dict):
        raise FormatError(f"{path}: an index is an object with a weight_map object (and a metadata object)")
    # An index that names no shard leaves no shard's binding to check: it
    # would load as an empty checkpoint, whatever the shards beside it hold.
    if not weight_map:
        raise FormatError(f"{path}: the index names no tensor")
    by_shard: dict[str, list[str]] = {}
    for tensor, shard in weight_map.items():
        if not isinstance(shard, str) or not shard.endswith(".safetensors") or shard != os.path.basename(shard) \
                or shard.startswith(".") or "\0" in shard or os.sep in shard or "/" in shard:
            raise FormatError(f"{path}: tensor {tensor!r} is in {shard!r}, which is not a .safetensors file of the "
                              "index's folder")
        by_shard.setdefault(shard, []).append(tensor)
    return index, by_shard


def _check_shards(files: Sequence[tuple[_File, list[str]]], shards: Sequence[str], digest: str | None) -> None:
    """Refuses a shard that holds other tensors than the index gives it,
    and in a signed checkpoint (`digest` given) whose shards bind their
    index, a shard whose binding names another index or another place, or
    none. Where no shard binds an index (shards that cryptotensors wrote,
    under an index of huggingface_hub's), each shard authenticates on its
    own and holds the tensors the index names for it; that an index lost
    a shard's tensors, or that a shard is an older one under the same keys,
    cannot be told then."""
    bindings = [(file.user_metadata() or {}).get(BINDING_FIELD) for file, _ in files]
    for (file, names), shard, bound in zip(files, shards, bindings):
        if digest is not None and any(bindings):
            _check_binding(file, shard, bound, digest)
        if sorted(file.names()) != sorted(names):
            raise FormatError(f"{file.path}: the shard holds other tensors than the index names for it")


def _check_binding(file: _File, shard: str, bound: str | None, digest: str) -> None:
    if bound is None:
        raise InvalidSignature(f"{file.path}: the shard binds no index, where the checkpoint's other shards bind "
                               "theirs: it is not a shard of this checkpoint")
    try:
        claim = json.loads(bound)
        claimed_digest, claimed_shard = claim["index_sha256"], claim["shard"]
    except (ValueError, TypeError, KeyError):
        raise FormatError(f"{file.path}: the shard's {BINDING_FIELD} field is not warpcrypt's") from None
    if claimed_digest != digest:
        raise InvalidSignature(f"{file.path}: the index is not the one this shard was saved with: the index was "
                               "changed, or the shard is of another checkpoint")
    if claimed_shard != shard:
        raise InvalidSignature(f"{file.path}: this shard was saved as {claimed_shard!r}: shards were renamed or "
                               "swapped")


def load(path: PathLike, *, keys: Keys, framework: str, device: DeviceSpec | Mapping[str, DeviceSpec],
         progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Every tensor of the checkpoint at `path`, every shard read at once by
    the same readers, in the index's order."""
    return load_laid_out(path, keys=keys, framework=framework, device=device, progress=progress)[0]


def load_laid_out(path: PathLike, *, keys: Keys, framework: str, device: DeviceSpec | Mapping[str, DeviceSpec],
                  progress: Callable[[int, int], None] | None = None) -> tuple[dict[str, Any], Checkpoint]:
    """load(), and the checkpoint it read (closed), for its layout."""
    chosen: _Framework = _framework(framework)
    place = _placement(chosen, device)
    checkpoint = open_checkpoint(path, keys)
    try:
        tensors = _load(checkpoint.files, chosen, place, progress)
        return {name: tensors[name] for name in checkpoint.order}, checkpoint
    finally:
        checkpoint.close()
