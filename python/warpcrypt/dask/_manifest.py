"""The job manifest: one JSON file in the output folder that lists every
input, its output, their sizes and how each ended. The client alone writes
it, atomically, as results arrive; a rerun reads it to skip finished files.
docs/dask.md describes its fields."""

from __future__ import annotations

import json
import os
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

MANIFEST_NAME = "warpcrypt-manifest.json"
MANIFEST_KIND = "warpcrypt-dask manifest"
MANIFEST_VERSION = 1

# A rerun must agree with the manifest on these, or its outputs would mix
# two keys or two ciphers in one folder.
_MUST_MATCH = ("operation", "format", "cipher", "key_check")

PENDING, DONE, FAILED = "pending", "done", "failed"


class ManifestMismatch(ValueError):
    """The output folder's manifest belongs to another job: another master
    key, operation or cipher. Use another output folder, or the same key."""


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _write_atomically(path: Path, text: str) -> None:
    """Writes `path` through a temporary file in its folder and a rename, so a
    reader (or a client killed mid-write) sees the old or the new manifest,
    never half of one."""
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def read_manifest(path: str | os.PathLike) -> dict:
    """A manifest's contents; raises ValueError for a file that is not one."""
    with open(path, encoding="utf-8") as file:
        content = json.load(file)
    if content.get("manifest") != MANIFEST_KIND or content.get("version") != MANIFEST_VERSION:
        raise ValueError(f"{path} is not a version-{MANIFEST_VERSION} warpcrypt-dask manifest")
    return content


class Manifest:
    """The manifest of one job, held in memory and saved at most every
    `save_interval` seconds while results arrive (the files a crash loses
    from it are redone by the next run, whose writes replace theirs whole)."""

    def __init__(self, path: Path, content: dict, save_interval: float) -> None:
        self.path = path
        self.content = content
        self.save_interval = save_interval
        self._last_save = float("-inf")

    @classmethod
    def open(cls, path: Path, header: dict, *, save_interval: float = 1.0) -> Manifest:
        """The manifest at `path`, continued if it exists (after checking it
        belongs to the same job as `header`), else a new one."""
        if path.exists():
            content = read_manifest(path)
            for field in _MUST_MATCH:
                if content.get(field) != header[field]:
                    raise ManifestMismatch(
                        f"{path} records {field} {content.get(field)!r}, this run has {header[field]!r}"
                        + (" (another master key)" if field == "key_check" else "")
                        + ": use another output folder")
            # The job id stays the manifest's: the outputs already written
            # derived their nonces from it.
            content.update({k: v for k, v in header.items() if k != "job_id"})
        else:
            content = {"manifest": MANIFEST_KIND, "version": MANIFEST_VERSION, "created": _now(),
                       **header, "files": {}}
        return cls(path, content, save_interval)

    @property
    def files(self) -> dict[str, dict]:
        return self.content["files"]

    @property
    def job_id(self) -> str | None:
        return self.content.get("job_id")

    def save(self) -> None:
        self.content["updated"] = _now()
        _write_atomically(self.path, json.dumps(self.content, indent=1, sort_keys=False) + "\n")
        self._last_save = time.monotonic()

    def save_if_due(self) -> None:
        if time.monotonic() - self._last_save >= self.save_interval:
            self.save()
