"""What a Dask task runs on its worker: encrypt or decrypt a batch of files.
The task carries paths, the job's public id and a reference to the master
key; the worker derives each file's key from the master key it holds
(_keyring.py), so no key travels in the task graph."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

import fsspec  # type: ignore[import-untyped]
from fsspec.implementations.local import LocalFileSystem  # type: ignore[import-untyped]

import warpcrypt
from warpcrypt import _native
from warpcrypt._plan import Data
from warpcrypt.dask._inputs import listed, stat_stamp, store_errors, url_of
from warpcrypt.dask._kdf import SEALED_AEADS, plain_file_key, sealed_file_secret
from warpcrypt.dask._keyring import KeyRef, held_key
from warpcrypt.dask._manifest import DONE, FAILED, PLAIN, FileEntry

ENCRYPT, DECRYPT = "encrypt", "decrypt"

# The topic of the scheduler's event log where workers say which files they
# committed (see _announce). The scheduler keeps a topic's last
# distributed.admin.low-level-log-length events (1000 by default).
COMMIT_TOPIC = "warpcrypt-commits"
# What the manifest credits to the worker that did a file's work
# (_jobs.py's _credit reads them from the event).
CREDIT_FIELDS = ("worker", "host", "backend", "seconds", "cpu_bytes", "gpu_bytes")
# A worker tells the client how far a file has got at most this often (in
# seconds), on the run's own topic (Settings.progress_topic): often enough
# for a line on a terminal, rarely enough to cost the scheduler nothing.
PROGRESS_INTERVAL = 0.5
# Objects are copied in blocks of this size to a worker's local disk.
COPY_BLOCK = 8 << 20


class InputChanged(warpcrypt.Error):
    """An input was not what the job listed when a worker read it, or
    changed while it was read: nothing was written for it."""


@dataclass(frozen=True)
class Settings:
    """What every task of a job shares; nothing in it is secret."""

    operation: str  # ENCRYPT or DECRYPT
    format: str  # SEALED or PLAIN
    cipher: str  # the AEAD to seal with, or the plain cipher; unused when opening sealed files
    chunk_size: int  # the sealed format's chunk size
    backend: str
    threads: int
    job_id: bytes  # the encryption job's id, public: an input of every file's key
    key: KeyRef
    input_protocol: str  # fsspec's names of the file systems, which each worker opens itself
    output_protocol: str
    staging: str  # a folder of the output tree, on output_fs, that the job removes when it ends
    run: str  # this run's random id, in its commit events
    # Where workers log the bytes done of each file, while the client shows
    # progress; None: it does not.
    progress_topic: str | None = None

    @property
    def input_fs(self) -> fsspec.AbstractFileSystem:
        return fsspec.filesystem(self.input_protocol)

    @property
    def output_fs(self) -> fsspec.AbstractFileSystem:
        return fsspec.filesystem(self.output_protocol)


# With threads=0 (every core) the library sets up a worker per core for each
# file before it knows how few a small file needs: sealing 1 KB took 1.45 ms
# that way and 1.09 ms on one thread (2-core VM, commit f6861e1), 1 MiB
# 2.16 ms against 2.07.
SINGLE_THREAD_BELOW = 1 << 20


@dataclass(frozen=True)
class FileTask:
    name: str  # the manifest's key: the input's path relative to the input root
    identifier: str  # what the file's key derives from: the plaintext's path relative to the root
    source: str  # on input_fs
    target: str  # on output_fs
    size: int  # the input's, as listed
    stamp: str  # the input's stamp as listed (_inputs.Listed), which it must still have when read
    replaces: str | None  # the version of what the target held when the job was planned, if anything
    # A plain cipher's IV: to encrypt, the one the client drew for this run
    # (its manifest entry records it before any task runs); to decrypt, the
    # one the encryption's manifest records. None for sealed files.
    iv: bytes | None


class _RunOptions(TypedDict):
    """The file calls' keyword arguments that every file of a job shares."""

    backend: str
    threads: int
    progress: Callable[[int, int], None] | None


