"""What a Dask task runs on its worker: encrypt or decrypt a batch of files
with the per-file keys the client derived. The master key never reaches a
worker."""

from __future__ import annotations

import functools
import os
import shutil
import socket
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import warpcrypt
from warpcrypt.dask._kdf import SEALED_AEADS
from warpcrypt.dask._manifest import DONE, FAILED

ENCRYPT, DECRYPT = "encrypt", "decrypt"
SEALED, PLAIN = "sealed", "plain"


@dataclass(frozen=True)
class Settings:
    """What every task of a job shares."""

    operation: str  # ENCRYPT or DECRYPT
    format: str  # SEALED or PLAIN
    cipher: str  # the AEAD to seal with, or the plain cipher; unused when opening sealed files
    chunk_size: int  # the sealed format's chunk size
    backend: str
    threads: int
    staging_root: str  # a folder beside the outputs, on their file system


# With threads=0 (every core) the library sets up a worker per core for each
# file before it knows how few a small file needs: sealing 1 KB took 1.45 ms
# that way and 1.09 ms on one thread (2-core VM, commit f6861e1), 1 MiB
# 2.16 ms against 2.07.
SINGLE_THREAD_BELOW = 1 << 20


@dataclass(frozen=True)
class FileTask:
    identifier: str
    source: str
    target: str
    size: int  # the input's, when the client listed it
    # Hidden from repr: Dask logs the arguments of a task that raises.
    key: bytes = field(repr=False)
    iv: bytes | None = field(default=None, repr=False)


@functools.cache
def _has_device() -> bool:
    return bool(warpcrypt.devices())


def resolve_backend(requested: str) -> str:
    """The backend to run: for "auto", this worker's GPU where it has one
    (as "hybrid", whose engine feeds the GPU and the CPU threads from one
    queue and keeps on the CPU what the GPU does not run, such as CBC
    encryption), else its CPU. The library's own "auto" would keep file
    input on the CPU."""
    if requested != "auto":
        return requested
    return "hybrid" if _has_device() else "cpu"


def _worker_address() -> str | None:
    from distributed import get_worker

    try:
        return get_worker().address
    except ValueError:  # run outside a Dask worker, by a local scheduler
        return None


def _run_one(settings: Settings, task: FileTask, staged: Path, backend: str) -> tuple[warpcrypt.JobStats, dict]:
    """Writes the result of `task` to `staged`; returns the library's JobStats
    and what the manifest records about nonces and authentication."""
    threads = 1 if settings.threads == 0 and task.size < SINGLE_THREAD_BELOW else settings.threads
    options = {"backend": backend, "threads": threads}
    if settings.format == PLAIN:
        crypt = warpcrypt.encrypt_file if settings.operation == ENCRYPT else warpcrypt.decrypt_file
        stats = crypt(settings.cipher, task.key, task.iv, task.source, str(staged), **options)
        return stats, {"authentication": "none", "iv": task.iv.hex()}
    if settings.operation == ENCRYPT:
        stats = warpcrypt.seal_file(task.source, str(staged), key=task.key, aead=settings.cipher,
                                    chunk_size=settings.chunk_size, **options)
        info = warpcrypt.sealed_info(str(staged))
        return stats, {"authentication": "sealed", "aead": info.aead, "salt": info.salt.hex(),
                       "nonce_prefix": info.nonce_prefix.hex()}
    info = warpcrypt.sealed_info(task.source)
    # Every AEAD's key is a prefix of the 32-byte derivation (HKDF's first
    # output block), so the client need not read the header to derive it.
    stats = warpcrypt.open_file(task.source, str(staged), key=task.key[: SEALED_AEADS[info.aead].key_size], **options)
    return stats, {"authentication": "verified", "aead": info.aead, "salt": info.salt.hex(),
                   "nonce_prefix": info.nonce_prefix.hex()}


def process_file(settings: Settings, task: FileTask) -> dict:
    """Encrypts or decrypts one file and returns its manifest entry's new
    fields. The output is written into a fresh folder under the staging root
    and renamed into place only when whole, so a worker killed mid-file leaves
    nothing at the output path (the client removes the staging root when the
    job ends). Failures of this file are returned, not raised, so that they
    do not stop the other files of the batch."""
    started = time.perf_counter()
    backend = resolve_backend(settings.backend)
    entry = {"worker": _worker_address(), "host": socket.gethostname(), "backend": backend}
    attempt = Path(settings.staging_root, uuid.uuid4().hex)
    try:
        attempt.mkdir(parents=True)
        # A short name: the library's temporary file adds to it, and the
        # target's own name may be near the file system's limit.
        staged = attempt / "output"
        stats, details = _run_one(settings, task, staged, backend)
        Path(task.target).parent.mkdir(parents=True, exist_ok=True)
        os.replace(staged, task.target)
        entry.update(details, status=DONE, error=None, output_size=stats.bytes_out, backend=stats.backend,
                     cpu_bytes=stats.cpu_bytes, gpu_bytes=stats.gpu_bytes)
    except (warpcrypt.Error, OSError) as error:
        failed_authentication = isinstance(error, (warpcrypt.InvalidTag, warpcrypt.FormatError))
        entry.update(status=FAILED, error=f"{type(error).__name__}: {error}", output_size=None,
                     authentication="failed" if failed_authentication else None)
    finally:
        shutil.rmtree(attempt, ignore_errors=True)
    entry["seconds"] = time.perf_counter() - started
    return entry


def process_batch(settings: Settings, tasks: list[FileTask]) -> dict[str, dict]:
    """One Dask task: several small files (or one large one), so the
    scheduler's cost per task is spread over enough bytes."""
    return {task.identifier: process_file(settings, task) for task in tasks}
