#!/usr/bin/env bash
# Runs the whole test suite: installs what is missing, builds, then the C++
# tests (ctest, with the NIST/RFC vectors from the cryptography-vectors
# package), an install check, the CLI interop tests against the real
# `openssl enc`, the Python package's tests (pytest), and its wheel installed
# into a fresh venv (scripts/check-wheel.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

# Runs a step and says how long it took: CI's time is the sum of them.
timed() {
  local name=$1 start
  shift
  start=$(date +%s)
  "$@"
  echo "==> $name: $(($(date +%s) - start)) s"
}

timed "install" scripts/install-deps.sh
timed "build" scripts/build.sh "$@"

WARPCRYPT_VECTORS_DIR=$(.venv/bin/python -c \
  'import cryptography_vectors, os; print(os.path.dirname(cryptography_vectors.__file__))')
export WARPCRYPT_VECTORS_DIR
export WARPCRYPT_REQUIRE_VECTORS=1  # the vector sets must run, never skip

echo "==> C++ tests (ctest)"
timed "ctest" ctest --test-dir build --output-on-failure -j"$(nproc)"
echo "==> install check (find_package and pkg-config consumers)"
timed "install check" tests/install/check-install.sh
echo "==> CLI tests (pytest)"
timed "CLI tests" .venv/bin/python -m pytest tests/cli -q -n auto
echo "==> Python package tests (pytest)"
timed "Python tests" .venv/bin/python -m pytest tests/python -q -n auto
echo "==> wheel check (auditwheel, a fresh venv)"
timed "wheel check" scripts/check-wheel.sh
