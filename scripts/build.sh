#!/usr/bin/env bash
# Configures and builds everything into build/ (the CLI lands at
# build/warpcrypt), then builds the Python package's wheel and installs it
# into .venv (made by scripts/install-deps.sh). Extra arguments go to CMake's
# configure step, e.g. -DWARPCRYPT_CUDA=OFF, for both. WARPCRYPT_BUILD_TARGETS
# names the CMake targets to build (default: all of them, tests included).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build -j"$(nproc)" ${WARPCRYPT_BUILD_TARGETS:+--target $WARPCRYPT_BUILD_TARGETS}

# The Python package: a wheel in build/wheel (scripts/check-wheel.sh tests it
# as a user would get it), installed into .venv. It links the library just
# built in build/ (a CMake package, warpcrypt_DIR) rather than compiling it,
# CUDA kernels included, a second time; the same CMake options go along, so
# it finds the same dependencies. Its build directory persists under build/,
# so a rerun recompiles only what changed.
echo "==> Python package (pip wheel ./python, into .venv)"
cmake_args=$(IFS=";"; echo "-Dwarpcrypt_DIR=$PWD/build${*:+;$*}")
rm -rf build/wheel
.venv/bin/python -m pip wheel -q --disable-pip-version-check --no-build-isolation --no-deps -w build/wheel \
  -C build-dir="$PWD/build/python" -C "cmake.args=$cmake_args" ./python
# The version does not change from one build to the next: force it in.
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps --force-reinstall build/wheel/warpcrypt-*.whl
