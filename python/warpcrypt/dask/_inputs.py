"""Which files a job reads, and the identifier of each: its path relative to
the input root, which names the output and feeds the key derivation."""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable
from pathlib import Path

PathsOrGlob = str | os.PathLike | Iterable[str | os.PathLike]

_GLOB_CHARACTERS = frozenset("*?[")


def _absolute(path: str | os.PathLike) -> Path:
    """An absolute, normalised path that still names a symlink itself, not
    its target, so a link inside the input root keeps its identifier."""
    return Path(os.path.abspath(path))


def _is_glob(text: str) -> bool:
    return not _GLOB_CHARACTERS.isdisjoint(text)


def _glob_root(pattern: str) -> Path:
    """The directory a glob searches from: its leading parts without wildcards."""
    fixed = []
    for part in Path(pattern).parts:
        if _is_glob(part):
            break
        fixed.append(part)
    return _absolute(Path(*fixed)) if fixed else Path.cwd()


def _walk(directory: Path) -> list[Path]:
    """The regular files under `directory` (pipes, sockets and broken links
    are no data set's files)."""
    found = []
    for parent, subdirectories, files in os.walk(directory):
        subdirectories.sort()  # a stable order, so reruns plan alike
        found.extend(path for name in sorted(files) if (path := Path(parent, name)).is_file())
    return found


def collect_inputs(paths: PathsOrGlob, *, root: str | os.PathLike | None,
                   exclude: Iterable[Path]) -> tuple[Path, dict[str, Path]]:
    """(input root, {identifier: absolute path}) for `paths`: a directory (its
    files, recursively), a glob pattern ("**" matches folders recursively), a
    single file, or a list of files. `root` overrides the input root (every
    file must lie under it). Files under an `exclude` directory are left out,
    so a job whose output folder lies inside its input folder does not read
    its own outputs.
    """
    if isinstance(paths, (str, os.PathLike)):
        text = os.fspath(paths)
        if os.path.isdir(text):
            default_root = _absolute(text)
            files = _walk(default_root)
        elif _is_glob(text):
            default_root = _glob_root(text)
            files = [_absolute(f) for f in sorted(glob.glob(text, recursive=True)) if os.path.isfile(f)]
        else:
            files = [_absolute(text)]
            default_root = files[0].parent
    else:
        files = [_absolute(p) for p in paths]
        if not files:
            raise ValueError("no input files given")
        default_root = Path(os.path.commonpath([f.parent for f in files]))

    input_root = _absolute(root) if root is not None else default_root
    excluded = [_absolute(e) for e in exclude]
    collected: dict[str, Path] = {}
    for path in files:
        if any(path.is_relative_to(e) for e in excluded):
            continue
        if not path.is_file():
            raise FileNotFoundError(f"not a file: {path}")
        if not path.is_relative_to(input_root):
            raise ValueError(f"{path} is not under the input root {input_root}")
        collected[path.relative_to(input_root).as_posix()] = path
    return input_root, collected