def resolve_backend(requested: str, cipher: str, *, data: Data, size: int, decrypt: bool, threads: int) -> str:
    """The backend to run: as requested, and for "auto" the one the
    library's plan for this work names (warpcrypt.describe_plan), by the
    rule its jobs follow: files and host memory on the CPU unless the GPU
    has been measured faster there, device memory on its own GPU."""
    if requested != "auto":
        return requested
    return warpcrypt.describe_plan(cipher, data=data, size=size, decrypt=decrypt, threads=threads).backend


def _worker_address() -> str | None:
    from distributed import get_worker

    try:
        return get_worker().address
    except ValueError:  # run outside a Dask worker, by a local scheduler
        return None


def _who() -> str:
    """This process as messages name it: its environment is the one that
    an object store's credentials come from."""
    address = _worker_address()
    host = socket.gethostname()
    return f"worker {address} on {host}" if address is not None else f"the process {os.getpid()} on {host}"


def _announce(settings: Settings, name: str, entry: FileEntry) -> None:
    """Logs on the scheduler that this worker committed `name`. Should it
    die before the client has its task's result, the task runs again
    elsewhere and finds the output committed (_committed_in_this_run): the
    client then credits the file from this event, not to that worker. The
    event is lost if the worker dies before its next message to the
    scheduler (milliseconds); the file is then credited to nobody."""
    from distributed import get_worker

    try:
        worker = get_worker()
    except ValueError:  # no Dask worker: nobody else can redo the task
        return
    worker.log_event(COMMIT_TOPIC, {"run": settings.run, "name": name,
                                    **{field: entry.get(field) for field in CREDIT_FIELDS}})


def _is_local(fs: fsspec.AbstractFileSystem) -> bool:
    return isinstance(fs, LocalFileSystem)


def _sealed_details(info: warpcrypt.SealedInfo, authentication: str) -> FileEntry:
    return {"authentication": authentication, "aead": info.aead, "salt": info.salt.hex(),
            "nonce_prefix": info.nonce_prefix.hex()}


def _plain_details(task: FileTask) -> FileEntry:
    """What the manifest records of a plain-cipher file: no authentication,
    and the IV, which _plan gives every plain-cipher task."""
    assert task.iv is not None
    return {"authentication": "none", "iv": task.iv.hex()}


def _local_copy(fs: fsspec.AbstractFileSystem, path: str, scratch: Path, name: str) -> str:
    """`path` as a local file: itself on a local file system, else a copy
    downloaded into `scratch`."""
    if _is_local(fs):
        return path
    local = scratch / name
    fs.get_file(path, str(local))
    return str(local)


def _changed(url: str, when: str) -> InputChanged:
    return InputChanged(f"{url} changed {when} (its size, modification time, inode or status change time, or "
                        "its ETag, differ): nothing was written for it; run the job again once it is final")


def _remote_stamp(fs: fsspec.AbstractFileSystem, path: str) -> str:
    fs.invalidate_cache(path)
    return listed(fs.info(path)).stamp


