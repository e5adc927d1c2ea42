"""``safetensors.numpy``'s functions for CryptoTensors files: each takes
`keys` as well, and needs no PyTorch::

    from warpcrypt.safetensors.numpy import load_file, save_file

    save_file({"w": array}, "model.safetensors", keys=keys)     # keys=None: a plain file
    tensors = load_file("model.safetensors", keys=keys)

`keys` is what :func:`warpcrypt.safetensors.load_file` takes: without
keys only a plain safetensors file loads, with keys only a signed
CryptoTensors file does. A big-endian array is written little-endian and
a strided one as its values in order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from warpcrypt.exceptions import InvalidArgument
from warpcrypt.safetensors import Keys, PathLike, _load_bytes, _save_bytes, _sharded, safe_open
from warpcrypt.safetensors import load_file as _load_file
from warpcrypt.safetensors import save_file as _save_file

__all__ = ["load", "load_file", "load_state_dict", "safe_open", "save", "save_file", "save_state_dict"]


def _arrays(tensor_dict: Mapping[str, Any]) -> Mapping[str, Any]:
    """`tensor_dict`, each of whose values must be a NumPy array."""
    import numpy

    for name, array in tensor_dict.items():
        if not isinstance(array, numpy.ndarray):
            raise InvalidArgument(f"tensor {name!r} is a {type(array).__name__}, not a NumPy array")
    return tensor_dict


def save_file(tensor_dict: Mapping[str, Any], filename: PathLike, metadata: Mapping[str, str] | None = None, *,
              keys: Keys) -> None:
    """Writes the arrays to `filename`, atomically: a CryptoTensors file
    under `keys` (every array encrypted), or with ``keys=None``, given
    explicitly, a plain safetensors file."""
    _save_file(_arrays(tensor_dict), filename, keys=keys, metadata=metadata)


def save(tensor_dict: Mapping[str, Any], metadata: Mapping[str, str] | None = None, *, keys: Keys) -> bytes:
    """The bytes :func:`save_file` would write."""
    return _save_bytes(_arrays(tensor_dict), metadata, keys)


def load_file(filename: PathLike, *, keys: Keys = None) -> dict[str, Any]:
    """Every tensor of the file, as a NumPy array."""
    return _load_file(filename, keys=keys, framework="np")


def load(data: bytes, *, keys: Keys = None) -> dict[str, Any]:
    """Every tensor of a file held in `data`, as a NumPy array."""
    return _load_bytes(data, keys, "np")


def save_state_dict(state_dict: Mapping[str, Any], folder: PathLike, *, keys: Keys,
                    max_shard_size: int | str = _sharded.DEFAULT_MAX_SHARD_SIZE,
                    metadata: Mapping[str, str] | None = None) -> None:
    """Writes the arrays to `folder` as a sharded checkpoint, laid out as
    ``huggingface_hub.save_torch_state_dict`` lays one out: shards of at
    most `max_shard_size` (bytes, or "5GB", "500MiB") and
    ``model.safetensors.index.json``, or ``model.safetensors`` alone where
    one shard holds them all. With `keys` each shard is a CryptoTensors file
    bound to the index (a shard swapped, renamed, dropped or taken from
    another checkpoint, or an index edited, is refused on loading)."""
    _sharded.save(_arrays(state_dict), folder, keys=keys, max_shard_size=max_shard_size, metadata=metadata,
                  shard_metadata={})


def load_state_dict(folder: PathLike, *, keys: Keys = None) -> dict[str, Any]:
    """Every array of the checkpoint in `folder` (or of its index file, or
    of one .safetensors file), every shard read at once."""
    return _sharded.load(folder, keys=keys, framework="np", device="cpu")
