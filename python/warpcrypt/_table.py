"""The library's cipher table and backend names, looked up once per name."""

from __future__ import annotations

from warpcrypt import _native
from warpcrypt.exceptions import InvalidArgument

_infos: dict[str, _native.CipherInfo] = {}
_BACKENDS: dict[str, int] = _native.backend_values()


def cipher_info(name: str) -> _native.CipherInfo:
    """The table entry for an `openssl enc` cipher name (any case, aliases
    too); raises UnknownCipher."""
    info = _infos.get(name)
    if info is None:
        info = _infos[name] = _native.cipher_info(name)
    return info


def backend_value(name: str) -> int:
    value = _BACKENDS.get(name)
    if value is None:
        raise InvalidArgument(f"unknown backend {name!r}: choose from {', '.join(_BACKENDS)}")
    return value


def ciphers() -> list[_native.CipherInfo]:
    """Every cipher of the library, in `warpcrypt enc -list` order, with its
    name and its key, IV and block sizes in bytes."""
    return _native.cipher_infos()


def backends() -> list[str]:
    """The backend names that ``backend=`` accepts."""
    return list(_BACKENDS)