@contextlib.contextmanager
def _input(settings: Settings, task: FileTask, scratch: Path, who: str) -> Iterator[str]:
    """A local path at which the library reads the input as the job listed
    it; raises InputChanged where the input differs from the listing, or
    changed while the library read it.

    A local input is opened once, and the library reads that open file
    through /proc/self/fd: a file renamed over the path meanwhile is not
    the one read, and the open file's status before and after the read
    shows any write to it (within the file system's timestamp resolution:
    a write in the same clock tick as the file's previous change leaves
    the times as they were). An object is read through one open file, whose
    every range request s3fs makes conditional on the ETag it opened (a
    changed object fails the read), into a local copy; its ETag is compared
    with the listing's before and after."""
    fs = settings.input_fs
    url = url_of(fs, task.source)
    if _is_local(fs):
        descriptor = os.open(task.source, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
        try:
            before = stat_stamp(os.fstat(descriptor))
            if before != task.stamp:
                raise _changed(url, "since the job listed it")
            yield f"/proc/self/fd/{descriptor}"
            if stat_stamp(os.fstat(descriptor)) != before:
                raise _changed(url, "while it was read")
        finally:
            os.close(descriptor)
        return
    local = scratch / "input"
    with store_errors(fs, task.source, who):
        with fs.open(task.source, "rb") as remote:
            details = getattr(remote, "details", None) or fs.info(task.source)
            if listed(details).stamp != task.stamp:
                raise _changed(url, "since the job listed it")
            try:
                with open(local, "wb") as copy:
                    shutil.copyfileobj(remote, copy, COPY_BLOCK)
            except OSError:
                if _remote_stamp(fs, task.source) != task.stamp:
                    raise _changed(url, "while it was read") from None
                raise
        if _remote_stamp(fs, task.source) != task.stamp:
            raise _changed(url, "while it was read")
    yield str(local)


def _progress_reporter(settings: Settings, task: FileTask) -> Callable[[int, int], None] | None:
    """The library's progress callback for `task`, where the client shows
    progress: it logs the bytes done on the run's progress topic, at most
    every PROGRESS_INTERVAL seconds, so that the client's count advances
    within a large file rather than when it ends."""
    from distributed import get_worker

    topic = settings.progress_topic
    if topic is None:
        return None
    try:
        worker = get_worker()
    except ValueError:  # no Dask worker: no client to tell
        return None
    last_report = -PROGRESS_INTERVAL

    def report(done: int, total: int) -> None:
        nonlocal last_report
        now = time.monotonic()
        if now - last_report >= PROGRESS_INTERVAL:
            last_report = now
            worker.log_event(topic, {"name": task.name, "done": done})

    return report


def _run_one(settings: Settings, task: FileTask, source: str, staged: Path,
             master_key: bytes) -> tuple[warpcrypt.JobStats, FileEntry]:
    """Writes the result of `task` to `staged`; returns the library's JobStats
    and what the manifest records about nonces and authentication."""
    threads = 1 if settings.threads == 0 and task.size < SINGLE_THREAD_BELOW else settings.threads
    opening_sealed = settings.format != PLAIN and settings.operation == DECRYPT
    info = warpcrypt.sealed_info(source) if opening_sealed else None
    backend = resolve_backend(settings.backend, info.aead if info is not None else settings.cipher, data="stream",
                              size=task.size, decrypt=settings.operation == DECRYPT, threads=threads)
    options: _RunOptions = {"backend": backend, "threads": threads, "progress": _progress_reporter(settings, task)}
    if settings.format == PLAIN:
        key = plain_file_key(master_key, task.identifier, job_id=settings.job_id, cipher=settings.cipher)
        crypt = warpcrypt.encrypt_file if settings.operation == ENCRYPT else warpcrypt.decrypt_file
        stats = crypt(settings.cipher, key, task.iv, source, str(staged), **options)
        return stats, _plain_details(task)
    secret = sealed_file_secret(master_key, settings.job_id, task.identifier)
    if info is None:
        stats = warpcrypt.seal_file(source, str(staged), key=secret[: SEALED_AEADS[settings.cipher].key_size],
                                    aead=settings.cipher, chunk_size=settings.chunk_size, **options)
        return stats, _sealed_details(warpcrypt.sealed_info(str(staged)), "sealed")
    # Every AEAD's key is a prefix of the 32-byte derivation (HKDF's first
    # output block), so the worker cuts it once it has read the header.
    stats = warpcrypt.open_file(source, str(staged), key=secret[: SEALED_AEADS[info.aead].key_size], **options)
    return stats, _sealed_details(info, "verified")


def _commit(settings: Settings, staged: Path, target: str) -> None:
    """Puts a whole output at its final path, so that the target never holds
    part of a file. On a local file system, the library's move into a tree
    of outputs renames it beneath the output folder (where the staging
    folder lies): the folders between are created where missing and never
    followed where they are links, so a link that someone who may write in
    the output tree put there cannot send an output outside it, and a file
    replaced keeps its mode. Elsewhere, an upload to a key of the staging
    folder and a copy into place."""
    fs = settings.output_fs
    if _is_local(fs):
        root = os.path.dirname(settings.staging)
        _native.move_beneath(root, os.path.relpath(target, root), str(staged))
        return
    temporary = f"{settings.staging}/{uuid.uuid4().hex}"
    fs.put_file(str(staged), temporary)
    try:
        fs.mv(temporary, target)
    finally:
        if fs.exists(temporary):
            fs.rm_file(temporary)


def _committed_details(settings: Settings, task: FileTask, scratch: Path) -> FileEntry:
    """The manifest's fields for an output this run committed already: a
    task run again (its worker died before the client recorded its result)
    keeps what the first run wrote instead of writing it anew with fresh
    salts."""
    details: FileEntry = {"output_size": settings.output_fs.size(task.target), "reused": True}
    if settings.format == PLAIN:
        # This run committed it, under the IV the run drew for it.
        return {**details, **_plain_details(task)}
    if settings.operation == ENCRYPT:
        sealed = _local_copy(settings.output_fs, task.target, scratch, "committed")
        return {**details, **_sealed_details(warpcrypt.sealed_info(sealed), "sealed")}
    source = _local_copy(settings.input_fs, task.source, scratch, "input")
    return {**details, **_sealed_details(warpcrypt.sealed_info(source), "verified")}


def _committed_in_this_run(fs: fsspec.AbstractFileSystem, task: FileTask) -> bool:
    """Whether the target holds something other than what it held when the
    job was planned: only a commit of this run puts anything there."""
    try:
        current = listed(fs.info(task.target)).version
    except FileNotFoundError:
        return False
    return current != task.replaces


def process_file(settings: Settings, task: FileTask, master_key: bytes) -> FileEntry:
    """Encrypts or decrypts one file and returns its manifest entry's new
    fields. The output is written into a scratch folder (in the output tree's
    staging folder on a local file system, so that the final rename stays on
    one file system; a local temporary folder otherwise) and committed only
    when whole, so a worker killed mid-file leaves nothing at the output
    path. Failures of this file are returned, not raised, so that they do
    not stop the other files of the batch. An output this run committed
    already is kept, and credited to nobody here: the client credits it to
    the worker that committed it (_announce)."""
    started = time.perf_counter()
    who = _who()
    output_fs = settings.output_fs
    entry: FileEntry = {}
    read_at: str | None = None
    if _is_local(output_fs):
        Path(settings.staging).mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(dir=settings.staging))
    else:
        scratch = Path(tempfile.mkdtemp(prefix="warpcrypt-dask-"))
    try:
        with store_errors(output_fs, task.target, who):
            committed = _committed_in_this_run(output_fs, task)
            if committed:
                entry.update({**_committed_details(settings, task, scratch), "status": DONE,
                              "error": None})
        if not committed:
            with _input(settings, task, scratch, who) as source:
                read_at = source
                # A short name: the library's temporary file adds to it, and
                # the target's own name may be near the file system's limit.
                staged = scratch / "output"
                stats, details = _run_one(settings, task, source, staged, master_key)
            with store_errors(output_fs, task.target, who):
                _commit(settings, staged, task.target)
            entry.update({**details, "status": DONE, "error": None, "output_size": stats.bytes_out,
                          "worker": _worker_address(), "host": socket.gethostname(), "backend": stats.backend,
                          "cpu_bytes": stats.cpu_bytes, "gpu_bytes": stats.gpu_bytes,
                          "seconds": time.perf_counter() - started})
            _announce(settings, task.name, entry)
    except (warpcrypt.Error, OSError) as error:
        failed_authentication = isinstance(error, (warpcrypt.InvalidTag, warpcrypt.FormatError))
        # The library names the file it opened: for a local input, the
        # /proc path of the worker's open file, which the input's stands for.
        reason = str(error) if read_at is None else str(error).replace(read_at, url_of(settings.input_fs, task.source))
        entry.update({"status": FAILED, "error": f"{type(error).__name__}: {reason}", "output_size": None,
                      "authentication": "failed" if failed_authentication else None, "worker": _worker_address(),
                      "host": socket.gethostname(), "seconds": time.perf_counter() - started})
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return entry


def process_batch(settings: Settings, tasks: list[FileTask]) -> dict[str, FileEntry]:
    """One Dask task: several small files (or one large one), so the
    scheduler's cost per task is spread over enough bytes."""
    master_key = held_key(settings.key)
    return {task.name: process_file(settings, task, master_key) for task in tasks}
