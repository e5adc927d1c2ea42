#!/usr/bin/env bash
# One command for a fresh machine: installs what is missing, builds
# everything, installs the Python package into .venv, and runs the main job
# (scripts/demo.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh "$@"

# The Python package, into .venv, built with the same CMake options as
# build/. Its build directory persists under build/, so a rerun recompiles
# only what changed.
echo "==> Python package (pip install ./python)"
cmake_args=$(IFS=';'; echo "$*")
.venv/bin/python -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps \
  -C build-dir="$PWD/build/python" ${cmake_args:+-C "cmake.args=$cmake_args"} ./python

scripts/demo.sh
