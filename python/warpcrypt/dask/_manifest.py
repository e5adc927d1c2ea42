"""The job manifest: one JSON file beside the output tree (never in it, so
the tree holds exactly the job's outputs) that lists every input, its output,
their sizes and how each ended. The client alone writes it, atomically, as
results arrive; a rerun reads it to skip finished files. docs/dask.md
describes its fields."""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
import uuid
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Literal, TypedDict

import fsspec
from fsspec.implementations.local import LocalFileSystem

from warpcrypt._typing import PathLike
from warpcrypt.dask._inputs import protocol_of

if TYPE_CHECKING:
    from warpcrypt.dask._jobs import JobReportDict

MANIFEST_SUFFIX = ".warpcrypt-manifest.json"
STAGING_PREFIX = ".warpcrypt-staging-"
MANIFEST_KIND = "warpcrypt-dask manifest"
MANIFEST_VERSION = 2

# A rerun must agree with the manifest on these, or its outputs would mix
# two keys or two ciphers in one folder.
_MUST_MATCH: tuple[Literal["operation", "format", "cipher", "key_check"], ...] = (
    "operation", "format", "cipher", "key_check")

PENDING, DONE, FAILED = "pending", "done", "failed"

# What a manifest must hold before a job acts on it: a client removes the
# staging folder it names, recursively, so that name must be one it draws.
_STAGING_NAME = re.compile(re.escape(STAGING_PREFIX) + "[0-9a-f]{32}")
_JOB_ID = re.compile("[0-9a-f]{32}")
_TEXT_FIELDS = ("operation", "format", "kdf", "key_check", "job_id", "suffix", "input_root", "output_root",
                "staging")
# What a rerun reads of a done entry.
_DONE_FIELDS = ("input_size", "output_size")


# The manifest's JSON, as docs/dask.md describes it.

class FileEntry(TypedDict, total=False):
    """One input's entry in `files`, or the part of it that a worker's task
    returns: the client writes the first seven fields when it plans the job
    and the worker the others, so that any of them may be missing."""

    input: str
    input_size: int
    input_version: str
    output: str
    output_size: int | None
    status: str  # PENDING, DONE or FAILED
    error: str | None
    authentication: str | None
    worker: str | None
    host: str
    backend: str
    seconds: float
    cpu_bytes: int
    gpu_bytes: int
    aead: str
    salt: str
    nonce_prefix: str
    iv: str
    reused: bool


class _JobFields(TypedDict):
    operation: str
    format: str
    cipher: str | None
    kdf: str
    key_check: str
    job_id: str
    suffix: str
    chunk_size: int | None
    input_root: str
    output_root: str
    staging: str


class JobHeader(_JobFields, total=False):
    """The manifest's top level but for its kind, version, creation time and
    files: what a run states about its job. `source_manifest` is a
    decryption's alone; `updated` and `last_run` appear once the manifest is
    saved and once a run ends. (They are declared here rather than in
    ManifestContent because mypy wants every optional key of a manifest
    built by spreading a header typed by the header.)"""

    source_manifest: str
    updated: str
    last_run: JobReportDict


class ManifestContent(JobHeader):
    """A whole manifest."""

    manifest: str
    version: int
    created: str
    files: dict[str, FileEntry]


class ManifestMismatch(ValueError):
    """The output folder's manifest belongs to another job: another master
    key, operation or cipher. Use another output folder, or the same key."""


def manifest_beside(tree: str) -> str:
    """Where the manifest of the tree `tree` (a path or URL) lives: beside
    it, as ``<tree>.warpcrypt-manifest.json``."""
    stripped = tree.rstrip("/")
    _, path = fsspec.core.url_to_fs(stripped)
    if "/" not in path.strip("/"):
        raise ValueError(f"{tree} is the top of its file system or bucket, so nothing lies beside it: "
                         "name the manifest's place (manifest=, --manifest)")
    return stripped + MANIFEST_SUFFIX


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def write_atomically(fs: fsspec.AbstractFileSystem, path: str, data: bytes) -> None:
    """Writes `path` so that a reader (or a client killed mid-write) sees the
    old or the new contents, never part: on a local file system through a
    temporary file in the same folder, fsync and rename; on an object store
    by a single upload to a temporary key and a copy into place."""
    if isinstance(fs, LocalFileSystem):
        folder, name = os.path.split(path)
        descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
        try:
            with os.fdopen(descriptor, "wb") as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
        return
    temporary = f"{path}.{uuid.uuid4().hex}.tmp"
    fs.pipe_file(temporary, data)
    try:
        fs.mv(temporary, path)
    finally:
        if fs.exists(temporary):
            fs.rm_file(temporary)


