"""Every Python block of the README and docs/python.md runs as written, each
in a fresh folder and a fresh interpreter, twice in a row: a block that
names something it never defines, or writes where a second run cannot,
fails here. A block
that imports PyTorch, CuPy, transformers or accelerate runs where those
import (the GPU machine, scripts/gpu-check.sh python) and is skipped,
saying so, elsewhere. test_typing.py checks the same blocks with mypy."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCUMENTS = ("README.md", "docs/python.md")
OPTIONAL = ("torch", "cupy", "transformers", "accelerate")


def blocks() -> list[tuple[str, str]]:
    found = []
    for document in DOCUMENTS:
        text = (REPO / document).read_text(encoding="utf-8")
        for index, block in enumerate(re.findall(r"^[ ]*```python\n(.*?)^[ ]*```", text, flags=re.S | re.M)):
            found.append((f"{document}#{index}", textwrap.dedent(block)))
    return found


@pytest.mark.parametrize("name, code", blocks(), ids=[name for name, _ in blocks()])
def test_the_block_runs_as_written(name, code, tmp_path):
    missing = [module for module in OPTIONAL
               if re.search(rf"^\s*(import|from) {module}\b", code, re.M) and importlib.util.find_spec(module) is None]
    if missing:
        pytest.skip(f"{name} needs {', '.join(missing)}, not installed here")
    for attempt in ("first", "second"):  # twice in a row, in the same folder: nothing it leaves stops it
        run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                             env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
        assert run.returncode == 0, f"{name}, {attempt} run:\n{run.stderr}"
