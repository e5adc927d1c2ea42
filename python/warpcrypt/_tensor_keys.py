"""Where the keys of encrypted safetensors come from: the one place that
reads what ``keys=`` names, for every function of warpcrypt.safetensors and
for ``warpcrypt tensors --keys``. It takes what cryptotensors' key providers
take:

- JWKs themselves: a JWK Set ``{"keys": [...]}``, one JWK, or a list of
  JWKs (``cryptotensors.register_direct_key_provider(keys=...)``);
- a file holding any of those, by path (``str`` or ``os.PathLike``), as
  ``register_direct_key_provider(files=[...])`` reads it; ``"file:PATH"``
  and cryptotensors' ``file://`` URLs (``file:///abs/keys.jwk``,
  ``file://~/keys.jwk``) name one too;
- ``"env"``: the JWK Set (or one JWK) in the environment variable
  ``CRYPTOTENSOR_KEYS``, which cryptotensors' "env" provider reads;
  ``"env:NAME"``: the one in variable NAME. A file named ``env`` is
  ``./env``.

Unlike cryptotensors, nothing is looked up from what a file's header names
(its ``jku``): the header is not trusted before its signature verifies
under these keys. As ssh does with a private key, a key file that its group
or others may read or write is refused. No message quotes key material: a
file's or a variable's contents never, and a ``keys=`` string that is JSON
rather than a name is refused without being echoed.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Union

from warpcrypt.exceptions import InvalidArgument, InvalidKey

# cryptotensors' "env" provider and the variable it reads.
ENV_PROVIDER = "env"
ENV_VARIABLE = "CRYPTOTENSOR_KEYS"
# A JWK Set of a few keys is a few hundred bytes; a file far larger is
# something else given by mistake (a model, say), not read whole.
MAX_KEY_FILE_BYTES = 1 << 20

if TYPE_CHECKING:
    from warpcrypt._cryptotensors import KeySet

# What keys= takes: JWKs, a key file's path, "env" or "env:NAME", or a
# KeySet already read from one of those.
Keys = Union[Mapping[str, Any], Sequence[Mapping[str, Any]], str, "os.PathLike[str]", "KeySet", None]

_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def read_keys(keys: object) -> tuple[object, str]:
    """The JWKs `keys` gives (a JWK Set, one JWK or a list, their form not
    yet checked) and where they came from, as messages name it: "the keys
    given", "the key file 'k.jwk'", "the environment variable NAME"."""
    variable = _variable(keys)
    if variable is not None:
        return _read_variable(variable)
    path = key_file(keys)
    if path is not None:
        return _read_file(path)
    return keys, "the keys given"


def key_file(keys: object) -> str | None:
    """The path of the file `keys` names, or None where it names none."""
    if isinstance(keys, os.PathLike):
        return os.fsdecode(keys)
    if not isinstance(keys, str) or _variable(keys) is not None:
        return None
    if keys.lstrip().startswith(("{", "[")):
        raise InvalidArgument("keys= names a key file or an environment variable ('env', 'env:NAME'), not JSON "
                              "text: pass the parsed JWKs (json.loads) instead")
    if keys.startswith("file:"):
        return _url_path(keys[len("file:"):])
    return keys


def _variable(keys: object) -> str | None:
    """The environment variable `keys` names, or None where it names none."""
    if keys == ENV_PROVIDER:
        return ENV_VARIABLE
    if isinstance(keys, str) and keys.startswith(ENV_PROVIDER + ":"):
        return keys[len(ENV_PROVIDER) + 1:]
    return None


def _url_path(rest: str) -> str:
    """The path of "file:" + `rest`: a plain path, or a file:// URL's, which
    cryptotensors writes as file:///abs/path or file://~/path."""
    if not rest.startswith("//"):
        return rest
    path = rest[2:]
    return os.path.expanduser(path) if path.startswith("~") else path


def _read_variable(name: str) -> tuple[object, str]:
    if not _VARIABLE_NAME.fullmatch(name):
        # Shown by its length alone: it may be key material given in place of a name.
        raise InvalidArgument(f"'env:' takes an environment variable's name (letters, digits and _), not the "
                              f"{len(name)} characters given")
    origin = f"the environment variable {name}"
    text = os.environ.get(name)
    if text is None:
        raise InvalidKey(f"{origin} is not set: it should hold a JWK Set (the JSON of a key file)")
    if not text.strip():
        raise InvalidKey(f"{origin} is empty: it should hold a JWK Set (the JSON of a key file)")
    return _parsed(text, origin), origin


def _read_file(path: str) -> tuple[object, str]:
    """The JSON of the key file at `path`. Its mode is checked on the opened
    file (fstat), so it is that of the bytes read even if the path is
    replaced meanwhile; a pipe (``--keys <(...)``) has no mode to check."""
    origin = f"the key file {path!r}"
    try:
        with open(path, "rb") as file:
            mode = os.fstat(file.fileno()).st_mode
            if stat.S_ISREG(mode) and stat.S_IMODE(mode) & 0o077:
                raise InvalidKey(f"{origin} has mode {stat.S_IMODE(mode):04o}, so users other than its owner may "
                                 f"read or replace it: chmod 600 {path}")
            raw = file.read(MAX_KEY_FILE_BYTES + 1)
    except OSError as error:
        raise OSError(error.errno, f"cannot read the key file: {error.strerror}", path) from None
    if len(raw) > MAX_KEY_FILE_BYTES:
        raise InvalidKey(f"{origin} is larger than a key file ({MAX_KEY_FILE_BYTES} bytes at most): is it the "
                         "right file?")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidKey(f"{origin} is not JSON: not UTF-8 text") from None
    return _parsed(text, origin), origin


def _parsed(text: str, origin: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        # The decoder's message gives a position, never the text.
        raise InvalidKey(f"{origin} is not JSON: {error}") from None
    except RecursionError:
        raise InvalidKey(f"{origin} is not a JWK Set: its JSON is nested too deeply") from None
