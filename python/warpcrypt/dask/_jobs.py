"""encrypt_files and decrypt_files: the client's side of a job. The client
lists the inputs, plans the job against its manifest, makes sure every
worker holds the master key (never a derived key: workers derive those), and
submits batches of files to the Dask cluster, recording each result in the
manifest as it arrives and releasing its future at once. With
``compute=False`` it returns the same work as a dask.delayed graph instead.
Inputs and outputs are local paths or any fsspec URL."""

from __future__ import annotations

import contextlib
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import distributed
import fsspec  # type: ignore[import-untyped]
from dask.delayed import Delayed, delayed
from distributed.comm.addressing import get_address_host
from fsspec.implementations.local import LocalFileSystem  # type: ignore[import-untyped]

from warpcrypt import _native
from warpcrypt._progress_line import ProgressLine
from warpcrypt._typing import PathLike, overload
from warpcrypt.dask._inputs import (
    Listed,
    PathsOrGlob,
    check_bucket,
    collect_inputs,
    listed,
    open_tree,
    protocol_of,
    store_errors,
    url_of,
)
from warpcrypt.dask._kdf import is_sealed_cipher, new_id, new_plain_iv, plain_cipher_info
from warpcrypt.dask._keyring import HeldKey, KeyRef, MasterKey, install_key, key_ref
from warpcrypt.dask._manifest import (
    DONE,
    FAILED,
    PENDING,
    PLAIN,
    SEALED,
    STAGING_PREFIX,
    FileEntry,
    JobHeader,
    JobReportDict,
    Manifest,
    ManifestContent,
    ManifestMismatch,
    WorkerSummaryDict,
    manifest_beside,
    read_manifest,
    recorded_iv,
)
from warpcrypt.dask._worker import (
    COMMIT_TOPIC,
    DECRYPT,
    ENCRYPT,
    FileTask,
    Settings,
    process_batch,
)

# The sealed format's chunk sizes, from the library (docs/format.md).
MIN_CHUNK_SIZE, MAX_CHUNK_SIZE = _native.SEAL_MIN_CHUNK_BYTES, _native.SEAL_MAX_CHUNK_BYTES
SEALED_SUFFIX = ".wcs"
PLAIN_SUFFIX = ".enc"
# A summary lists this many strays, then counts the rest.
STRAYS_SHOWN = 20

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
    """What one worker did in a run: the files it committed. `busy_seconds`
    adds up their times, so `throughput` is its rate while working (bytes
    per second). `lost`: the worker left the cluster during the run (it
    died, or was retired). The files committed by a worker that died before
    saying so are credited to a summary of worker "unknown"."""

    worker: str
    host: str
    backends: list[str]
    files: int = 0
    bytes: int = 0
    gpu_bytes: int = 0
    busy_seconds: float = 0.0
    lost: bool = False

    @property
    def throughput(self) -> float:
        return self.bytes / self.busy_seconds if self.busy_seconds else 0.0

    def to_dict(self) -> WorkerSummaryDict:
        return {"worker": self.worker, "host": self.host, "backends": list(self.backends), "files": self.files,
                "bytes": self.bytes, "gpu_bytes": self.gpu_bytes, "busy_seconds": self.busy_seconds,
                "throughput": self.throughput, "lost": self.lost}


