"""encrypt_files and decrypt_files: the client's side of a job. The client
lists the inputs, derives every file's key from the master key, submits
batches of files to the Dask cluster, and records each result in the
manifest as it arrives."""

from __future__ import annotations

import os
import shutil
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import distributed

from warpcrypt import _native
from warpcrypt.dask._inputs import PathsOrGlob, collect_inputs
from warpcrypt.dask._kdf import (
    DerivedKey,
    check_master_key,
    derive_file_key,
    is_sealed_cipher,
    key_check_value,
    new_id,
    plain_cipher_info,
    sealed_file_secret,
)
from warpcrypt.dask._manifest import DONE, FAILED, MANIFEST_NAME, PENDING, Manifest, ManifestMismatch, read_manifest
from warpcrypt.dask._worker import DECRYPT, ENCRYPT, PLAIN, SEALED, FileTask, Settings, process_batch

# The sealed format's chunk sizes, from the library (docs/format.md).
MIN_CHUNK_SIZE, MAX_CHUNK_SIZE = _native.SEAL_MIN_CHUNK_BYTES, _native.SEAL_MAX_CHUNK_BYTES
SEALED_SUFFIX = ".wcs"
PLAIN_SUFFIX = ".enc"
STAGING_NAME = ".warpcrypt-staging"

# Small files travel in batches, one Dask task each. The scheduler manages a
# few thousand tasks a second, so a task should carry tens of megabytes for a
# cluster to reach tens of GB/s: up to DEFAULT_TASK_BYTES (a larger file is a
# task of its own) and MAX_FILES_PER_TASK files. A small job is cut finer, into
# at least TASKS_PER_SLOT tasks per worker thread, so that every worker gets
# a share.
DEFAULT_TASK_BYTES = 64 << 20
MAX_FILES_PER_TASK = 256
TASKS_PER_SLOT = 4


@dataclass
class WorkerSummary:
    """What one worker did in a run. `busy_seconds` adds up its files' times,
    so `throughput` is its rate while working (bytes per second)."""

    worker: str
    host: str
    backends: list[str]
    files: int = 0
    bytes: int = 0
    gpu_bytes: int = 0
    busy_seconds: float = 0.0

    @property
    def throughput(self) -> float:
        return self.bytes / self.busy_seconds if self.busy_seconds else 0.0


@dataclass
class JobReport:
    """The outcome of one run of encrypt_files or decrypt_files. `bytes`
    counts the inputs processed in this run; `throughput` is that over the
    run's wall time, in bytes per second."""

    operation: str
    manifest: Path
    processed: int
    skipped: int
    failed: dict[str, str]
    bytes: int
    seconds: float
    workers: list[WorkerSummary] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed

    @property
    def throughput(self) -> float:
        return self.bytes / self.seconds if self.seconds else 0.0

    def to_dict(self) -> dict:
        report = asdict(self)
        report["manifest"] = str(self.manifest)
        report["throughput"] = self.throughput
        for summary, worker in zip(report["workers"], self.workers):
            summary["throughput"] = worker.throughput
        return report

    def summary(self) -> str:
        """A few lines for people: totals, then one line per worker (GB/s are
        10^9 bytes per second)."""
        lines = [f"{self.operation}: {self.processed} files, {self.bytes / 1e9:.3f} GB in {self.seconds:.2f} s "
                 f"({self.throughput / 1e9:.3f} GB/s); {self.skipped} already done, {len(self.failed)} failed"]
        for w in self.workers:
            lines.append(f"  {w.worker} ({w.host}, {'+'.join(w.backends)}): {w.files} files, "
                         f"{w.bytes / 1e9:.3f} GB, {w.busy_seconds:.2f} s busy, {w.throughput / 1e9:.3f} GB/s"
                         + (f", {w.gpu_bytes / 1e9:.3f} GB on the GPU" if w.gpu_bytes else ""))
        lines.extend(f"  failed: {identifier}: {reason}" for identifier, reason in sorted(self.failed.items()))
        lines.append(f"  manifest: {self.manifest}")
        return "\n".join(lines)


def _client(client: distributed.Client | None) -> distributed.Client:
    return client if client is not None else distributed.default_client()


