"""The job manifest: one JSON file beside the output tree (never in it, so
the tree holds exactly the job's outputs) that lists every input, its output,
their sizes and how each ended. The client alone writes it, atomically, as
results arrive; a rerun reads it to skip finished files. docs/dask.md
describes its fields.

Its "mac" field, an HMAC-SHA256 under a key derived from the master key,
covers every other field in canonical JSON; read_manifest checks it before
any field is used, so a job's manifest is authenticated as a whole."""

from __future__ import annotations

import hmac
import json
import os
import re
import time
import uuid
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Literal, TypedDict

import fsspec  # type: ignore[import-untyped]
from fsspec.implementations.local import LocalFileSystem  # type: ignore[import-untyped]

import warpcrypt
from warpcrypt import _native
from warpcrypt._files import _output
from warpcrypt._typing import PathLike
from warpcrypt.dask._inputs import protocol_of
from warpcrypt.dask._kdf import check_master_key, key_check_value, manifest_mac_key

if TYPE_CHECKING:
    from warpcrypt.dask._keyring import KeyRef, MasterKey

MANIFEST_SUFFIX = ".warpcrypt-manifest.json"
STAGING_PREFIX = ".warpcrypt-staging-"
MANIFEST_KIND = "warpcrypt-dask manifest"
# Version 4: a plain-cipher file's IV is drawn for each run that encrypts it,
# and its entry records it before any worker starts.
MANIFEST_VERSION = 4
# Version 3 carries the same MAC. Its plain-cipher files' IVs were derived,
# and recorded in their entries all the same, so it is read as version 4 is;
# a run that continues it saves it as version 4, since a reader of version 3
# would derive the IVs the run drew.
AUTHENTICATED_VERSIONS = (3, MANIFEST_VERSION)
# The version before manifests carried a MAC: read only when the caller
# vouches for it (trust_unauthenticated_manifest).
UNAUTHENTICATED_VERSION = 2

# A rerun must agree with the manifest on these, or its outputs would mix
# two ciphers in one folder (read_manifest refuses another master key).
_MUST_MATCH: tuple[Literal["operation", "format", "cipher"], ...] = ("operation", "format", "cipher")

PENDING, DONE, FAILED = "pending", "done", "failed"
# The manifest's "format": sealed files, or a plain cipher's output.
SEALED, PLAIN = "sealed", "plain"

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
    iv: str  # plain ciphers: hex, recorded when the run that encrypts the file plans it
    reused: bool


class WorkerSummaryDict(TypedDict):
    """One worker's part of a run's report (WorkerSummary.to_dict() in _jobs)."""

    worker: str
    host: str
    backends: list[str]
    files: int
    bytes: int
    gpu_bytes: int
    busy_seconds: float
    throughput: float
    lost: bool


class JobReportDict(TypedDict):
    """A run's report (JobReport.to_dict() in _jobs): the manifest's `last_run`,
    and the command's --json."""

    operation: str
    manifest: str
    processed: int
    skipped: int
    failed: dict[str, str]
    bytes: int
    seconds: float
    workers: list[WorkerSummaryDict]
    strays: list[str]
    throughput: float


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
    mac: str  # once saved


class ManifestContent(JobHeader):
    """A whole manifest."""

    manifest: str
    version: int
    created: str
    files: dict[str, FileEntry]


class ManifestMismatch(ValueError):
    """The output folder's manifest belongs to another job: another master
    key, operation or cipher. Use another output folder, or the same key."""


class ManifestNotAuthentic(warpcrypt.InvalidTag, ValueError):
    """A manifest whose MAC does not match its contents under this master key
    (edited, or its MAC stripped or taken from another manifest), or one of
    the previous version, which has no MAC. Nothing in it was used."""


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
        # The library's atomic output, which every local output takes; the
        # manifest is made durable before it replaces the old one.
        with _output(path) as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        return
    temporary = f"{path}.{uuid.uuid4().hex}.tmp"
    fs.pipe_file(temporary, data)
    try:
        fs.mv(temporary, path)
    finally:
        if fs.exists(temporary):
            fs.rm_file(temporary)