@dataclass
class JobReport:
    """The outcome of one run of encrypt_files or decrypt_files.
    `processed` counts the files done in this run, `failed` those that
    failed (by name, with the reason), `bytes` the inputs done in this run;
    `throughput` is that over the run's wall time, in bytes per second.
    `strays`: a decryption's files that the encryption's manifest does not
    list as done, which it left alone. `manifest_mac`: the manifest's MAC as
    the run saved it; pinned, it tells that manifest from any other, an
    older one of the same job included."""

    operation: str
    manifest: str
    processed: int
    skipped: int
    failed: dict[str, str]
    bytes: int
    seconds: float
    workers: list[WorkerSummary] = field(default_factory=list)
    strays: list[str] = field(default_factory=list)
    manifest_mac: str = ""

    @property
    def ok(self) -> bool:
        return not self.failed

    @property
    def throughput(self) -> float:
        return self.bytes / self.seconds if self.seconds else 0.0

    def to_dict(self) -> JobReportDict:
        return {"operation": self.operation, "manifest": self.manifest, "processed": self.processed,
                "skipped": self.skipped, "failed": dict(self.failed), "bytes": self.bytes, "seconds": self.seconds,
                "workers": [worker.to_dict() for worker in self.workers], "strays": list(self.strays),
                "throughput": self.throughput}

    def summary(self) -> str:
        """A few lines for people: totals, then one line per worker (GB/s are
        10^9 bytes per second)."""
        lines = [f"{self.operation}: {self.processed} files, {self.bytes / 1e9:.3f} GB in {self.seconds:.2f} s "
                 f"({self.throughput / 1e9:.3f} GB/s); {self.skipped} already done, {len(self.failed)} failed"]
        for w in self.workers:
            lines.append(f"  {w.worker} ({w.host}, {'+'.join(w.backends) or '-'}): {w.files} files, "
                         f"{w.bytes / 1e9:.3f} GB, {w.busy_seconds:.2f} s busy, {w.throughput / 1e9:.3f} GB/s"
                         + (f", {w.gpu_bytes / 1e9:.3f} GB on the GPU" if w.gpu_bytes else "")
                         + ("; lost during the run" if w.lost else ""))
        lines.extend(f"  failed: {identifier}: {reason}" for identifier, reason in sorted(self.failed.items()))
        lines.extend(f"  not in the encryption's manifest, left alone: {name}" for name in self.strays[:STRAYS_SHOWN])
        if len(self.strays) > STRAYS_SHOWN:
            lines.append(f"  not in the encryption's manifest, left alone: {len(self.strays) - STRAYS_SHOWN} more")
        lines.append(f"  manifest: {self.manifest} (MAC {self.manifest_mac})")
        return "\n".join(lines)


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


# The worker a summary credits the files with: outputs that a task run
# again found committed, whose worker died before saying it had.
UNKNOWN_WORKER = "unknown"


def _summarise(entries: list[FileEntry], lost: set[str]) -> list[WorkerSummary]:
    """One summary per worker that committed files, and per worker `lost`
    during the run, files or not."""
    workers: dict[str, WorkerSummary] = {}
    for entry in entries:
        if entry["status"] != DONE:
            continue
        if "host" in entry:
            address, host = entry.get("worker") or "local", entry["host"]
        else:
            address, host = UNKNOWN_WORKER, "?"
        summary = workers.setdefault(address, WorkerSummary(address, host, []))
        backend = entry.get("backend")
        if backend and backend not in summary.backends:
            summary.backends.append(backend)
        summary.files += 1
        summary.bytes += entry["input_size"]
        summary.gpu_bytes += entry.get("gpu_bytes") or 0
        summary.busy_seconds += entry.get("seconds") or 0.0
    for address in lost:
        workers.setdefault(address, WorkerSummary(address, get_address_host(address), [])).lost = True
    return sorted(workers.values(), key=lambda w: w.worker)


def _credit(client: distributed.Client, run: str, results: dict[str, FileEntry]) -> None:
    """Credits each output that a task run again found committed to the
    worker that committed it, from that worker's commit event (_worker.py's
    _announce); one whose event never came stays credited to nobody."""
    uncredited = {name: entry for name, entry in results.items() if entry["status"] == DONE and "host" not in entry}
    if not uncredited:
        return
    for _, event in client.get_events(COMMIT_TOPIC):
        if event.get("run") == run and event.get("name") in uncredited:
            credit: FileEntry = {"worker": event["worker"], "host": event["host"], "backend": event["backend"],
                                 "seconds": event["seconds"], "cpu_bytes": event["cpu_bytes"],
                                 "gpu_bytes": event["gpu_bytes"]}
            uncredited[event["name"]].update(credit)


