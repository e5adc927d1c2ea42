#!/usr/bin/env bash
# Runs the whole test suite: installs what is missing, builds, then the C++
# tests (ctest, with the NIST/RFC vectors from the cryptography-vectors
# package), an install check, the CLI interop tests against the real
# `openssl enc`, the Python package's tests (pytest), and its wheel installed
# into a fresh venv (scripts/check-wheel.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh "$@"

WARPCRYPT_VECTORS_DIR=$(.venv/bin/python -c \
  'import cryptography_vectors, os; print(os.path.dirname(cryptography_vectors.__file__))')
export WARPCRYPT_VECTORS_DIR
export WARPCRYPT_REQUIRE_VECTORS=1  # the vector sets must run, never skip

echo "==> C++ tests (ctest)"
ctest --test-dir build --output-on-failure -j"$(nproc)"
echo "==> install check (find_package and pkg-config consumers)"
tests/install/check-install.sh
echo "==> CLI tests (pytest)"
.venv/bin/python -m pytest tests/cli -q -n auto
echo "==> Python package tests (pytest)"
.venv/bin/python -m pytest tests/python -q -n auto
echo "==> wheel check (auditwheel, a fresh venv)"
scripts/check-wheel.sh
