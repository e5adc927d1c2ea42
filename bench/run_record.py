"""What every benchmark's results file says about its run: the date, the
commit, the machine and its GPUs. scripts/performance-page.py gives each
table's device, date and commit from this record, so none of them has to be
looked up elsewhere.

The commit is WARPCRYPT_BENCH_COMMIT where it is set, since a copy of the
tree on another machine may carry a git folder that did not follow its files
(scripts/gpu-check.sh sets it from .deps/commit, which
scripts/fetch-gpu-deps.sh writes); else `git describe --always --dirty`, which
says "-dirty" where the files that ran are not the commit's.
"""

from __future__ import annotations

import os
import platform
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _output(command: list[str]) -> str:
    try:
        return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False).stdout.strip()
    except OSError:
        return ""


def commit() -> str:
    return os.environ.get("WARPCRYPT_BENCH_COMMIT") or _output(["git", "describe", "--always", "--dirty",
                                                                 "--abbrev=7"])


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def gpus() -> list[dict]:
    """The GPUs nvidia-smi lists, with their driver; none where it is absent."""
    rows = _output(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"])
    return [dict(zip(("name", "driver"), (part.strip() for part in row.split(",", 1))))
            for row in rows.splitlines() if row.strip()]


def run_record() -> dict:
    return {"date": time.strftime("%Y-%m-%d"), "commit": commit(), "host": platform.node(),
            "cores": os.cpu_count(), "cpu": cpu_model(), "gpus": gpus()}
