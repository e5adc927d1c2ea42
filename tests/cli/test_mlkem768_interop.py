"""ML-KEM-768 against pyca/cryptography's independent implementation.

warpcrypt's ML-KEM (src/backends/cpu/mlkem768.cpp) is reached through the
test-only tool mlkem768_tool, built beside the CLI under test (<build>/tests).
Keys come from random seeds; each direction is checked: a warpcrypt
encapsulation opened by pyca, a pyca encapsulation opened by warpcrypt, and
both implementations' implicit rejection of a damaged ciphertext agreeing.
"""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import mlkem

ROUNDS = 25


@pytest.fixture(scope="module")
def tool(build_tool):
    return build_tool("mlkem768_tool")


def call(tool: Path, *args: bytes) -> list[bytes]:
    done = subprocess.run(
        [str(tool), args[0].decode(), *(a.hex() for a in args[1:])],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return [bytes.fromhex(line) for line in done.stdout.split()]


def test_key_generation_matches_pyca(tool):
    rng = random.Random(2031)
    for _ in range(ROUNDS):
        seed = rng.randbytes(64)
        ek, dk = call(tool, b"keygen", seed)
        assert ek == mlkem.MLKEM768PrivateKey.from_seed_bytes(seed).public_key().public_bytes_raw()
        assert len(dk) == 2400


def test_warpcrypt_encapsulates_pyca_decapsulates(tool):
    rng = random.Random(2032)
    for _ in range(ROUNDS):
        pyca_key = mlkem.MLKEM768PrivateKey.generate()
        ek = pyca_key.public_key().public_bytes_raw()
        ct, ss = call(tool, b"encaps", ek, rng.randbytes(32))
        assert len(ct) == 1088
        assert pyca_key.decapsulate(ct) == ss


def test_pyca_encapsulates_warpcrypt_decapsulates(tool):
    rng = random.Random(2033)
    for _ in range(ROUNDS):
        seed = rng.randbytes(64)
        ek, dk = call(tool, b"keygen", seed)
        ss, ct = mlkem.MLKEM768PublicKey.from_public_bytes(ek).encapsulate()
        assert call(tool, b"decaps", dk, ct) == [ss]


def test_implicit_rejection_agrees_with_pyca(tool):
    rng = random.Random(2034)
    for _ in range(ROUNDS):
        seed = rng.randbytes(64)
        ek, dk = call(tool, b"keygen", seed)
        ss, ct = mlkem.MLKEM768PublicKey.from_public_bytes(ek).encapsulate()
        damaged = bytearray(ct)
        damaged[rng.randrange(len(damaged))] ^= 1 << rng.randrange(8)
        (rejected,) = call(tool, b"decaps", dk, bytes(damaged))
        assert rejected != ss
        assert rejected == mlkem.MLKEM768PrivateKey.from_seed_bytes(seed).decapsulate(bytes(damaged))


def test_unreduced_key_refused(tool):
    seed = random.Random(2035).randbytes(64)
    ek, _ = call(tool, b"keygen", seed)
    unreduced = b"\xff\x0f" + ek[2:]  # first coefficient 0xFFF >= q
    done = subprocess.run(
        [str(tool), "encaps", unreduced.hex(), "00" * 32], capture_output=True, text=True, check=False
    )
    assert done.returncode == 1
    assert "encapsulation key refused" in done.stderr
    assert done.stdout == ""