def _batches(planned: list[FileTask], task_bytes: int, slots: int) -> list[list[FileTask]]:
    """Groups files into tasks of up to `task_bytes`, fewer for a job too
    small to give each of the cluster's `slots` several tasks; largest files
    first, so that the longest tasks start early and small ones fill the
    gaps at the end."""
    total = sum(task.size for task in planned)
    task_bytes = min(task_bytes, max(1, total // (TASKS_PER_SLOT * max(1, slots))))
    batches: list[list[FileTask]] = []
    current: list[FileTask] = []
    current_bytes = 0
    for task in sorted(planned, key=lambda task: task.size, reverse=True):
        if current and (current_bytes + task.size > task_bytes or len(current) == MAX_FILES_PER_TASK):
            batches.append(current)
            current, current_bytes = [], 0
        current.append(task)
        current_bytes += task.size
    if current:
        batches.append(current)
    return batches


def _summarise(entries: list[dict]) -> list[WorkerSummary]:
    workers: dict[str, WorkerSummary] = {}
    for entry in entries:
        if entry["status"] != DONE:
            continue
        address = entry.get("worker") or "local"
        summary = workers.setdefault(address, WorkerSummary(address, entry["host"], []))
        if entry["backend"] not in summary.backends:
            summary.backends.append(entry["backend"])
        summary.files += 1
        summary.bytes += entry["input_size"]
        summary.gpu_bytes += entry.get("gpu_bytes") or 0
        summary.busy_seconds += entry["seconds"]
    return sorted(workers.values(), key=lambda w: w.worker)


def _show_progress(futures: list[distributed.Future]) -> threading.Thread:
    """Dask's text progress bar, drawn from a thread of its own: it blocks
    until the futures finish, while this thread records their results."""
    thread = threading.Thread(target=distributed.progress, args=(futures,), kwargs={"notebook": False},
                              daemon=True)
    thread.start()
    return thread


@dataclass
class _Job:
    """A job planned against its manifest: what to submit and how."""

    manifest: Manifest
    settings: Settings
    inputs: dict[str, Path]  # manifest key (input path relative to the input root) -> path
    output_of: Callable[[str], str]  # manifest key -> output path relative to the output root
    derive: Callable[[str], DerivedKey]  # manifest key -> the file's key
    refuse_changed_inputs: bool  # plain encryption: a changed input would reuse its nonce


def _plan(job: _Job, output_root: Path) -> tuple[list[FileTask], int]:
    """The files to process, and how many were already
    done. A file counts as done if the manifest says so, its input has the
    size and modification time recorded then, and its output the size."""
    planned, skipped = [], 0
    for name, source in job.inputs.items():
        try:
            status = source.stat()
        except OSError as error:  # gone since it was listed
            job.manifest.files.setdefault(name, {"input": name}).update(status=FAILED, error=f"{error}")
            continue
        stamp = {"input_size": status.st_size, "input_mtime_ns": status.st_mtime_ns}
        output = job.output_of(name)
        target = output_root / output
        entry = job.manifest.files.get(name)
        unchanged = entry is not None and all(entry.get(k) == v for k, v in stamp.items())
        if unchanged and entry["status"] == DONE and target.is_file() and target.stat().st_size == entry["output_size"]:
            skipped += 1
            continue
        if entry is not None and not unchanged and job.refuse_changed_inputs:
            entry.update(status=FAILED, error="the input changed after this job first read it; its derived "
                         "nonce is spent, so encrypt the new contents in a new job (another output folder)")
            continue
        job.manifest.files[name] = {"input": name, **stamp, "output": output, "output_size": None,
                                    "status": PENDING, "error": None}
        derived = job.derive(name)
        planned.append(FileTask(name, str(source), str(target), status.st_size, derived.key, derived.iv))
    return planned, skipped


def _run(job: _Job, client: distributed.Client | None, *, task_bytes: int, progress: bool) -> JobReport:
    started = time.perf_counter()
    output_root = job.manifest.path.parent
    staging_root = Path(job.settings.staging_root)
    # A run killed before its end leaves attempts of files it never finished.
    shutil.rmtree(staging_root, ignore_errors=True)
    planned, skipped = _plan(job, output_root)
    job.manifest.save()
    finished: list[str] = []
    futures: list[distributed.Future] = []
    try:
        if planned:
            client = _client(client)
            batches = _batches(planned, task_bytes, sum(client.nthreads().values()))
            # Named keys: Dask's progress bar and dashboard show "warpcrypt-encrypt".
            prefix = f"warpcrypt-{job.settings.operation}-{uuid.uuid4().hex[:8]}"
            futures = [client.submit(process_batch, job.settings, batch, key=f"{prefix}-{i}")
                       for i, batch in enumerate(batches)]
            batch_of = {future.key: batch for future, batch in zip(futures, batches)}
            bar = _show_progress(futures) if progress else None
            for future in distributed.as_completed(futures):
                batch = batch_of[future.key]
                try:
                    results = future.result()
                except Exception as error:  # the task itself failed: its workers died too often, ...
                    reason = f"task failed: {type(error).__name__}: {error}"
                    results = {task.identifier: {"status": FAILED, "error": reason} for task in batch}
                for name, fields in results.items():
                    job.manifest.files[name].update(fields)
                    finished.append(name)
                job.manifest.save_if_due()
            if bar is not None:
                bar.join()
    finally:
        # Interrupted (Ctrl-C, a lost scheduler): what is queued need not run.
        for future in futures:
            if not future.done():
                future.cancel()
        shutil.rmtree(staging_root, ignore_errors=True)
        entries = [job.manifest.files[name] for name in finished]
        report = JobReport(
            operation=job.settings.operation,
            manifest=job.manifest.path,
            processed=len(finished),
            skipped=skipped,
            failed={name: entry["error"] for name, entry in job.manifest.files.items()
                    if name in job.inputs and entry["status"] == FAILED},
            bytes=sum(entry["input_size"] for entry in entries if entry["status"] == DONE),
            seconds=time.perf_counter() - started,
            workers=_summarise(entries),
        )
        job.manifest.content["last_run"] = report.to_dict()
        job.manifest.save()
    return report


def _collect(paths: PathsOrGlob, root: str | os.PathLike | None, output_root: Path) -> tuple[Path, dict[str, Path]]:
    input_root, inputs = collect_inputs(paths, root=root, exclude=[output_root])
    # Outputs inside the input folder are left out of the inputs; the other
    # way round every input would be.
    if input_root.is_relative_to(output_root):
        raise ValueError(f"the input folder {input_root} lies in the output folder {output_root}")
    return input_root, inputs


def encrypt_files(
    paths: PathsOrGlob,
    out_dir: str | os.PathLike,
    *,
    key: bytes,
    cipher: str = "aes-256-gcm",
    client: distributed.Client | None = None,
    root: str | os.PathLike | None = None,
    suffix: str | None = None,
    chunk_size: int = 1 << 20,
    backend: str = "auto",
    threads: int = 0,
    task_bytes: int = DEFAULT_TASK_BYTES,
    progress: bool = False,
) -> JobReport:
    """Encrypts files on a Dask cluster into `out_dir`, each under its own
    key derived from the master `key`, and returns a report.

    `paths`: a directory (every file under it), a glob ("data/**/*.npy"), a
    file, or a list of files; `root` (by default the directory, the glob's
    fixed part, or the files' common folder) is what their identifiers, and
    so their output paths under `out_dir`, are relative to. The client and
    every worker must see these paths, and `out_dir`, at the same place.

    `cipher`: an AEAD of the sealed-file format ("aes-256-gcm",
    "aes-128-gcm", "aes-192-gcm", "chacha20-poly1305"), which writes sealed
    files (docs/format.md, suffix ".wcs", `chunk_size` bytes per AEAD chunk);
    or a plain cipher with an IV ("aes-256-ctr", "chacha20", ...), which
    writes what ``warpcrypt enc`` writes, without authentication (suffix
    ".enc"). `backend`: "auto" (each worker's GPU where it has one, else its
    CPU), "cpu", "gpu" or "hybrid"; `threads`: CPU threads per file, 0 for
    every core of the worker's machine.

    The manifest, `out_dir`/warpcrypt-manifest.json, records every file; a
    rerun skips the files it shows done, and one with another key or cipher
    is refused (ManifestMismatch). A file that fails (unreadable, ...) is
    recorded as failed and the others go on. `client`: the Dask client, by
    default the current one. `task_bytes`: how many bytes of small files one
    task may carry. `progress`: draw Dask's progress bar.
    """
    master_key = check_master_key(key)
    sealed = is_sealed_cipher(cipher)
    name = cipher.lower() if sealed else plain_cipher_info(cipher).name
    # Checked here rather than failing every file on the workers.
    if sealed and not (MIN_CHUNK_SIZE <= chunk_size <= MAX_CHUNK_SIZE and chunk_size & (chunk_size - 1) == 0):
        raise ValueError(f"chunk_size must be a power of two from {MIN_CHUNK_SIZE} to {MAX_CHUNK_SIZE}")
    suffix = suffix or (SEALED_SUFFIX if sealed else PLAIN_SUFFIX)
    output_root = Path(os.path.abspath(out_dir))
    output_root.mkdir(parents=True, exist_ok=True)
    input_root, inputs = _collect(paths, root, output_root)
    header = {
        "operation": ENCRYPT, "format": SEALED if sealed else PLAIN, "cipher": name, "kdf": "HKDF-SHA256",
        "key_check": key_check_value(master_key), "job_id": None if sealed else new_id().hex(),
        "suffix": suffix, "chunk_size": chunk_size if sealed else None,
        "input_root": str(input_root), "output_root": str(output_root),
    }
    manifest = Manifest.open(output_root / MANIFEST_NAME, header)
    job_id = bytes.fromhex(manifest.job_id) if manifest.job_id else None
    settings = Settings(ENCRYPT, header["format"], name, chunk_size, backend, threads,
                        str(output_root / STAGING_NAME))
    job = _Job(manifest, settings, inputs, output_of=lambda identifier: identifier + suffix,
               derive=lambda identifier: derive_file_key(master_key, identifier, cipher=name, job_id=job_id),
               refuse_changed_inputs=not sealed)
    return _run(job, client, task_bytes=task_bytes, progress=progress)


def _source_manifest(path: Path, master_key: bytes) -> dict | None:
    """The encryption's manifest, if there is one, after checking that it
    was an encryption under this master key."""
    if not path.is_file():
        return None
    content = read_manifest(path)
    if content["operation"] != ENCRYPT:
        raise ManifestMismatch(f"{path} records a {content['operation']} job, not an encryption")
    if content["key_check"] != key_check_value(master_key):
        raise ManifestMismatch(f"{path} was encrypted under another master key")
    return content


def decrypt_files(
    paths: PathsOrGlob,
    out_dir: str | os.PathLike,
    *,
    key: bytes,
    client: distributed.Client | None = None,
    root: str | os.PathLike | None = None,
    suffix: str | None = None,
    source_manifest: str | os.PathLike | None = None,
    backend: str = "auto",
    threads: int = 0,
    task_bytes: int = DEFAULT_TASK_BYTES,
    progress: bool = False,
) -> JobReport:
    """Decrypts what encrypt_files wrote: the files among `paths` whose names
    end with the suffix, each to its identifier (the name without the suffix)
    under `out_dir`. The arguments are encrypt_files'.

    The encryption's manifest (`source_manifest`, by default
    warpcrypt-manifest.json in the input root) gives the cipher, the suffix
    and, for plain ciphers, the job id, and refuses a wrong master key
    before any work. Sealed files need no manifest: each file's header names
    its AEAD. A sealed file that does not authenticate (damaged, truncated,
    swapped) is recorded as failed with ``"authentication": "failed"``, and
    no output is written for it.
    """
    master_key = check_master_key(key)
    output_root = Path(os.path.abspath(out_dir))
    input_root, candidates = _collect(paths, root, output_root)
    source = _source_manifest(Path(source_manifest or input_root / MANIFEST_NAME), master_key)
    output_root.mkdir(parents=True, exist_ok=True)
    if source is None:
        data_format, cipher, job_id, suffix = SEALED, None, None, suffix or SEALED_SUFFIX
    else:
        data_format, job_id = source["format"], source["job_id"]
        cipher = source["cipher"] if data_format == PLAIN else None
        suffix = suffix or source["suffix"]
    inputs = {name: path for name, path in candidates.items() if name.endswith(suffix)}
    header = {
        "operation": DECRYPT, "format": data_format, "cipher": cipher, "kdf": "HKDF-SHA256",
        "key_check": key_check_value(master_key), "job_id": job_id, "suffix": suffix, "chunk_size": None,
        "input_root": str(input_root), "output_root": str(output_root),
    }
    manifest = Manifest.open(output_root / MANIFEST_NAME, header)
    settings = Settings(DECRYPT, data_format, cipher or "", 0, backend, threads, str(output_root / STAGING_NAME))

    def identifier(name: str) -> str:
        return name[: -len(suffix)]

    if data_format == SEALED:
        def derive(name: str) -> DerivedKey:
            return DerivedKey(sealed_file_secret(master_key, identifier(name)), None)
    else:
        def derive(name: str) -> DerivedKey:
            return derive_file_key(master_key, identifier(name), cipher=cipher, job_id=bytes.fromhex(job_id))

    job = _Job(manifest, settings, inputs, output_of=identifier, derive=derive, refuse_changed_inputs=False)
    return _run(job, client, task_bytes=task_bytes, progress=progress)