@dataclass
class _Job:
    """A job planned against its manifest: what to submit and how. Picklable
    (the lazy form's last task records the results), and free of secrets."""

    manifest: Manifest
    settings: Settings
    inputs: list[str]  # this run's inputs, by name: the manifest may list others, from earlier runs
    planned: list[FileTask]
    skipped: int
    started: float  # time.time() when planned
    strays: list[str]
    workers_at_start: list[str] = field(default_factory=list)  # the cluster's, when the run was submitted

    def record(self, results: dict[str, FileEntry], client: distributed.Client | None) -> None:
        if client is not None:
            _credit(client, self.settings.run, results)
        for name, fields in results.items():
            self.manifest.files[name].update(fields)

    def remove_staging(self) -> None:
        fs = self.settings.output_fs
        if fs.exists(self.settings.staging):
            fs.rm(self.settings.staging, recursive=True)

    def report(self, finished: list[str], client: distributed.Client | None) -> JobReport:
        """Ends the run: the report, also kept in the manifest, which is
        saved. A worker is lost if it was in the cluster when the run
        started, or committed files in it, and is gone at its end."""
        self.remove_staging()
        done = [entry for entry in (self.manifest.files[name] for name in finished) if entry["status"] == DONE]
        lost: set[str] = set()
        if client is not None:
            committers = {entry.get("worker") for entry in done if "host" in entry} - {None}
            present = set(client.nthreads())  # type: ignore[no-untyped-call]
            lost = (set(self.workers_at_start) | {str(address) for address in committers}) - present
        report = JobReport(
            operation=self.settings.operation,
            manifest=self.manifest.url,
            processed=len(done),
            skipped=self.skipped,
            # A failed entry always holds its reason; str() tells mypy so.
            failed={name: str(self.manifest.files[name]["error"]) for name in self.inputs
                    if self.manifest.files[name]["status"] == FAILED},
            bytes=sum(entry["input_size"] for entry in done),
            seconds=time.time() - self.started,
            workers=_summarise(done, lost),
            strays=self.strays,
        )
        self.manifest.content["last_run"] = report.to_dict()
        self.manifest.save()
        report.manifest_mac = self.manifest.content["mac"]
        return report


def _plan(manifest: Manifest, settings: Settings, inputs: dict[str, Listed], output_root: str,
          output_of: Callable[[str], str], identifier_of: Callable[[str], str],
          iv_of: Callable[[str], bytes | None], missing: dict[str, str], strays: list[str]) -> _Job:
    """The files to process, and how many were already done. A file counts as
    done if the manifest says so, its input has the size and version
    recorded then, and its output the size. Each task learns the version of
    what its target holds now, if anything (an earlier run's output that was
    never recorded, a user's file): a target found with another version was
    committed by this run. `iv_of`: a plain cipher's IV for the file of
    that name (None for sealed files), which its entry records before any
    task runs. `missing`: inputs that should be there and are not, with the
    reason each fails; `strays`: what the report lists as left alone."""
    started = time.time()
    fs = settings.output_fs
    with store_errors(fs, output_root, "the client"):
        existing = {info["name"]: listed(info) for info in fs.find(output_root, detail=True).values()} \
            if fs.exists(output_root) else {}
    planned, skipped = [], 0
    for name, source in inputs.items():
        stamp: FileEntry = {"input_size": source.size, "input_version": source.version}
        output = output_of(name)
        target = f"{output_root}/{output}"
        entry = manifest.files.get(name)
        unchanged = entry is not None and all(entry.get(k) == v for k, v in stamp.items())
        found = existing.get(target)
        if entry is not None and unchanged and entry["status"] == DONE and found is not None \
                and found.size == entry["output_size"]:
            skipped += 1
            continue
        iv = iv_of(name)
        manifest.files[name] = {"input": name, **stamp, "output": output, "output_size": None,
                                "status": PENDING, "error": None, **({"iv": iv.hex()} if iv is not None else {})}
        planned.append(FileTask(name, identifier_of(name), source.path, target, source.size, source.stamp,
                                found.version if found is not None else None, iv))
    for name, reason in missing.items():
        manifest.files[name] = {"input": name, "output": output_of(name), "output_size": None, "status": FAILED,
                                "error": reason}
    job = _Job(manifest, settings, [*inputs, *missing], planned, skipped, started, strays)
    # A run killed before its end leaves attempts of files it never finished.
    job.remove_staging()
    manifest.save()
    return job


def _task_prefix(settings: Settings) -> str:
    # Named keys: Dask's dashboard shows "warpcrypt-encrypt".
    return f"warpcrypt-{settings.operation}-{uuid.uuid4().hex[:8]}"


def _cluster_slots(client: distributed.Client | None) -> int:
    if client is None:
        return _native.default_threads()
    threads: dict[str, int] = client.nthreads()  # type: ignore[no-untyped-call]
    return sum(threads.values())


def _failed_batch(batch: list[FileTask], error: BaseException) -> dict[str, FileEntry]:
    reason = f"task failed: {type(error).__name__}: {error}"
    return {task.name: {"status": FAILED, "error": reason} for task in batch}


