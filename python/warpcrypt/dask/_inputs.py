"""Which files a job reads, and the name of each: its path relative to the
input root, which names the output and feeds the key derivation. Inputs are
local paths or any fsspec URL (s3://bucket/raw, gs://..., file://...)."""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TypedDict

import fsspec  # type: ignore[import-untyped]
from fsspec.implementations.local import LocalFileSystem  # type: ignore[import-untyped]

from warpcrypt._typing import PathLike

PathsOrGlob = PathLike | Iterable[PathLike]

_GLOB_CHARACTERS = frozenset("*?[")


@dataclass(frozen=True)
class Listed:
    """One input as listed: its path on its file system, its size, a
    version that changes when its contents do (the mtime of a local file, an
    object's ETag), which the manifest records, and a stamp that a worker
    compares before and after reading the file: the version and, for a local
    file, its status change time too, which no one can set back (the mtime
    can be: touch -d, cp -p)."""

    path: str
    size: int
    version: str
    stamp: str


class FileInfo(TypedDict, total=False):
    """The fields of an fsspec info dict that a listing reads; which of them
    are present, and the types of the times, depend on the file system."""

    name: str
    size: int
    type: str
    ETag: str  # object stores
    ino: int  # local files
    mtime: object
    created: object  # a local file's st_ctime
    LastModified: object


def open_tree(url: PathLike) -> tuple[fsspec.AbstractFileSystem, str]:
    """The file system of a path or URL and the path on it, without a
    trailing "/"; local paths become absolute."""
    text = os.fspath(url)
    fs, path = fsspec.core.url_to_fs(text)
    # Object stores' listings are cached per instance, and instances are
    # shared: a job must see the store as it is now.
    fs.invalidate_cache()
    if isinstance(fs, LocalFileSystem):
        path = os.path.abspath(path)
    return fs, path.rstrip("/") or "/"


def protocol_of(fs: fsspec.AbstractFileSystem) -> str:
    """The name a worker opens the same file system by, with its own
    configuration and credentials: tasks carry this name, never a file
    system object, whose pickle would carry the client's settings."""
    return fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]


def url_of(fs: fsspec.AbstractFileSystem, path: str) -> str:
    """The path as the user would write it: plain for local files, a URL
    otherwise."""
    return path if isinstance(fs, LocalFileSystem) else fs.unstrip_protocol(path)


class StoreError(OSError):
    """An object store refused a job's request for a reason of the
    environment it was made from (credentials, permissions, a bucket): the
    message names the URL and what to check."""


# The exceptions the stores' clients raise where no credentials are found
# (botocore, google-auth, azure-identity): not OSErrors, and named nowhere
# that warpcrypt could import without the stores' packages.
_NO_CREDENTIALS = frozenset({"NoCredentialsError", "PartialCredentialsError", "CredentialRetrievalError",
                             "DefaultCredentialsError", "ClientAuthenticationError", "CredentialUnavailableError"})
_CREDENTIAL_HINTS = {"s3": "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or an instance role",
                     "gs": "GOOGLE_APPLICATION_CREDENTIALS, or the machine's service account",
                     "az": "AZURE_STORAGE_ACCOUNT_NAME with a key, a connection string or a managed identity"}


def _explain(error: Exception, url: str, protocol: str, who: str) -> str | None:
    """What to check, for an object store's refusal that the environment of
    `who` ("the client", "worker tcp://...") explains; None for the others."""
    if type(error).__name__ in _NO_CREDENTIALS:
        hint = _CREDENTIAL_HINTS.get(protocol, "the variables or files its fsspec driver reads")
        return (f"{url}: no credentials for the store in the environment of {who} ({type(error).__name__}): "
                f"each process opens the store with its own environment, not the client's; set them there "
                f"({hint})")
    if isinstance(error, PermissionError):
        return (f"{url}: access denied ({error}): check that the credentials in the environment of {who} are "
                "right, and that they may read the inputs and write the outputs")
    if isinstance(error, FileNotFoundError) and "bucket" in str(error).lower():
        return (f"{url}: the bucket does not exist for {who} ({error}): check the URL, and that the "
                f"environment of {who} points at the client's store (its endpoint)")
    return None


@contextlib.contextmanager
def store_errors(fs: fsspec.AbstractFileSystem, path: str, who: str) -> Iterator[None]:
    """Turns an object store's refusals of requests on `path` into
    StoreErrors that name its URL and what to check (see _explain)."""
    if isinstance(fs, LocalFileSystem):
        yield
        return
    try:
        yield
    except Exception as error:
        reason = _explain(error, url_of(fs, path), protocol_of(fs), who)
        if reason is None:
            raise
        raise StoreError(reason) from error