def _fault(content: object) -> str | None:
    """What makes `content` no manifest that a job could act on, if anything."""
    if not isinstance(content, dict):
        return f"its JSON is {type(content).__name__}, not an object"
    if content.get("manifest") != MANIFEST_KIND or content.get("version") != MANIFEST_VERSION:
        return f'its "manifest" and "version" are not "{MANIFEST_KIND}" and {MANIFEST_VERSION}'
    for name in _TEXT_FIELDS:
        if not isinstance(content.get(name), str):
            return f'"{name}" is not a string'
    if not _JOB_ID.fullmatch(content["job_id"]):
        return '"job_id" is not 32 hex digits'
    if not _STAGING_NAME.fullmatch(content["staging"]):
        return f'"staging" is not a name of the form {STAGING_PREFIX}<32 hex digits>'
    files = content.get("files")
    if not isinstance(files, dict):
        return '"files" is not an object'
    for name, entry in files.items():
        if not isinstance(entry, dict):
            return f'the entry of {name!r} in "files" is not an object'
        if entry.get("status") not in (PENDING, DONE, FAILED):
            return f'the entry of {name!r} in "files" has the status {entry.get("status")!r}'
        for field in _DONE_FIELDS if entry["status"] == DONE else ():
            if not isinstance(entry.get(field), int):
                return f'the entry of {name!r} in "files" is done but has no integer "{field}"'
    return None


def read_manifest(url: PathLike) -> ManifestContent:
    """A manifest's contents, from a path or any fsspec URL; raises
    ValueError, naming the file, for one that is not a manifest."""
    fs, path = fsspec.core.url_to_fs(os.fspath(url))
    try:
        content = json.loads(fs.cat_file(path))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{os.fspath(url)} is not a warpcrypt-dask manifest: it is not JSON ({error})") from None
    fault = _fault(content)
    if fault is not None:
        raise ValueError(f"{os.fspath(url)} is not a version-{MANIFEST_VERSION} warpcrypt-dask manifest: {fault}")
    manifest: ManifestContent = content
    return manifest


class Manifest:
    """The manifest of one job, held in memory and saved at most every
    `save_interval` seconds while results arrive (the files a crash loses
    from it are redone by the next run, whose writes replace theirs whole)."""

    def __init__(self, fs: fsspec.AbstractFileSystem, path: str, content: ManifestContent,
                 save_interval: float, existed: bool) -> None:
        # By name: the lazy form's last task pickles the manifest, and the
        # worker that runs it opens the file system with its own settings.
        self.protocol = protocol_of(fs)
        self.path = path
        self.content = content
        self.save_interval = save_interval
        self.existed = existed  # False for a job's first run: nothing is saved until it is planned
        self._last_save = float("-inf")

    @property
    def fs(self) -> fsspec.AbstractFileSystem:
        return fsspec.filesystem(self.protocol)

    @property
    def url(self) -> str:
        return self.fs.unstrip_protocol(self.path) if not isinstance(self.fs, LocalFileSystem) else self.path

    @classmethod
    def open(cls, url: str, header: JobHeader, *, save_interval: float = 1.0) -> Manifest:
        """The manifest at `url`, continued if it exists (after checking it
        belongs to the same job as `header`, and to its output folder), else
        a new one. Nothing is written."""
        fs, path = fsspec.core.url_to_fs(url)
        existed = fs.exists(path)
        if existed:
            content = read_manifest(url)
            for field in _MUST_MATCH:
                if content.get(field) != header[field]:
                    raise ManifestMismatch(
                        f"{url} records {field} {content.get(field)!r}, this run has {header[field]!r}"
                        + (" (another master key)" if field == "key_check" else "")
                        + ": use another output folder")
            if content["output_root"] != header["output_root"]:
                raise ManifestMismatch(f"{url} records the output folder {content['output_root']}, this run writes "
                                       f"{header['output_root']}: a manifest belongs to one output folder")
            # The job id and the staging folder's name stay the manifest's:
            # the outputs already written derived their keys from the one,
            # and a killed run may have left files in the other.
            content = {**content, **header, "job_id": content["job_id"], "staging": content["staging"]}
        else:
            content = {"manifest": MANIFEST_KIND, "version": MANIFEST_VERSION, "created": _now(),
                       **header, "files": {}}
        return cls(fs, path, content, save_interval, existed)

    @property
    def files(self) -> dict[str, FileEntry]:
        return self.content["files"]

    @property
    def job_id(self) -> bytes:
        return bytes.fromhex(self.content["job_id"])

    def save(self) -> None:
        self.content["updated"] = _now()
        write_atomically(self.fs, self.path, (json.dumps(self.content, indent=1) + "\n").encode())
        self._last_save = time.monotonic()

    def save_if_due(self) -> None:
        if time.monotonic() - self._last_save >= self.save_interval:
            self.save()
