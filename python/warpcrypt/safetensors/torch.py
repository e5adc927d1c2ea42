"""``safetensors.torch``'s functions for CryptoTensors files: each takes
`keys` as well::

    from warpcrypt.safetensors.torch import load_model, save_model, save_state_dict

    save_model(model, "model.safetensors", keys=keys)      # keys=None: a plain file
    missing, unexpected = load_model(model, "model.safetensors", device="cuda:0", keys=keys)

    save_state_dict(model.state_dict(), "checkpoint", keys=keys, max_shard_size="5GB")
    with accelerate.init_empty_weights():                  # the parameters on the meta device
        model = Model(config)
    load_model(model, "checkpoint", device="cuda:0", keys=keys)   # the shards' tensors become its weights

As in safetensors, :func:`save_file` and :func:`save` refuse tensors that
share memory and strided (non-contiguous) ones, rather than write a copy
of each that loads as separate tensors; :func:`save_model` writes one of
each group of shared tensors and names the others in the metadata, and
:func:`load_model` gives them back through the model's own sharing.
`keys` is what :func:`warpcrypt.safetensors.load_file` takes: without
keys only a plain safetensors file loads, with keys only a signed
CryptoTensors file does. On a CUDA device the tensors are encrypted and
decrypted where they are.
"""

from __future__ import annotations

import collections
from collections.abc import Collection, Mapping
from typing import Any

from warpcrypt.exceptions import InvalidArgument
from warpcrypt.safetensors import DeviceSpec, Keys, PathLike, _load_bytes, _save_bytes, _sharded, safe_open
from warpcrypt.safetensors import load_file as _load_file
from warpcrypt.safetensors import save_file as _save_file

__all__ = ["load", "load_file", "load_model", "load_state_dict", "safe_open", "save", "save_file", "save_model",
           "save_state_dict"]

_SHARING_HELP = "https://huggingface.co/docs/safetensors/torch_shared_tensors"


def _torch() -> Any:
    import torch  # type: ignore[import-not-found, unused-ignore]

    return torch


def _byte_span(tensor: Any) -> tuple[int, int]:
    """The addresses [start, end) of the bytes a tensor views."""
    start = tensor.data_ptr()
    if not tensor.numel():
        return start, start
    last = sum((size - 1) * stride for size, stride in zip(tensor.shape, tensor.stride()))
    return start, start + (last + 1) * tensor.element_size()


def _shared_groups(tensors: Mapping[str, Any]) -> list[list[str]]:
    """The names of tensors whose bytes overlap in memory, a sorted group
    each, as safetensors finds them: tensors of one storage whose spans
    overlap (views of one storage side by side are not shared). Tensors on
    the meta device have no memory: there, names of one tensor object (a
    model's tied weights, from ``state_dict(keep_vars=True)``) are shared."""
    by_storage: dict[tuple[Any, int, int], list[str]] = collections.defaultdict(list)
    groups: list[list[str]] = []
    meta: dict[int, list[str]] = collections.defaultdict(list)
    for name, tensor in tensors.items():
        if tensor.device.type == "meta":
            meta[id(tensor)].append(name)
            continue
        storage = tensor.untyped_storage()
        if storage.data_ptr() and storage.nbytes():
            by_storage[(tensor.device, storage.data_ptr(), storage.nbytes())].append(name)
    groups.extend(meta.values())
    for names in by_storage.values():
        spans = sorted((*_byte_span(tensors[name]), name) for name in names)
        group, group_end = [spans[0][2]], spans[0][1]
        for start, end, name in spans[1:]:
            if start < group_end:
                group.append(name)
            else:
                groups.append(group)
                group = [name]
            group_end = max(group_end, end)
        groups.append(group)
    return [sorted(group) for group in groups if len(group) > 1]