class _Progress:
    """The line on stderr that counts a run's bytes done: those of the files
    finished, and of the files under way as far as their workers said
    (_worker.py's _progress_reporter). A large file advances it before it
    ends. Rewritten in place; the run's last file ends it with a newline.
    Workers' reports arrive on the client's event loop, results on the
    caller's thread: a lock keeps the count and the line whole."""

    def __init__(self, operation: str, planned: list[FileTask]) -> None:
        self._line = ProgressLine({ENCRYPT: "encrypting", DECRYPT: "decrypting"}[operation])
        self._sizes = {task.name: task.size for task in planned}
        self._total = sum(self._sizes.values())
        self._finished: set[str] = set()
        self._finished_bytes = 0
        self._under_way: dict[str, int] = {}
        self._lock = threading.Lock()

    def advanced(self, name: str, done: int) -> None:
        with self._lock:
            if name in self._sizes and name not in self._finished:
                self._under_way[name] = min(done, self._sizes[name])
                self._draw()

    def finished(self, names: list[str]) -> None:
        with self._lock:
            for name in names:
                if name in self._sizes and name not in self._finished:
                    self._finished.add(name)
                    self._finished_bytes += self._sizes[name]
                    self._under_way.pop(name, None)
            self._draw()

    def _draw(self) -> None:
        done = self._finished_bytes + sum(self._under_way.values())
        files = (len(self._finished), len(self._sizes))
        self._line.draw(done, self._total, last=files[0] == files[1], files=files)


def _progress_topic(run: str, shown: bool) -> str | None:
    # A topic of the run's own: a client holds one handler per topic, and
    # may run several jobs at once.
    return f"warpcrypt-progress-{run}" if shown else None


def _run(job: _Job, client: distributed.Client, *, task_bytes: int, progress: bool) -> JobReport:
    """Runs the planned batches as futures. Each is released as soon as its
    result is in the manifest, so that the scheduler forgets it: a worker
    that dies later holds no result the scheduler would compute again."""
    finished: list[str] = []
    pending: dict[distributed.Future[dict[str, FileEntry]], list[FileTask]] = {}
    job.workers_at_start = sorted(client.nthreads())  # type: ignore[no-untyped-call]
    shown = _Progress(job.settings.operation, job.planned) if progress and job.planned else None
    topic = job.settings.progress_topic
    if shown is not None and topic is not None:
        def on_report(event: tuple[float, dict[str, Any]]) -> None:
            _, report = event
            shown.advanced(report["name"], report["done"])

        client.subscribe_topic(topic, on_report)  # type: ignore[no-untyped-call]
    try:
        if job.planned:
            prefix = _task_prefix(job.settings)
            batches = _batches(job.planned, task_bytes, _cluster_slots(client))
            for i, batch in enumerate(batches):
                pending[client.submit(process_batch, job.settings, batch, key=f"{prefix}-{i}", pure=False)] = batch
            for future in distributed.as_completed(list(pending)):  # type: ignore[no-untyped-call]
                batch = pending.pop(future)
                try:
                    results = future.result()
                except Exception as error:  # the task itself failed: its workers died too often, ...
                    results = _failed_batch(batch, error)
                future.release()
                job.record(results, client)
                finished.extend(results)
                job.manifest.save_if_due()
                if shown is not None:
                    shown.finished(list(results))
    finally:
        if shown is not None and topic is not None:
            client.unsubscribe_topic(topic)  # type: ignore[no-untyped-call]
        # Interrupted (Ctrl-C, a lost scheduler): what is queued need not run.
        for future in pending:
            future.cancel()  # type: ignore[no-untyped-call]
        report = job.report(finished, client)
    return report


def _finish(job: _Job, *results: dict[str, FileEntry]) -> JobReport:
    """The lazy form's last task: records every batch's results. On a
    distributed worker it asks the scheduler, through the worker's client,
    who committed what and which workers are gone."""
    try:
        client: distributed.Client | None = distributed.get_client()
    except ValueError:  # Dask's local schedulers: no cluster to ask
        client = None
    finished: list[str] = []
    for batch_results in results:
        job.record(batch_results, client)
        finished.extend(batch_results)
    return job.report(finished, client)


def _graph(job: _Job, task_bytes: int) -> Delayed:
    client = _current_client()
    if client is not None:
        job.workers_at_start = sorted(client.nthreads())  # type: ignore[no-untyped-call]
    prefix = _task_prefix(job.settings)
    parts = [delayed(process_batch, pure=False)(job.settings, batch, dask_key_name=f"{prefix}-{i}")
             for i, batch in enumerate(_batches(job.planned, task_bytes, _cluster_slots(client)))]
    graph: Delayed = delayed(_finish, pure=False)(job, *parts, dask_key_name=f"{prefix}-manifest")
    return graph


