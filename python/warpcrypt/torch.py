"""Encrypted PyTorch checkpoints, sealed on the device each tensor lives on.

:func:`save` seals every tensor of a state_dict with AES-GCM where it is: a
CUDA tensor on its GPU, before ``torch.save`` copies anything to the host,
so no plaintext weight crosses PCIe or touches host memory; a CPU tensor on
the CPU. :func:`load` opens each tensor on the device ``map_location`` puts
it on, and releases it only once its tag matched.

What a checkpoint holds (a ``torch.save`` file, loaded with
``weights_only=True``): a random 16-byte salt, from which and the caller's
key HKDF-SHA256 derives this checkpoint's own key, so one key may seal any
number of checkpoints; then, per tensor, its ciphertext and tag. Tensor
``i`` of ``n`` is sealed under the nonce ``i`` (12 bytes, big-endian) with
associated data that binds ``i``, ``n``, its name, dtype and shape: a tensor
renamed, reshaped, moved to another position or dropped fails to open.

The key never enters the file: keep it in a key manager, not beside the
checkpoint.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Union

import torch  # type: ignore[import-not-found, unused-ignore]

from warpcrypt import _native
from warpcrypt.aead import AESGCM
from warpcrypt.exceptions import FormatError, InvalidArgument, InvalidKey, InvalidTag

__all__ = ["load", "save"]

FORMAT = "warpcrypt-torch-checkpoint"
VERSION = 1
_SALT_LEN = 16
_HKDF_INFO = b"warpcrypt torch checkpoint v1"
_AEADS = {"aes-128-gcm": 16, "aes-192-gcm": 24, "aes-256-gcm": 32}

PathOrFile = Union[str, "os.PathLike[str]", Any]


def save(state_dict: Mapping[str, Any], f: PathOrFile, *, key: bytes, aead: str = "aes-256-gcm") -> None:
    """Seals every tensor of `state_dict` (a mapping of names to tensors, as
    ``module.state_dict()`` returns) on its own device and writes the result
    with ``torch.save`` to `f` (a path or a binary file object, such as a
    :class:`warpcrypt.SealedWriter` for an authenticated file as a whole).

    `key`: random bytes of the AEAD's key length (32 for the default
    aes-256-gcm). CUDA work is queued on each device's current stream, which
    ``torch.save``'s copies then follow.
    """
    salt = os.urandom(_SALT_LEN)
    sealer = _checkpoint_aead(key, aead, salt)
    names = list(state_dict)
    tensors: dict[str, dict[str, Any]] = {}
    for index, name in enumerate(names):
        tensor = state_dict[name]
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"state_dict[{name!r}] is a {type(tensor).__name__}, not a tensor: warpcrypt.torch "
                            "seals tensors (seal anything else with SealedWriter and torch.save)")
        # The tensor's own bytes, contiguous, on its device (a copy only
        # where it is a strided view); the live model keeps its plaintext.
        plain = tensor.detach().contiguous()
        dtype = str(plain.dtype).removeprefix("torch.")
        ciphertext = torch.empty(plain.numel() * plain.element_size(), dtype=torch.uint8, device=plain.device)
        tag = torch.empty(sealer.tag_length, dtype=torch.uint8, device=plain.device)
        sealer.encrypt_into(_nonce(index), plain, _associated_data(index, len(names), name, dtype, plain.shape),
                            ciphertext, tag=tag)
        tensors[name] = {"dtype": dtype, "shape": list(plain.shape), "ciphertext": ciphertext, "tag": tag}
    torch.save({"format": FORMAT, "version": VERSION, "aead": aead,
                "salt": torch.frombuffer(bytearray(salt), dtype=torch.uint8), "tensors": tensors}, f)


def load(f: PathOrFile, *, key: bytes, map_location: Any = None) -> dict[str, Any]:
    """Reads a checkpoint :func:`save` wrote and returns its state_dict,
    each tensor opened on the device `map_location` maps it to (as
    ``torch.load``'s; by default the device it was saved from).

    Raises InvalidTag, naming the tensor, unless every tensor authenticates
    under `key`; FormatError for a file that is no such checkpoint.
    """
    saved = torch.load(f, map_location=map_location, weights_only=True)
    if not isinstance(saved, dict) or saved.get("format") != FORMAT:
        raise FormatError("not a warpcrypt.torch checkpoint")
    if saved.get("version") != VERSION:
        raise FormatError(f"unsupported warpcrypt.torch checkpoint version {saved.get('version')!r}")
    salt = bytes(saved["salt"].cpu().numpy().tobytes())
    opener = _checkpoint_aead(key, saved["aead"], salt)
    entries: dict[str, dict[str, Any]] = saved["tensors"]
    state: dict[str, Any] = {}
    for index, (name, entry) in enumerate(entries.items()):
        dtype = getattr(torch, entry["dtype"], None)
        if not isinstance(dtype, torch.dtype):
            raise FormatError(f"tensor {name!r}: unknown dtype {entry['dtype']!r}")
        ciphertext = entry["ciphertext"]
        plain = torch.empty(entry["shape"], dtype=dtype, device=ciphertext.device)
        if plain.numel() * plain.element_size() != ciphertext.numel():
            raise FormatError(f"tensor {name!r}: the ciphertext's length does not match its dtype and shape")
        associated_data = _associated_data(index, len(entries), name, entry["dtype"], plain.shape)
        try:
            opener.decrypt_into(_nonce(index), ciphertext, associated_data, plain, tag=entry["tag"])
        except InvalidTag:
            raise InvalidTag(f"tensor {name!r} did not authenticate: wrong key, or the checkpoint was modified "
                             "(a tensor changed, renamed, reordered or dropped)") from None
        state[name] = plain
    return state


def _checkpoint_aead(key: bytes, aead: str, salt: bytes) -> AESGCM:
    key_len = _AEADS.get(aead)
    if key_len is None:
        raise InvalidArgument(f"unknown checkpoint AEAD {aead!r}: choose from {', '.join(_AEADS)}")
    if len(key) != key_len:
        raise InvalidKey(f"{aead} takes a {key_len}-byte key, not {len(key)} bytes")
    return AESGCM(_native.hkdf("sha256", key, salt, _HKDF_INFO, key_len))


def _nonce(index: int) -> bytes:
    return index.to_bytes(12, "big")


def _associated_data(index: int, count: int, name: str, dtype: str, shape: Any) -> bytes:
    return f"{FORMAT} v{VERSION}\0{index}/{count}\0{name}\0{dtype}\0{tuple(shape)}".encode()

