"""Every shell block of the README and docs/ runs as written: a document's
```sh blocks in order, as one session in a scratch folder (a reader goes
through them in that order: the README's `seal` block opens the file its
`enc` block made), then the whole session again in the same folder, which
a block that writes where a second run cannot (a key file age-keygen will
not overwrite, say) fails. The scratch folder holds build/warpcrypt, the
binary under test, and .venv, the environment of the Python running the
tests (which has this checkout's package), as a checkout after
scripts/setup.sh does; PATH finds `warpcrypt` and the package's commands
there, as an install puts them on it.

A line whose comment starts `# GPU` needs a CUDA device; without one it
must fail with exit status 5 (no device), never run on the CPU in silence.
As written, the README's CLI section pushes 1.1 GB through enc, seal and
open, about a minute on a 2-core machine; CI runs it scaled down (1100M and
1G become 1100K and 1M, and speed measures for 0.1 s), and
WARPCRYPT_README_FULL=1 runs it exactly as written.

What is not run here is in RUN_ELSEWHERE, each with where it runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO_ROOT

# Blocks (by their first line) and lines (by their start) run elsewhere.
RUN_ELSEWHERE = {
    "scripts/setup.sh": "the README's two commands: the second is CI's own entry (.ci/run), the first what a "
                        "fresh clone runs",
    "pip install ./python": "scripts/test.sh builds and installs the same package (check-wheel.sh)",
    "python3 bench/": "the benchmark drivers, which bench/ and scripts/gpu-check.sh run",
}
# docs/dask.md starts a Dask cluster and an S3 store for its blocks, Python
# and shell alike: tests/python/test_dask_docs.py runs it.
SESSIONS_ELSEWHERE = {"docs/dask.md"}


def documents() -> list[str]:
    found = ["README.md", *(f"docs/{path.name}" for path in sorted((REPO_ROOT / "docs").glob("*.md")))]
    return [name for name in found if name not in SESSIONS_ELSEWHERE and shell_blocks(name)]


def shell_blocks(document: str) -> list[str]:
    text = (REPO_ROOT / document).read_text(encoding="utf-8")
    blocks = []
    for indent, block in re.findall(r"^([ ]*)```sh\n(.*?)^[ ]*```", text, flags=re.S | re.M):
        block = "\n".join(line[len(indent):] for line in block.splitlines())
        if not any(block.startswith(first) for first in RUN_ELSEWHERE):
            blocks.append(block)
    return blocks


def session(document: str, cuda_device_present: bool) -> str:
    full = os.environ.get("WARPCRYPT_README_FULL") == "1"
    script = ["set -e -o pipefail"]
    for block in shell_blocks(document):
        for line in block.replace("\\\n", " ").splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if any(line.startswith(start) for start in RUN_ELSEWHERE):
                continue
            if document == "README.md" and not full:
                line = line.replace("1100M", "1100K").replace("--offset 1G", "--offset 1M")
                line = line.replace("-seconds 1", "-seconds 0.1")
            if re.search(r"#\s*GPU", line) and not cuda_device_present:
                line = f"{{ {line.split('#')[0]}; }} 2>/dev/null && exit 98 || test $? -eq 5 || exit 99"
            script.append(line)
    return "\n".join(script)


@pytest.fixture
def scratch(tmp_path, warpcrypt_binary) -> Path:
    """A folder laid out as a checkout after scripts/setup.sh."""
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "warpcrypt").symlink_to(warpcrypt_binary)
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    return tmp_path


@pytest.mark.parametrize("document", documents())
def test_the_shell_blocks_run_as_written_twice(document, scratch, cuda_device_present):
    script = session(document, cuda_device_present)
    path = os.pathsep.join([str(scratch / "build"), str(Path(sys.executable).parent), os.environ["PATH"]])
    env = {**os.environ, "PATH": path, "PYTHONPATH": os.pathsep.join(sys.path)}
    for attempt in ("first", "second"):
        run = subprocess.run(["bash", "-c", script], cwd=scratch, env=env, capture_output=True, timeout=600)
        assert run.returncode == 0, (document, attempt, run.returncode, run.stderr.decode()[-3000:], script)
    if document == "README.md":
        assert (scratch / "data.out").read_bytes() == (scratch / "data.bin").read_bytes()
        assert (scratch / "part.bin").stat().st_size == 4096


def test_every_document_with_shell_blocks_is_run():
    """A document is left out only by name, with where it runs instead."""
    assert {"README.md", "docs/age.md", "docs/cli.md"} <= set(documents())
    assert len(shell_blocks("README.md")) >= 4