def compute_job(job: Delayed) -> JobReport:
    """Runs a lazy job (encrypt_files or decrypt_files with compute=False)
    on the current scheduler and returns its report. ``job.compute()`` does
    the same, but dask leaves Delayed.compute unannotated, so that
    ``mypy --strict`` refuses the call in a user's code."""
    report = job.compute()  # type: ignore[no-untyped-call]
    if not isinstance(report, JobReport):
        raise TypeError(f"the graph computed to a {type(report).__name__}, not a JobReport: it is not a lazy job")
    return report


def _current_client() -> distributed.Client | None:
    try:
        client: distributed.Client = distributed.default_client()  # type: ignore[no-untyped-call]
    except ValueError:
        return None
    return client


@contextlib.contextmanager
def _held_by_workers(key: MasterKey, client: distributed.Client | None, compute: bool) -> Iterator[KeyRef]:
    """The reference tasks carry for `key`. Raw bytes are installed on the
    cluster for the job's duration (and removed from the scheduler and the
    workers at its end); a lazy job needs a key that stays held until its
    graph runs: an InstalledKey or a KeyFile."""
    if isinstance(key, (bytes, bytearray, memoryview)) and compute:
        with install_key(bytes(key), client) as installed:
            yield installed.ref
    else:
        yield key_ref(key)


def _check_inside(input_fs: fsspec.AbstractFileSystem, input_root: str, output_fs: fsspec.AbstractFileSystem,
                  output_root: str) -> None:
    # Outputs inside the input folder are left out of the inputs; the other
    # way round every input would be.
    if type(input_fs) is type(output_fs) and (input_root + "/").startswith(output_root + "/"):
        raise ValueError(f"the input folder {url_of(input_fs, input_root)} lies in the output folder "
                         f"{url_of(output_fs, output_root)}")


def _exclusions(output_fs: fsspec.AbstractFileSystem, output_root: str,
                manifest_url: str) -> list[tuple[fsspec.AbstractFileSystem, str]]:
    """What may lie in an input tree but belongs to the job: its output tree
    and its manifest."""
    return [(output_fs, output_root), open_tree(manifest_url)]


def _client_for(client: distributed.Client | None) -> distributed.Client:
    return client if client is not None else distributed.default_client()  # type: ignore[no-untyped-call]


def _execute(job: _Job, client: distributed.Client | None, compute: bool, task_bytes: int,
             progress: bool) -> JobReport | Delayed:
    return _run(job, _client_for(client), task_bytes=task_bytes, progress=progress) if compute \
        else _graph(job, task_bytes)


# compute=True, the default, runs the job and returns its report;
# compute=False returns the graph, which computes to the report, and needs a
# key that the workers hold already.
@overload
def encrypt_files(paths: PathsOrGlob, out_dir: PathLike, *, key: MasterKey, cipher: str = ...,
                  client: distributed.Client | None = ..., root: PathLike | None = ..., suffix: str | None = ...,
                  manifest: PathLike | None = ..., chunk_size: int = ..., backend: str = ..., threads: int = ...,
                  task_bytes: int = ..., progress: bool = ..., compute: Literal[True] = ...) -> JobReport: ...
@overload
def encrypt_files(paths: PathsOrGlob, out_dir: PathLike, *, key: HeldKey, cipher: str = ...,
                  client: distributed.Client | None = ..., root: PathLike | None = ..., suffix: str | None = ...,
                  manifest: PathLike | None = ..., chunk_size: int = ..., backend: str = ..., threads: int = ...,
                  task_bytes: int = ..., progress: bool = ..., compute: Literal[False]) -> Delayed: ...
@overload
def encrypt_files(paths: PathsOrGlob, out_dir: PathLike, *, key: MasterKey, cipher: str = ...,
                  client: distributed.Client | None = ..., root: PathLike | None = ..., suffix: str | None = ...,
                  manifest: PathLike | None = ..., chunk_size: int = ..., backend: str = ..., threads: int = ...,
                  task_bytes: int = ..., progress: bool = ..., compute: bool) -> JobReport | Delayed: ...

