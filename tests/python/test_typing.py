"""Typing: the extension's stub is what nanobind's stubgen makes of the
built module, and `mypy --strict` passes on the package, the examples and
the Python blocks of docs/python.md, docs/dask.md and the README."""

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
# mypy's settings for the third-party packages that lack (full) types.
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


def test_mypy_strict_on_the_package_examples_and_docs(tmp_path):
    """One mypy run over the package's sources (with the checked-in stub for
    the extension), the examples and the snippets, which import the sources."""
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
    for document in (REPO / "docs" / "python.md", REPO / "docs" / "dask.md", REPO / "README.md"):
        for index, snippet in enumerate(snippets(document)):
            path = tmp_path / f"{document.stem.replace('.', '_')}_{index}.py"
            # GPU frameworks, where a snippet uses one without importing it.
            frameworks = "".join(f"{name}: Any\n" for name in ("torch", "cupy")
                                 if f"{name}." in snippet and f"import {name}" not in snippet)
            path.write_text(PRELUDES.get(document.name, SNIPPET_PRELUDE) + frameworks + snippet)
            files.append(str(path))
    out, err, status = api.run(["--strict", "--config-file", str(MYPY_CONFIG), "--cache-dir", str(tmp_path / "cache"),
                                "--no-error-summary", *files])
    assert status == 0, out + err
