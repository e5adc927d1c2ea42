#!/usr/bin/env bash
# Configures and builds everything into build/ (the CLI lands at
# build/warpcrypt), then installs the Python package into .venv (made by
# scripts/install-deps.sh). Extra arguments go to CMake's configure step, e.g.
# -DWARPCRYPT_CUDA=OFF, for both.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build -j"$(nproc)"

# The Python package, into .venv, built with the same CMake options as
# build/. Its build directory persists under build/, so a rerun recompiles
# only what changed.
echo "==> Python package (pip install ./python)"
cmake_args=$(IFS=';'; echo "$*")
.venv/bin/python -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps \
  -C build-dir="$PWD/build/python" ${cmake_args:+-C "cmake.args=$cmake_args"} ./python