def encrypt_files(
    paths: PathsOrGlob,
    out_dir: PathLike,
    *,
    key: MasterKey,
    cipher: str = "aes-256-gcm",
    client: distributed.Client | None = None,
    root: PathLike | None = None,
    suffix: str | None = None,
    manifest: PathLike | None = None,
    chunk_size: int = 1 << 20,
    backend: str = "auto",
    threads: int = 0,
    task_bytes: int = DEFAULT_TASK_BYTES,
    progress: bool = False,
    compute: bool = True,
) -> JobReport | Delayed:
    """Encrypts files on a Dask cluster into `out_dir`, each under its own
    key derived on the workers from the master `key`, and returns a report.

    `paths`: a folder (every file under it), a glob ("data/**/*.npy"), a
    file, or a list of files: local paths or fsspec URLs (s3://bucket/raw);
    `root` (by default the folder, the glob's fixed part, or the files'
    common folder) is what their names, and so their output paths under
    `out_dir` (also a path or URL), are relative to. The client and every
    worker must reach these paths at the same place.

    `key`: the master key (bytes: installed on the workers for the job's
    duration), an InstalledKey (install_key) or a KeyFile. `cipher`: an AEAD
    of the sealed-file format ("aes-256-gcm", "aes-128-gcm", "aes-192-gcm",
    "chacha20-poly1305"), which writes sealed files (docs/format.md, suffix
    ".wcs", `chunk_size` bytes per AEAD chunk); or a plain cipher with an IV
    ("aes-256-ctr", "chacha20", ...), which writes what ``warpcrypt enc``
    writes, without authentication (suffix ".enc"). `backend`: "auto" (where
    the library's plan for each file says: warpcrypt.describe_plan), "cpu",
    "gpu" or "hybrid" (a worker's GPU joins where it makes a file faster);
    `threads`: CPU threads per file, 0 for wc_default_threads().

    The manifest (`manifest`, by default ``<out_dir>.warpcrypt-manifest.json``
    beside the output tree) records every file; a rerun skips the files it
    shows done, and one with another key or cipher is refused
    (ManifestMismatch), as is a first run into a folder that holds files
    already: an output folder belongs to one job. A file that fails is recorded as failed and the
    others go on. `client`: the Dask client, by default the current one.
    `task_bytes`: how many bytes of small files one task may carry.
    `progress`: show the bytes and files done on stderr, the bytes within
    each file as its worker reports them. `compute=False`: plan the job
    (the manifest is written) and return a dask.delayed object that runs it
    and computes to the JobReport; `key` must then be an InstalledKey or a
    KeyFile, held until the graph has run.
    """
    sealed = is_sealed_cipher(cipher)
    name = cipher.lower() if sealed else plain_cipher_info(cipher).name
    # Checked here rather than failing every file on the workers.
    if sealed and not (MIN_CHUNK_SIZE <= chunk_size <= MAX_CHUNK_SIZE and chunk_size & (chunk_size - 1) == 0):
        raise ValueError(f"chunk_size must be a power of two from {MIN_CHUNK_SIZE} to {MAX_CHUNK_SIZE}")
    suffix = suffix or (SEALED_SUFFIX if sealed else PLAIN_SUFFIX)
    output_fs, output_root = open_tree(out_dir)
    manifest_url = os.fspath(manifest) if manifest is not None else manifest_beside(url_of(output_fs, output_root))
    with _held_by_workers(key, client, compute) as ref:
        input_fs, input_root, inputs = collect_inputs(
            paths, root=root, exclude=_exclusions(output_fs, output_root, manifest_url))
        _check_inside(input_fs, input_root, output_fs, output_root)
        header: JobHeader = {
            "operation": ENCRYPT, "format": SEALED if sealed else PLAIN, "cipher": name, "kdf": "HKDF-SHA256",
            "key_check": ref.key_id, "job_id": new_id().hex(), "suffix": suffix,
            "chunk_size": chunk_size if sealed else None, "input_root": url_of(input_fs, input_root),
            "output_root": url_of(output_fs, output_root), "staging": STAGING_PREFIX + new_id().hex(),
        }
        job_manifest = _open_manifest(manifest_url, header, ref, output_fs, output_root)
        run = new_id().hex()
        settings = Settings(ENCRYPT, header["format"], name, chunk_size, backend, threads, job_manifest.job_id, ref,
                            protocol_of(input_fs), protocol_of(output_fs),
                            f"{output_root}/{job_manifest.content['staging']}", run,
                            _progress_topic(run, progress and compute))
        # Sealed files draw their own salts and nonces; a plain cipher's file
        # gets a fresh IV each time a run encrypts it (new_plain_iv says why).
        job = _plan(job_manifest, settings, inputs, output_root, output_of=lambda n: n + suffix,
                    identifier_of=lambda n: n, iv_of=(lambda _: None) if sealed else (lambda _: new_plain_iv(name)),
                    missing={}, strays=[])
        return _execute(job, client, compute, task_bytes, progress)


def _make_tree(fs: fsspec.AbstractFileSystem, root: str) -> None:
    """Creates a local output folder, now that the inputs proved valid (an
    object store has no folders to create)."""
    if isinstance(fs, LocalFileSystem):
        os.makedirs(root, exist_ok=True)