def _checked(tensors: Mapping[str, Any]) -> Mapping[str, Any]:
    """`tensors`, each a dense, contiguous PyTorch tensor sharing no memory
    with another: safetensors' rule for what a file can hold as given."""
    torch = _torch()
    if not isinstance(tensors, Mapping):
        raise InvalidArgument(f"tensors is a mapping of names to tensors, not a {type(tensors).__name__}")
    for name, tensor in tensors.items():
        if not isinstance(tensor, torch.Tensor):
            raise InvalidArgument(f"tensor {name!r} is a {type(tensor).__name__}, not a torch.Tensor")
        if tensor.layout != torch.strided:
            raise InvalidArgument(f"tensor {name!r} is sparse: make it dense with .to_dense() first")
        if not tensor.is_contiguous():
            raise InvalidArgument(f"tensor {name!r} is not contiguous: save the whole tensor and slice it once "
                                  "loaded, or save .contiguous()")
    shared = _shared_groups(tensors)
    if shared:
        raise InvalidArgument(f"these tensors share memory, which the file would hold twice and load apart: "
                              f"{shared}; save_model saves one of each ({_SHARING_HELP})")
    return tensors


def _duplicates(state_dict: Mapping[str, Any], preferred: Collection[str] = ()) -> dict[str, list[str]]:
    """For each group of shared tensors, the one name to keep (a tensor
    that covers its whole storage: the first of `preferred`, else the first
    name) and the others it stands for."""
    removed = {}
    for group in _shared_groups(state_dict):
        whole = [name for name in group if _covers_storage(state_dict[name])]
        if not whole:
            raise InvalidArgument(f"of the tensors sharing memory {group}, none covers the whole of it, so the "
                                  f"file would hold more than they show ({_SHARING_HELP})")
        kept = next((name for name in whole if name in preferred), whole[0])
        removed[kept] = [name for name in group if name != kept]
    return removed


def _covers_storage(tensor: Any) -> bool:
    if tensor.device.type == "meta":  # one tensor under several names
        return True
    storage = tensor.untyped_storage()
    return bool(tensor.data_ptr() == storage.data_ptr()
                and tensor.numel() * tensor.element_size() == storage.nbytes())


def save_file(tensors: Mapping[str, Any], filename: PathLike, metadata: Mapping[str, str] | None = None, *,
              keys: Keys) -> None:
    """Writes the tensors to `filename`, atomically: a CryptoTensors file
    under `keys` (every tensor encrypted), or with ``keys=None``, given
    explicitly, a plain safetensors file."""
    _save_file(_checked(tensors), filename, keys=keys, metadata=metadata)


def save(tensors: Mapping[str, Any], metadata: Mapping[str, str] | None = None, *, keys: Keys) -> bytes:
    """The bytes :func:`save_file` would write."""
    return _save_bytes(_checked(tensors), metadata, keys)


def load_file(filename: PathLike, device: DeviceSpec = "cpu", *, keys: Keys = None) -> dict[str, Any]:
    """Every tensor of the file, on `device`."""
    return _load_file(filename, device, keys=keys, framework="pt")


def load(data: bytes, *, keys: Keys = None) -> dict[str, Any]:
    """Every tensor of a file held in `data`, on the CPU."""
    return _load_bytes(data, keys, "pt")


