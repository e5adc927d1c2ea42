"""Typing: the extension's stub is what nanobind's stubgen makes of the
built module, and `mypy --strict` passes on the package, the examples and
the Python blocks of docs/python.md, docs/dask.md and the README, these
(with the installed package) with no settings at all, as a user's mypy run
would."""

from __future__ import annotations

import pkgutil
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import warpcrypt
import warpcrypt.dask

REPO = Path(__file__).resolve().parents[2]
STUB = REPO / "python" / "warpcrypt" / "_native.pyi"
PATTERNS = REPO / "python" / "stubgen-patterns.txt"
# mypy's settings for the examples, which may lack PyTorch and CuPy.
MYPY_CONFIG = REPO / "python" / "pyproject.toml"

# What the documentation's snippets take as given, with the types they have.
SNIPPET_PRELUDE = '''\
from typing import Any
import warpcrypt
key: bytes
key32: bytes
iv: bytes
nonce: bytes
data: bytes
part1: bytes
part2: bytes
array: Any
tensor: Any
t: Any
y: Any
nonces: list[bytes]
messages: list[bytes]
associated_data: list[bytes | None]
'''


# docs/dask.md's snippets go on from its first, which connects a client and
# reads the master key; there `key` is what install_key yields.
DASK_PRELUDE = '''\
from typing import Any
from distributed import Client
from warpcrypt.dask import decrypt_files, encrypt_files
client: Client
master_key: bytes
'''
PRELUDES = {"dask.md": DASK_PRELUDE}

# Dask's and distributed's own calls that the docs' blocks make: those
# packages leave them unannotated, so a user's `mypy --strict` refuses them
# (or, for dask.compute and dask.delayed, the names dask does not mark as
# re-exports) unless the user's settings say otherwise. That is dask's part;
# a call of warpcrypt's must pass.
DASKS_OWN_CALLS = {"Client", "LocalCluster", "compute", "from_array", "from_zarr", "to_zarr"}
DASKS_OWN_ERRORS = re.compile(r'(Call to untyped function "(?P<call>\w+)" in typed context  \[no-untyped-call\]'
                              r'|Module "dask" does not explicitly export attribute "(?P<name>\w+)"  \[attr-defined\])$')
# A block may import a GPU framework that this machine lacks, or the model
# libraries that come with PyTorch.
MISSING_FRAMEWORK = re.compile(
    r'Cannot find implementation or library stub for module named "(torch|cupy|accelerate|transformers)"')


def test_the_checked_in_stub_is_what_stubgen_generates(tmp_path):
    pytest.importorskip("nanobind.stubgen", reason="nanobind is not installed")
    generated = tmp_path / "_native.pyi"
    subprocess.run([sys.executable, "-m", "nanobind.stubgen", "-q", "-m", "warpcrypt._native", "-p", str(PATTERNS),
                    "-o", str(generated)], check=True)
    assert generated.read_text() == STUB.read_text(), (
        "python/warpcrypt/_native.pyi is out of date: regenerate it with python -m nanobind.stubgen -m "
        "warpcrypt._native -p python/stubgen-patterns.txt -o python/warpcrypt/_native.pyi")


def snippets(path: Path) -> list[str]:
    """The Python blocks, those indented under a list item included."""
    return [textwrap.dedent(block) for block in
            re.findall(r"^[ ]*```python\n(.*?)^[ ]*```", path.read_text(), flags=re.S | re.M)]


def write_snippets(folder: Path) -> list[str]:
    """Each Python block of the docs as a file, after the prelude that gives
    what it takes as given."""
    files = []
    for document in (REPO / "docs" / "python.md", REPO / "docs" / "dask.md", REPO / "README.md"):
        for index, snippet in enumerate(snippets(document)):
            path = folder / f"{document.stem.replace('.', '_')}_{index}.py"
            # GPU frameworks, where a snippet uses one without importing it.
            frameworks = "".join(f"{name}: Any\n" for name in ("torch", "cupy")
                                 if f"{name}." in snippet and f"import {name}" not in snippet)
            path.write_text(PRELUDES.get(document.name, SNIPPET_PRELUDE) + frameworks + snippet)
            files.append(str(path))
    return files


def test_mypy_strict_on_the_package_sources_and_examples(tmp_path):
    """One mypy run over the package's sources (with the checked-in stub for
    the extension) and the examples, which import the sources."""
    api = pytest.importorskip("mypy.api", reason="mypy is not installed")
    # Every module, warpcrypt.dask's included.
    files = [str(path) for path in sorted((REPO / "python" / "warpcrypt").rglob("*.py"))]
    # Every public name imported as a user would: --strict refuses a name
    # that a package imports without marking it as a re-export.
    public = tmp_path / "public_names.py"
    public.write_text("".join(f"from {module.__name__} import {', '.join(module.__all__)}\n"
                              for module in (warpcrypt, warpcrypt.dask)))
    files.append(str(public))
    files += [str(path) for path in sorted((REPO / "examples").glob("*.py"))]
    out, err, status = api.run(["--strict", "--config-file", str(MYPY_CONFIG), "--cache-dir", str(tmp_path / "cache"),
                                "--no-error-summary", *files])
    assert status == 0, out + err


def test_mypy_strict_with_no_settings_as_a_user_runs_it(tmp_path, monkeypatch):
    """The installed package (`-p warpcrypt`, which reports the package's own
    errors) and then the docs' blocks, checked from an empty folder with no
    configuration file: the blocks fail only on dask's own unannotated
    calls, and on a GPU framework this machine lacks."""
    api = pytest.importorskip("mypy.api", reason="mypy is not installed")
    monkeypatch.chdir(tmp_path)
    isolated = ["--strict", "--config-file=", "--cache-dir", str(tmp_path / "cache"), "--no-error-summary"]
    out, err, status = api.run([*isolated, "-p", "warpcrypt"])
    assert status == 0, out + err
    users = tmp_path / "users"
    users.mkdir()
    out, err, _ = api.run([*isolated, *write_snippets(users)])
    errors = [line for line in out.splitlines() if ": error: " in line]
    refused = []
    for line in errors:
        dasks = DASKS_OWN_ERRORS.search(line)
        if dasks and (dasks["call"] or dasks["name"]) in DASKS_OWN_CALLS:
            continue
        if MISSING_FRAMEWORK.search(line):
            continue
        refused.append(line)
    assert not refused and not err, "\n".join(refused) + err