def _check_one_job(fs: fsspec.AbstractFileSystem, root: str, manifest: Manifest) -> None:
    """An output folder belongs to one job: a job's first run refuses a
    folder that holds files already, another job's (whose manifest lies
    elsewhere, perhaps under another master key) or anyone's. Its outputs
    would mix with them, and a rerun could take a file found at an output
    path for one of its own."""
    if manifest.existed:
        return
    with store_errors(fs, root, "the client"):
        found = sorted(fs.find(root)) if fs.exists(root) else []
    if not found:
        return
    url = url_of(fs, root)
    try:
        default = f"; by default it is {manifest_beside(url)}"
    except ValueError:  # the top of a bucket: no default place
        default = ""
    raise ManifestMismatch(
        f"{url} already holds {len(found)} files, such as {url_of(fs, found[0])}, and this job's manifest "
        f"{manifest.url} does not exist: an output folder belongs to one job. Continue the job that wrote them with "
        f"its manifest (manifest=, --manifest{default}), or write to a new or empty folder")


def _open_manifest(url: str, header: JobHeader, ref: KeyRef, fs: fsspec.AbstractFileSystem,
                   root: str) -> Manifest:
    """The job's manifest, once the output folder proved to be the job's;
    then the folder is created. A refused job writes nothing."""
    check_bucket(fs, root)
    manifest = Manifest.open(url, header, ref)
    # A decryption's manifest keeps the job id of the encryption it restores.
    if header["operation"] == DECRYPT and manifest.content["job_id"] != header["job_id"]:
        raise ManifestMismatch(f"{url} records another encryption job: use another output folder")
    _check_one_job(fs, root, manifest)
    _make_tree(fs, root)
    return manifest


def _is_folder(paths: PathsOrGlob) -> bool:
    if not isinstance(paths, (str, os.PathLike)):
        return False
    fs, path = open_tree(paths)
    return bool(fs.isdir(path))


def _source_manifest(url: str, ref: KeyRef, trust_unauthenticated: bool) -> ManifestContent:
    """The encryption's manifest, after checking its MAC (read_manifest, which
    refuses another master key) and that it was an encryption."""
    fs, path = fsspec.core.url_to_fs(url)
    if not fs.exists(path):
        raise FileNotFoundError(2, "no encryption manifest here (it gives the job id every file's key derives "
                                   "from): name it with source_manifest= or --source-manifest", url)
    content = read_manifest(url, ref, trust_unauthenticated_manifest=trust_unauthenticated)
    if content["operation"] != ENCRYPT:
        raise ManifestMismatch(f"{url} records a {content['operation']} job, not an encryption")
    return content


# As encrypt_files: the report, or with compute=False the graph.
@overload
def decrypt_files(paths: PathsOrGlob, out_dir: PathLike, *, key: MasterKey, client: distributed.Client | None = ...,
                  root: PathLike | None = ..., suffix: str | None = ..., source_manifest: PathLike | None = ...,
                  manifest: PathLike | None = ..., backend: str = ..., threads: int = ..., task_bytes: int = ...,
                  progress: bool = ..., trust_unauthenticated_manifest: bool = ...,
                  compute: Literal[True] = ...) -> JobReport: ...
@overload
def decrypt_files(paths: PathsOrGlob, out_dir: PathLike, *, key: HeldKey, client: distributed.Client | None = ...,
                  root: PathLike | None = ..., suffix: str | None = ..., source_manifest: PathLike | None = ...,
                  manifest: PathLike | None = ..., backend: str = ..., threads: int = ..., task_bytes: int = ...,
                  progress: bool = ..., trust_unauthenticated_manifest: bool = ...,
                  compute: Literal[False]) -> Delayed: ...
@overload
def decrypt_files(paths: PathsOrGlob, out_dir: PathLike, *, key: MasterKey, client: distributed.Client | None = ...,
                  root: PathLike | None = ..., suffix: str | None = ..., source_manifest: PathLike | None = ...,
                  manifest: PathLike | None = ..., backend: str = ..., threads: int = ..., task_bytes: int = ...,
                  progress: bool = ..., trust_unauthenticated_manifest: bool = ...,
                  compute: bool) -> JobReport | Delayed: ...