def _without_duplicates(state_dict: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The state dict with one tensor of each group sharing memory (tied
    weights), and for each name left out, the name kept for it."""
    kept = dict(state_dict)
    stands_for = {}
    for name, others in _duplicates(state_dict).items():
        for other in others:
            stands_for[other] = name
            del kept[other]
    return kept, stands_for


def save_model(model: Any, filename: PathLike, metadata: Mapping[str, str] | None = None,
               force_contiguous: bool = True, *, keys: Keys) -> None:
    """Writes the model's state dict: of tensors sharing memory (tied
    weights), one that covers the memory, with the metadata naming it for
    each of the others (where the caller's metadata does not use that
    name already). `force_contiguous`: write strided tensors as
    contiguous copies, rather than refuse them."""
    state_dict, stands_for = _without_duplicates(model.state_dict())
    described = {**stands_for, **(metadata or {})}
    if force_contiguous:
        state_dict = {name: tensor.contiguous() for name, tensor in state_dict.items()}
    save_file(state_dict, filename, described if metadata is not None or described else None, keys=keys)


def save_state_dict(state_dict: Mapping[str, Any], folder: PathLike, *, keys: Keys,
                    max_shard_size: int | str = _sharded.DEFAULT_MAX_SHARD_SIZE,
                    metadata: Mapping[str, str] | None = None, force_contiguous: bool = True) -> None:
    """Writes the tensors to `folder` as a sharded checkpoint, laid out as
    ``huggingface_hub.save_torch_state_dict`` lays one out: shards of at
    most `max_shard_size` (bytes, or "5GB", "500MiB") and
    ``model.safetensors.index.json``, or ``model.safetensors`` alone where
    one shard holds them all. As there, of tensors sharing memory (tied
    weights) one is written, and strided ones as contiguous copies unless
    `force_contiguous` is False. With `keys` each shard is a CryptoTensors
    file bound to the index: a shard swapped, renamed, dropped or taken
    from another checkpoint, or an index edited, is refused on loading."""
    tensors, _ = _without_duplicates(state_dict)
    if force_contiguous:
        tensors = {name: tensor.contiguous() for name, tensor in tensors.items()}
    _sharded.save(_checked(tensors), folder, keys=keys, max_shard_size=max_shard_size, metadata=metadata,
                  shard_metadata={"format": "pt"})


def load_state_dict(folder: PathLike, *, keys: Keys = None, device: DeviceSpec = "cpu",
                    device_map: Mapping[str, DeviceSpec] | None = None) -> dict[str, Any]:
    """Every tensor of the checkpoint in `folder` (or of its index file, or
    of one .safetensors file), every shard read at once, on `device`, or
    where `device_map` ({name prefix: device}, the longest prefix winning,
    "" for the rest) places each."""
    return _sharded.load(folder, keys=keys, framework="pt", device=device if device_map is None else device_map)


def load_model(model: Any, filename: PathLike, strict: bool = True, device: DeviceSpec = "cpu", *,
               keys: Keys = None) -> tuple[list[str], list[str]]:
    """Loads a file, or a sharded checkpoint's folder, into `model`, as
    ``safetensors.torch.load_model``: returns (missing, unexpected), the
    model's names the file did not set and the file's names the model does
    not have; a name a shared tensor of the model was saved under sets its
    group. A model built on the meta device (no memory for its weights)
    takes the loaded tensors as its weights (``assign=True``), its tied
    weights tied again. `strict`: raise RuntimeError, as
    ``Module.load_state_dict`` does, where either is not empty."""
    state_dict = load_state_dict(filename, keys=keys, device=device)
    held = model.state_dict(keep_vars=True)
    assign = any(tensor.device.type == "meta" for tensor in held.values())
    duplicates = _duplicates(held, preferred=state_dict.keys())
    missing_keys, unexpected = model.load_state_dict(state_dict, strict=False, assign=assign)
    missing = set(missing_keys)
    unexpected = list(unexpected)
    for kept, others in duplicates.items():
        for name in others:
            if name in missing:
                missing.remove(name)
                if assign and kept in state_dict:
                    _tie(model, name, kept)
            else:
                unexpected.append(name)
    if assign:
        _check_nothing_left_on_meta(model, missing)
    if strict and (missing or unexpected):
        error = f"Error(s) in loading state_dict for {type(model).__name__}:"
        if missing:
            error += "\n    Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in sorted(missing))
        if unexpected:
            error += "\n    Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in sorted(unexpected))
        raise RuntimeError(error)
    return sorted(missing), unexpected


def _check_nothing_left_on_meta(model: Any, missing: Collection[str]) -> None:
    """Refuses a model left with a tensor on the meta device that no
    checkpoint can fill: a buffer that is not saved (a rotary embedding's
    frequencies), which only the model's constructor makes. (A missing
    parameter is a missing key, and reported as one.)"""
    left = [name for name, buffer in model.named_buffers() if buffer.is_meta and name not in missing]
    if left:
        raise InvalidArgument(f"buffers {left[:3]}{' and more' if len(left) > 3 else ''} are on the meta device and "
                              "no checkpoint holds them: build the model with only its parameters there "
                              "(accelerate.init_empty_weights()), so that its constructor fills its buffers")


def _tie(model: Any, name: str, kept: str) -> None:
    """Makes parameter or buffer `name` of the model the tensor `kept` is
    now, as it was before the load assigned `kept` a new one."""
    owner_name, _, attribute = name.rpartition(".")
    kept_owner, _, kept_attribute = kept.rpartition(".")
    owner, source = model.get_submodule(owner_name), model.get_submodule(kept_owner)
    if kept_attribute in source._parameters:
        owner.register_parameter(attribute, source._parameters[kept_attribute])
    else:
        owner.register_buffer(attribute, source._buffers[kept_attribute],
                              persistent=attribute not in owner._non_persistent_buffers_set)
