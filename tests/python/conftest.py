"""Fixtures for the tests of the `warpcrypt` Python package.

The package must be installed (scripts/test.sh does it: `pip install ./python`).
Tests that compare against pyca/cryptography skip without it, and the GPU
tests skip without a CUDA device or without CuPy / PyTorch, each saying why.
The NIST/RFC vector files come from $WARPCRYPT_VECTORS_DIR or the
`cryptography_vectors` package; with WARPCRYPT_REQUIRE_VECTORS=1 their
absence fails instead of skipping, so CI cannot pass without running them.

Run from the repository root:  python -m pytest tests/python -q
"""

from __future__ import annotations

import os
import sys
import random
from pathlib import Path

import pytest

import warpcrypt
from gpu_support import NO_DEVICE_REASON

# The test plugin (tests/cli/plugins/age-plugin-wctest) gets only the
# environment an age plugin gets, without PYTHONPATH: it finds pyca/cryptography
# where this interpreter does, through a variable of its own.
os.environ.setdefault("WCTEST_PYTHONPATH", os.pathsep.join(sys.path))

@pytest.fixture(scope="session")
def has_device() -> bool:
    return bool(warpcrypt.devices())


@pytest.fixture
def require_device(has_device) -> None:
    if not has_device:
        pytest.skip(NO_DEVICE_REASON)


@pytest.fixture
def require_no_device(has_device) -> None:
    if has_device:
        pytest.skip("a CUDA device is present: this test checks behaviour without one")


@pytest.fixture
def rng(request) -> random.Random:
    """A generator seeded from the test's name (and $WARPCRYPT_TEST_SEED), so
    failures reproduce."""
    return random.Random(f"{os.environ.get('WARPCRYPT_TEST_SEED', '')}:{request.node.nodeid}")


@pytest.fixture(scope="session")
def reference():
    """pyca/cryptography's Cipher, algorithms and modes, and its PKCS7 padding."""
    ciphers = pytest.importorskip(
        "cryptography.hazmat.primitives.ciphers",
        reason="the `cryptography` package is not installed: differential tests skipped",
    )
    padding = pytest.importorskip("cryptography.hazmat.primitives.padding")
    return ciphers, padding


def _vectors_dir() -> Path | None:
    configured = os.environ.get("WARPCRYPT_VECTORS_DIR")
    if configured:
        return Path(configured)
    try:
        import cryptography_vectors
    except ImportError:
        return None
    return Path(cryptography_vectors.__file__).parent


@pytest.fixture(scope="session")
def vectors_dir() -> Path:
    found = _vectors_dir()
    if found is not None and found.is_dir():
        return found
    message = ("NIST/RFC vectors not found: set WARPCRYPT_VECTORS_DIR or install the "
               "cryptography-vectors package")
    if os.environ.get("WARPCRYPT_REQUIRE_VECTORS") == "1":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)