def check_bucket(fs: fsspec.AbstractFileSystem, path: str) -> None:
    """Refuses an output in a bucket that does not exist, before the job
    writes anything (its workers would each fail on it). File systems
    without buckets, which have no split_path, pass."""
    if isinstance(fs, LocalFileSystem) or not hasattr(fs, "split_path"):
        return
    bucket = path.split("/", 1)[0]
    with store_errors(fs, path, "the client"):
        exists = fs.exists(bucket)
    if not exists:
        raise FileNotFoundError(errno.ENOENT, f"{url_of(fs, path)}: the bucket {bucket} does not exist: check the "
                                              "URL, or create the bucket")


def _is_glob(text: str) -> bool:
    return not _GLOB_CHARACTERS.isdisjoint(text)


def _glob_root(pattern: str) -> str:
    """The folder a glob searches from: its leading parts without wildcards."""
    fixed = []
    for part in pattern.split("/"):
        if _is_glob(part):
            break
        fixed.append(part)
    return "/".join(fixed).rstrip("/") or "/"


def listed(info: FileInfo) -> Listed:
    """A file as fsspec's info describes it. A local file's version joins its
    inode to its modification time, so that a file renamed into its place
    differs from the one it replaced even within the clock's resolution."""
    if "ETag" in info:
        version = str(info["ETag"])
    elif "ino" in info:
        version = f"{info.get('mtime')}:{info['ino']}"
    else:
        version = str(info.get("mtime") or info.get("LastModified") or "")
    stamp = local_stamp(int(info["size"]), version, info["created"]) if "ino" in info else version
    return Listed(info["name"], int(info["size"]), version, stamp)


def local_stamp(size: int, version: str, changed: object) -> str:
    """A local file's stamp, from its size, version and st_ctime: the same
    string from fsspec's listing and from os.fstat, whose float times fsspec
    passes on as they are."""
    return f"{size}:{version}:{changed}"


def stat_stamp(status: os.stat_result) -> str:
    """local_stamp of a file as os.stat or os.fstat describe it."""
    return local_stamp(status.st_size, f"{status.st_mtime}:{status.st_ino}", status.st_ctime)


def _files(fs: fsspec.AbstractFileSystem, infos: dict[str, FileInfo]) -> list[Listed]:
    """The regular files among `infos` (pipes, sockets and broken links are
    no data set's files), in a stable order so that reruns plan alike."""
    return [listed(info) for _, info in sorted(infos.items()) if info.get("type") == "file"]


def _not_found(url: str, what: str) -> FileNotFoundError:
    return FileNotFoundError(errno.ENOENT, what, url)


def collect_inputs(
    paths: PathsOrGlob, *, root: PathLike | None,
    exclude: Iterable[tuple[fsspec.AbstractFileSystem, str]],
) -> tuple[fsspec.AbstractFileSystem, str, dict[str, Listed]]:
    """(file system, input root, {name: Listed}) for `paths`: a folder (its
    files, recursively), a glob pattern ("**" matches folders recursively), a
    single file, or a list of files, all on one file system. `root`
    overrides the input root (every file must lie under it). Paths under an
    `exclude` path (on a file system of the inputs' kind) are left out, so a job whose output tree or manifest lies
    inside its input folder does not read them. Nothing is written.
    """
    if isinstance(paths, (str, os.PathLike)):
        fs, path = open_tree(paths)
        if fs.isdir(path):
            default_root = path
            files = _files(fs, fs.find(path, detail=True))
        elif _is_glob(path):
            default_root = _glob_root(path)
            files = _files(fs, fs.glob(path, detail=True))
        elif fs.isfile(path):
            files = _files(fs, {path: fs.info(path)})
            default_root = path.rsplit("/", 1)[0] or "/"
        else:
            raise _not_found(os.fspath(paths), "no such file or folder")
    else:
        urls = [os.fspath(p) for p in paths]
        if not urls:
            raise ValueError("no input files given")
        fs, _ = open_tree(urls[0])
        files = []
        for url in urls:
            other, path = open_tree(url)
            if type(other) is not type(fs):
                raise ValueError(f"the input files lie on different file systems: {urls[0]} and {url}")
            if not fs.isfile(path):
                raise _not_found(url, "not a file")
            files.extend(_files(fs, {path: fs.info(path)}))
        default_root = os.path.commonpath([f.path.rsplit("/", 1)[0] or "/" for f in files])

    input_root = open_tree(root)[1] if root is not None else default_root
    excluded = [path for other, path in exclude if type(other) is type(fs)]
    collected: dict[str, Listed] = {}
    for listed in files:
        if any(listed.path == e or listed.path.startswith(e.rstrip("/") + "/") for e in excluded):
            continue
        prefix = input_root.rstrip("/") + "/"
        if not listed.path.startswith(prefix):
            raise ValueError(f"{url_of(fs, listed.path)} is not under the input root {url_of(fs, input_root)}")
        collected[listed.path[len(prefix):]] = listed
    return fs, input_root, collected
