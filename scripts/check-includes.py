#!/usr/bin/env python3
"""Reads every #include in src/, tools/ and python/src/ and fails on any that
breaks the dependency rule of docs/architecture.md:

    api -> sealed, age -> engine -> core <- backends (cpu, cuda)

A layer may include its own folder and the folders below it; a backend only
core; nothing includes a backend (everything reaches them through the
tables of core/backend_tables.h); the CLI and the Python binding only the public
headers of include/. Prints every violation as `file:line: rule` and exits 1
if there is any; prints the layer graph it found with --graph.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)

# What each layer of src/ may include, besides the public header.
ALLOWED = {
    "api": {"api", "sealed", "age", "engine", "core"},
    "sealed": {"sealed", "engine", "core"},
    "age": {"age", "engine", "core"},
    "engine": {"engine", "core"},
    "core": {"core"},
    "cpu": {"cpu", "core"},
    "cuda": {"cuda", "core"},
}
PUBLIC = "warpcrypt/"
SOURCE_SUFFIXES = {".h", ".cpp", ".cu", ".cuh"}


def layer_of(path: str) -> str | None:
    """src/<layer>/..., or src/backends/<backend>/... for a backend."""
    parts = path.split("/")
    if parts[0] == "src" and len(parts) > 3 and parts[1] == "backends":
        return parts[2]
    if parts[0] == "src" and len(parts) > 2:
        return parts[1]
    if parts[0] in ("tools", "python"):
        return "client"
    return None


def included_layer(include: str, including: Path) -> str:
    """`core/cipher_backend.h` is core, `backends/cpu/kdf.h` is cpu; a bare name is
    the including file's folder."""
    if include.startswith(PUBLIC):
        return "public"
    if include.startswith("backends/"):
        return include.split("/")[1]
    if "/" in include:
        return include.split("/")[0]
    return "same folder"


def edges():
    for folder in ("src", "tools", "python/src"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix not in SOURCE_SUFFIXES:
                continue
            name = path.relative_to(ROOT).as_posix()
            layer = layer_of(name)
            text = path.read_text(errors="replace")
            for match in INCLUDE.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                yield name, line, layer, included_layer(match.group(1), path), match.group(1)


def violation(layer: str, target: str) -> str | None:
    if target in ("public", "same folder"):
        return None
    if layer == "client":
        return "the CLI and the Python binding see only include/warpcrypt"
    allowed = ALLOWED.get(layer)
    if allowed is None:
        return f"src/{layer}/ is no layer of docs/architecture.md"
    if target in allowed:
        return None
    if target in ("cpu", "cuda"):
        return "nothing includes a backend: call it through core/backend_tables.h"
    return f"{layer} may include only {', '.join(sorted(allowed))}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--graph", action="store_true", help="print the layer graph (edge counts)")
    args = parser.parse_args()
    graph: Counter[tuple[str, str]] = Counter()
    failures = []
    for name, line, layer, target, include in edges():
        if layer is not None and target not in ("same folder",):
            graph[(layer, target)] += 1
        why = violation(layer, target) if layer is not None else None
        if why:
            failures.append(f"{name}:{line}: #include \"{include}\": {why}")
    if args.graph:
        for (source, target), count in sorted(graph.items()):
            print(f"{source:>7} -> {target:<7} {count}")
    for failure in failures:
        print(failure)
    if failures:
        print(f"check-includes: {len(failures)} include(s) break the dependency rule (docs/architecture.md)")
        return 1
    print("check-includes: every include follows the dependency rule")
    return 0


if __name__ == "__main__":
    sys.exit(main())