def canonical_json(content: ManifestContent) -> bytes:
    """What the MAC covers: every field but the MAC itself, as JSON with
    sorted keys and no whitespace, so that reformatting the file (indentation,
    key order) keeps it and any change of a value does not. ASCII escapes
    keep file names that are not valid UTF-8 (surrogate escapes) writable."""
    covered = {name: value for name, value in content.items() if name != "mac"}
    return json.dumps(covered, sort_keys=True, separators=(",", ":")).encode("ascii")


def manifest_mac(content: ManifestContent, master_key: bytes) -> str:
    return _native.hmac("sha256", manifest_mac_key(master_key), canonical_json(content), 32).hex()


def _master_key(key: MasterKey | KeyRef) -> bytes:
    """The master key's bytes, from bytes or from a key this process holds."""
    if isinstance(key, (bytes, bytearray, memoryview)):
        return check_master_key(bytes(key))
    # Imported here: _keyring needs distributed, which derive-key does not.
    from warpcrypt.dask._keyring import held_key, key_ref

    return held_key(key_ref(key))


def _kind_fault(content: object) -> str | None:
    """Why `content` is no manifest of a version this code reads, if it is not."""
    if not isinstance(content, dict):
        return f"its JSON is {type(content).__name__}, not an object"
    if content.get("manifest") != MANIFEST_KIND or content.get("version") not in (*AUTHENTICATED_VERSIONS,
                                                                                  UNAUTHENTICATED_VERSION):
        return f'its "manifest" and "version" are not "{MANIFEST_KIND}" and {MANIFEST_VERSION}'
    return None


def _fault(content: ManifestContent) -> str | None:
    """What makes an authenticated `content` no manifest that a job could act
    on, if anything: a guard against a key holder's malformed manifest."""
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
        if content["format"] == PLAIN and entry["status"] == DONE and _recorded_iv(entry) is None:
            return f'the entry of {name!r} in "files" is done but has no IV, as hex, in "iv"'
    return None


def _recorded_iv(entry: FileEntry) -> bytes | None:
    try:
        return bytes.fromhex(entry["iv"])
    except (KeyError, TypeError, ValueError):
        return None


def recorded_iv(manifest: ManifestContent, name: str) -> bytes:
    """The IV that the plain-cipher file `name` of an encryption's
    `manifest` was encrypted under, as its entry records it; raises
    ValueError for an entry that records none (a file the job never
    encrypted: read_manifest refuses a done entry without one)."""
    iv = _recorded_iv(manifest["files"][name])
    if iv is None:
        raise ValueError(f"the manifest records no IV for {name}: its job never encrypted it "
                         f"(its status is {manifest['files'][name]['status']!r})")
    return iv


def _authenticate(name: str, content: ManifestContent, master_key: bytes) -> None:
    recorded = content.get("mac")
    if not isinstance(recorded, str):
        raise ManifestNotAuthentic(f'{name} has no "mac", which every version-{content["version"]} manifest carries: '
                                   "it was changed after its job wrote it; use a copy you trust, or re-encrypt")
    # As bytes: compare_digest takes ASCII strings alone, and JSON may hold any.
    if not hmac.compare_digest(recorded.encode("utf-8", "surrogatepass"),
                               manifest_mac(content, master_key).encode()):
        raise ManifestNotAuthentic(f"{name} does not authenticate under this master key: it was changed after its "
                                   "job wrote it (a field or entry edited, or its MAC taken from another manifest); "
                                   "use a copy you trust, or re-encrypt")


