#!/usr/bin/env python3
"""Installs into TARGET the wheels in WHEELS whose distribution this Python
does not have yet, without dependencies: the GPU machine's Python comes
with PyTorch, CuPy and NumPy, which must stay the versions they are.

    install-missing-wheels.py TARGET WHEELS
"""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path


def distribution(wheel: Path) -> str:
    # A wheel's file name starts with its distribution, "-" written "_".
    return wheel.name.split("-", 1)[0].replace("_", "-")


def main() -> int:
    target, wheels = sys.argv[1], Path(sys.argv[2])
    missing = []
    for wheel in sorted(wheels.glob("*.whl")):
        try:
            importlib.metadata.version(distribution(wheel))
        except importlib.metadata.PackageNotFoundError:
            missing.append(str(wheel))
    print(f"installing {len(missing)} of {len(list(wheels.glob('*.whl')))} wheels: "
          + " ".join(Path(w).name for w in missing))
    if missing:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", target,
                        *missing], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