def decrypt_files(
    paths: PathsOrGlob,
    out_dir: PathLike,
    *,
    key: MasterKey,
    client: distributed.Client | None = None,
    root: PathLike | None = None,
    suffix: str | None = None,
    source_manifest: PathLike | None = None,
    manifest: PathLike | None = None,
    backend: str = "auto",
    threads: int = 0,
    task_bytes: int = DEFAULT_TASK_BYTES,
    progress: bool = False,
    trust_unauthenticated_manifest: bool = False,
    compute: bool = True,
) -> JobReport | Delayed:
    """Decrypts what encrypt_files wrote: the files among `paths` that the
    encryption's manifest lists as done, each to its identifier (the name
    without the suffix) under `out_dir`. The arguments are encrypt_files'.
    Other files among `paths` are left alone and listed in the report's
    `strays`; where `paths` is a folder, an output the manifest lists as
    done but the folder lacks fails as missing.

    The encryption's manifest (`source_manifest`, by default the one beside
    the input root) gives the job id every file's key derives from, the
    cipher and the suffix, and refuses a wrong master key before any work;
    its MAC is checked before any of that is used, and one that does not
    match is refused (ManifestNotAuthentic). A manifest of the previous
    version, which has no MAC, is refused unless
    `trust_unauthenticated_manifest` (then nothing proves it unchanged).
    This run's own manifest goes beside `out_dir` (or to `manifest`), so the
    restored tree holds exactly the original files. A sealed file that does
    not authenticate (damaged, truncated, swapped) is recorded as failed with
    ``"authentication": "failed"``, and no output is written for it.
    """
    output_fs, output_root = open_tree(out_dir)
    manifest_url = os.fspath(manifest) if manifest is not None else manifest_beside(url_of(output_fs, output_root))
    with _held_by_workers(key, client, compute) as ref:
        input_fs, input_root, candidates = collect_inputs(
            paths, root=root, exclude=_exclusions(output_fs, output_root, manifest_url))
        _check_inside(input_fs, input_root, output_fs, output_root)
        source_url = os.fspath(source_manifest) if source_manifest is not None \
            else manifest_beside(url_of(input_fs, input_root))
        source = _source_manifest(source_url, ref, trust_unauthenticated_manifest)
        data_format = source["format"]
        cipher = source["cipher"] if data_format == PLAIN else None
        suffix = suffix or source["suffix"]

        def identifier(name: str) -> str:
            return name[: len(name) - len(suffix)]

        # The manifest's entries are the job; a file among `paths` that it
        # does not list as done (another job's, anyone's) is left alone.
        done = {name for name, entry in source["files"].items() if entry["status"] == DONE}
        inputs = {name: listed for name, listed in candidates.items()
                  if name.endswith(suffix) and identifier(name) in done}
        strays = sorted(set(candidates) - set(inputs))
        if candidates and not inputs:
            raise ValueError(
                f"none of the {len(candidates)} files under {url_of(input_fs, input_root)} is one that the "
                f"encryption's manifest {source_url} lists as done, by its path relative to the encryption's output "
                f"folder {source['output_root']}: decrypt that folder (or a copy of it), or give its place as root=")
        # A whole folder must hold every output the manifest lists as done.
        missing = {} if not _is_folder(paths) else {
            f"{name}{suffix}": f"missing: the encryption's manifest {source_url} lists it as done, but "
                               f"{url_of(input_fs, f'{input_root}/{name}{suffix}')} does not exist"
            for name in sorted(done) if f"{name}{suffix}" not in candidates}
        header: JobHeader = {
            "operation": DECRYPT, "format": data_format, "cipher": cipher, "kdf": "HKDF-SHA256",
            "key_check": ref.key_id, "job_id": source["job_id"], "suffix": suffix, "chunk_size": None,
            "input_root": url_of(input_fs, input_root), "output_root": url_of(output_fs, output_root),
            "source_manifest": source_url, "staging": STAGING_PREFIX + new_id().hex(),
        }
        job_manifest = _open_manifest(manifest_url, header, ref, output_fs, output_root)
        run = new_id().hex()
        settings = Settings(DECRYPT, data_format, cipher or "", 0, backend, threads, job_manifest.job_id, ref,
                            protocol_of(input_fs), protocol_of(output_fs),
                            f"{output_root}/{job_manifest.content['staging']}", run,
                            _progress_topic(run, progress and compute))
        job = _plan(job_manifest, settings, inputs, output_root, output_of=identifier, identifier_of=identifier,
                    iv_of=(lambda name: recorded_iv(source, identifier(name))) if data_format == PLAIN
                    else (lambda _: None), missing=missing, strays=strays)
        return _execute(job, client, compute, task_bytes, progress)