def read_manifest(url: PathLike, key: MasterKey | KeyRef, *,
                  trust_unauthenticated_manifest: bool = False) -> ManifestContent:
    """A manifest's contents, from a path or any fsspec URL, once its MAC
    proved them written under the master `key` (bytes, an InstalledKey or a
    KeyFile). Raises ManifestMismatch for a manifest of another master key,
    ManifestNotAuthentic for one whose MAC does not match, and ValueError for
    one that is not a manifest, each naming the file.

    A manifest of the previous version (2, before manifests had a MAC) is
    refused unless `trust_unauthenticated_manifest`: then it is read as it
    is, its key check alone compared, and nothing proves it unchanged."""
    name = os.fspath(url)
    fs, path = fsspec.core.url_to_fs(name)
    try:
        content = json.loads(fs.cat_file(path))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{name} is not a warpcrypt-dask manifest: it is not JSON ({error})") from None
    fault = _kind_fault(content)
    if fault is not None:
        raise ValueError(f"{name} is not a version-{MANIFEST_VERSION} warpcrypt-dask manifest: {fault}")
    if content["version"] == UNAUTHENTICATED_VERSION and not trust_unauthenticated_manifest:
        raise ManifestNotAuthentic(
            f"{name} is a version-{UNAUTHENTICATED_VERSION} manifest, written before manifests were authenticated, "
            "so nothing proves it unchanged: re-encrypt into a new output folder; to decrypt its files first, if you "
            "know the manifest unchanged, pass trust_unauthenticated_manifest=True (--trust-unauthenticated-manifest)")
    master_key = _master_key(key)
    # The key check only names the likely cause: the MAC below decides.
    if content.get("key_check") != key_check_value(master_key):
        raise ManifestMismatch(f"{name} was written under another master key than this one")
    if content["version"] in AUTHENTICATED_VERSIONS:
        _authenticate(name, content, master_key)
    fault = _fault(content)
    if fault is not None:
        raise ValueError(f"{name} is not a version-{MANIFEST_VERSION} warpcrypt-dask manifest: {fault}")
    manifest: ManifestContent = content
    return manifest


class Manifest:
    """The manifest of one job, held in memory and saved at most every
    `save_interval` seconds while results arrive (the files a crash loses
    from it are redone by the next run, whose writes replace theirs whole)."""

    def __init__(self, fs: fsspec.AbstractFileSystem, path: str, content: ManifestContent, key: KeyRef,
                 save_interval: float, existed: bool) -> None:
        # By name: the lazy form's last task pickles the manifest, and the
        # worker that runs it opens the file system with its own settings.
        self.protocol = protocol_of(fs)
        self.path = path
        self.content = content
        # A reference, not the key: the lazy form pickles the manifest, and
        # whoever saves it (the client, or the worker of the last task)
        # holds the key itself.
        self.key = key
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
    def open(cls, url: str, header: JobHeader, key: KeyRef, *, save_interval: float = 1.0) -> Manifest:
        """The manifest at `url`, continued if it exists (after checking its
        MAC under `key`, and that it belongs to the same job as `header` and
        to its output folder), else a new one. Nothing is written."""
        fs, path = fsspec.core.url_to_fs(url)
        existed = fs.exists(path)
        if existed:
            content = read_manifest(url, key)
            for field in _MUST_MATCH:
                if content.get(field) != header[field]:
                    raise ManifestMismatch(
                        f"{url} records {field} {content.get(field)!r}, this run has {header[field]!r}: "
                        "use another output folder")
            if content["output_root"] != header["output_root"]:
                raise ManifestMismatch(f"{url} records the output folder {content['output_root']}, this run writes "
                                       f"{header['output_root']}: a manifest belongs to one output folder")
            # The job id and the staging folder's name stay the manifest's:
            # the outputs already written derived their keys from the one,
            # and a killed run may have left files in the other.
            content = {**content, **header, "version": MANIFEST_VERSION, "job_id": content["job_id"],
                       "staging": content["staging"]}
        else:
            content = {"manifest": MANIFEST_KIND, "version": MANIFEST_VERSION, "created": _now(),
                       **header, "files": {}}
        return cls(fs, path, content, key, save_interval, existed)

    @property
    def files(self) -> dict[str, FileEntry]:
        return self.content["files"]

    @property
    def job_id(self) -> bytes:
        return bytes.fromhex(self.content["job_id"])

    def save(self) -> None:
        """Writes the manifest with a MAC of what it holds now: the file is
        replaced whole (write_atomically), so it holds a MAC and the
        contents it covers, or the previous pair."""
        self.content["updated"] = _now()
        self.content["mac"] = manifest_mac(self.content, _master_key(self.key))
        write_atomically(self.fs, self.path, (json.dumps(self.content, indent=1) + "\n").encode())
        self._last_save = time.monotonic()

    def save_if_due(self) -> None:
        if time.monotonic() - self._last_save >= self.save_interval:
            self.save()
