"""Salsa20 and Salsa20-128, which openssl lacks: checked against libsodium
(itself checked against djb's specification here) and by round trips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wc_support import MIB, WARPCRYPT_ONLY_CIPHERS, assert_same_bytes, raw_key_args, size_id

SALSA_SIZES = (0, 1, 63, 64, 65, 4096, MIB + 3)

# djb, "Salsa20 specification", section 10 (the expansion function), as
# tests/data/salsa20_spec.json holds it for this suite and the Python one.
_SPEC = json.loads((Path(__file__).resolve().parents[1] / "data" / "salsa20_spec.json").read_text())
SPEC_K0, SPEC_K1, SPEC_N, SPEC_32, SPEC_16 = (
    bytes.fromhex(_SPEC[name]) for name in ("k0", "k1", "n", "expansion_32", "expansion_16"))


@pytest.mark.parametrize("key, expected", [(SPEC_K0 + SPEC_K1, SPEC_32), (SPEC_K0, SPEC_16)],
                         ids=["32-byte-key", "16-byte-key"])
def test_reference_matches_djb_spec(key, expected, sodium):
    """Guards the reference itself: the spec's n is nonce || LE block counter."""
    counter = int.from_bytes(SPEC_N[8:], "little")
    assert sodium.xor(key, SPEC_N[:8], bytes(64), counter) == expected


@pytest.mark.parametrize("c", WARPCRYPT_ONLY_CIPHERS, ids=str)
@pytest.mark.parametrize("size", SALSA_SIZES, ids=size_id)
def test_raw_key_matches_libsodium(c, size, run_cli, sodium, random_bytes):
    key, nonce = random_bytes(c.key_len, f"salsa-key-{c}"), random_bytes(8, f"nonce-{c}")
    plaintext = random_bytes(size, f"salsa-pt-{size}")
    args = (c.flag, *raw_key_args(c, key, nonce))
    ciphertext = run_cli.enc(plaintext, *args)
    assert_same_bytes(ciphertext, sodium.xor(key, nonce, plaintext), "keystream vs libsodium")
    assert_same_bytes(run_cli.enc(ciphertext, "-d", *args), plaintext, "round trip")


@pytest.mark.parametrize("c", WARPCRYPT_ONLY_CIPHERS, ids=str)
def test_spec_key_and_nonce_first_block(c, run_cli, sodium):
    """The spec's key and nonce at counter 0, through the CLI."""
    key = (SPEC_K0 + SPEC_K1)[: c.key_len]
    stream = run_cli.enc(bytes(128), c.flag, *raw_key_args(c, key, SPEC_N[:8]))
    assert_same_bytes(stream, sodium.xor(key, SPEC_N[:8], bytes(128)), "keystream")


@pytest.mark.parametrize("c", WARPCRYPT_ONLY_CIPHERS, ids=str)
@pytest.mark.parametrize("kdf", (["-pbkdf2"], ["-iter", "99", "-md", "sha512"], []),
                         ids=["pbkdf2", "iter-sha512", "legacy"])
@pytest.mark.parametrize("size", (0, 100, MIB + 3), ids=size_id)
def test_passphrase_round_trip(c, kdf, size, run_cli, random_bytes):
    plaintext = random_bytes(size, "salsa-pass")
    args = (c.flag, "-pass", "pass:salsa dancing", *kdf)
    ciphertext = run_cli.enc(plaintext, *args)
    assert ciphertext[:8] == b"Salted__"
    assert len(ciphertext) == 16 + size
    assert_same_bytes(run_cli.enc(ciphertext, "-d", *args), plaintext, "round trip")


def test_passphrase_key_is_the_printed_key(run_cli, sodium, random_bytes, tmp_path):
    """The ciphertext under -p's printed key and IV is libsodium's."""
    plaintext = random_bytes(1000, "salsa-p")
    out = tmp_path / "out"
    result = run_cli("enc", "-salsa20", "-pass", "pass:x", "-pbkdf2", "-S", "0102030405060708",
                     "-p", "-out", out, stdin=plaintext).check()
    lines = dict(line.split("=", 1) for line in result.stdout.decode().splitlines())
    assert set(lines) == {"salt", "key", "iv "}, result.describe()
    key, iv = bytes.fromhex(lines["key"]), bytes.fromhex(lines["iv "])
    assert (len(key), len(iv)) == (32, 8)
    assert_same_bytes(out.read_bytes(), sodium.xor(key, iv, plaintext),
                      "ciphertext under the printed key")


def test_key_sizes_differ(run_cli, random_bytes):
    """salsa20-128 is not salsa20 with a truncated key."""
    key = random_bytes(32, "two-sizes")
    nonce = random_bytes(8, "two-sizes-nonce").hex()
    full = run_cli.enc(bytes(64), "-salsa20", "-K", key.hex(), "-iv", nonce)
    half = run_cli.enc(bytes(64), "-salsa20-128", "-K", key[:16].hex(), "-iv", nonce)
    assert full != half
