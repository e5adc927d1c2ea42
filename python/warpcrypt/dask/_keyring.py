"""How workers come to hold the master key without it, or anything derived
from it, ever travelling in a task.

A task names the key by a `KeyRef`: the key's check value (public, an HMAC
of a fixed label) and, optionally, a key file. The worker looks the key up in
its own process's keyring, filled either by `install_key` (a Dask worker
plugin, which the scheduler holds until `close()` and hands to every worker,
those that join later included) or by reading the key file once. Workers
derive every file's and chunk's key themselves (_kdf.py).
"""

from __future__ import annotations

import os
import threading
import uuid
from dataclasses import dataclass
from typing import Union

from distributed import Client, default_client
from distributed.diagnostics.plugin import WorkerPlugin

import warpcrypt
from warpcrypt._typing import Secret
from warpcrypt.dask._kdf import check_master_key, key_check_value, read_key_file


class KeyNotHeld(warpcrypt.Error):
    """A task needed a master key that its worker does not hold."""


@dataclass(frozen=True)
class KeyRef:
    """What a task carries instead of a key: the key's check value, and the
    key file to read where the key is not installed in the process."""

    key_id: str
    file: str | None = None


@dataclass(frozen=True)
class KeyFile:
    """A master key that every worker reads from `path` itself (a file of at
    least 16 random bytes, readable by its owner alone, mounted or copied to
    the same path on the client and on each worker). The key reaches no
    scheduler."""

    path: str

    def ref(self) -> KeyRef:
        # A relative path is the client's, as the job's local paths are: the
        # workers, started in folders of their own, get it made absolute.
        path = os.path.abspath(self.path)
        return KeyRef(key_check_value(read_key_file(path)), path)


class _Keyring:
    """The master keys this process holds, by check value. Installs count, so
    that two installs of one key (a user's and a job's) survive the end of
    either; the last removal zeroes the key's bytes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._keys: dict[str, bytearray] = {}
        self._installs: dict[str, int] = {}

    def add(self, key_id: str, key: bytearray) -> None:
        with self._lock:
            self._keys.setdefault(key_id, key)
            self._installs[key_id] = self._installs.get(key_id, 0) + 1

    def remove(self, key_id: str) -> None:
        with self._lock:
            self._installs[key_id] -= 1
            if self._installs[key_id] == 0:
                del self._installs[key_id]
                key = self._keys.pop(key_id)
                key[:] = bytes(len(key))

    def get(self, key_id: str) -> bytes | None:
        with self._lock:
            key = self._keys.get(key_id)
            return None if key is None else bytes(key)


_keyring = _Keyring()


def held_key(ref: KeyRef) -> bytes:
    """The master key `ref` names, as this process holds it."""
    key = _keyring.get(ref.key_id)
    if key is not None:
        return key
    if ref.file is not None:
        key = read_key_file(ref.file)
        if key_check_value(key) != ref.key_id:
            raise KeyNotHeld(f"the key file {ref.file} on this worker holds another master key than the client's")
        _keyring.add(ref.key_id, bytearray(key))
        return key
    raise KeyNotHeld(f"this worker holds no master key {ref.key_id[:16]}: install it with "
                     "warpcrypt.dask.install_key(key, client), or give every worker a KeyFile")


class _KeyPlugin(WorkerPlugin):
    """The worker plugin that carries the key: set up on every worker, those
    that join later included, and torn down (the key zeroed) when
    unregistered. Its repr names the key by its check value alone."""

    def __init__(self, key: bytes, key_id: str) -> None:
        self._key = bytearray(key)
        self.key_id = key_id

    def __repr__(self) -> str:
        return f"_KeyPlugin(key_id={self.key_id[:16]!r})"

    def setup(self, worker: object) -> None:
        _keyring.add(self.key_id, bytearray(self._key))
        self._key[:] = bytes(len(self._key))

    def teardown(self, worker: object) -> None:
        _keyring.remove(self.key_id)


class InstalledKey:
    """A master key held by this process and, with a client, by every worker
    of its cluster, until `close()` (or the end of a ``with`` block). Hand it
    as `key=` to the lazy forms; its repr shows the check value alone."""

    def __init__(self, key: bytes, client: Client | None) -> None:
        key = check_master_key(key)
        self.ref = KeyRef(key_check_value(key))
        self._client = client
        self._plugin_name: str | None = None
        self._open = True
        _keyring.add(self.ref.key_id, bytearray(key))
        if client is not None:
            name = f"warpcrypt-key-{uuid.uuid4().hex}"
            try:
                client.register_plugin(_KeyPlugin(key, self.ref.key_id), name=name)
            except BaseException:
                _keyring.remove(self.ref.key_id)
                raise
            self._plugin_name = name

    def __repr__(self) -> str:
        return f"InstalledKey(key_id={self.ref.key_id[:16]!r}, on_cluster={self._plugin_name is not None})"

    def close(self) -> None:
        """Removes the key from the scheduler and the workers (which zero it)
        and from this process. Idempotent."""
        if not self._open:
            return
        self._open = False
        try:
            if self._client is not None and self._plugin_name is not None:
                self._client.unregister_worker_plugin(self._plugin_name)  # type: ignore[no-untyped-call]
        finally:
            _keyring.remove(self.ref.key_id)

    def __enter__(self) -> InstalledKey:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def install_key(key: bytes, client: Client | None = None, *, local_only: bool = False) -> InstalledKey:
    """Installs the master `key` on every worker of `client`'s cluster (by
    default the current distributed client, if any) and in this process, for
    Dask's local schedulers; use as ``with install_key(key, client) as k:``.
    The scheduler holds the key (as a worker plugin) until the block ends.
    `local_only`: this process alone, for Dask's local schedulers."""
    if local_only:
        client = None
    elif client is None:
        try:
            client = default_client()  # type: ignore[no-untyped-call]
        except ValueError:  # no client: Dask's local schedulers only
            client = None
    return InstalledKey(key, client)


# The master key as jobs and arrays take it: one the workers hold already,
# or (for a job that runs at once, which installs it for its duration) its
# bytes.
HeldKey = Union[InstalledKey, KeyFile]
MasterKey = Union[Secret, HeldKey]


def key_ref(key: object) -> KeyRef:
    """The KeyRef of a key the workers already hold: an InstalledKey or a
    KeyFile. Raw bytes are refused: a lazy graph runs after this call
    returns, so the workers must hold the key by then."""
    if isinstance(key, InstalledKey):
        return key.ref
    if isinstance(key, KeyFile):
        return key.ref()
    if isinstance(key, KeyRef):
        return key
    raise TypeError("a lazy job or array needs a key the workers hold: warpcrypt.dask.install_key(key, client) "
                    "(installed until the graph has run) or warpcrypt.dask.KeyFile(path)")
