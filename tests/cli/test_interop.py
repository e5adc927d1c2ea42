"""`warpcrypt enc` against the real `openssl enc`, byte for byte.

Every cipher the two share, at sizes around the block boundaries and one
past a megabyte, in both directions: warpcrypt's ciphertext equals
openssl's, warpcrypt decrypts openssl's, and openssl decrypts warpcrypt's.
"""

from __future__ import annotations

from typing import Sequence

import pytest

from wc_support import (
    INTEROP_SIZES,
    MIB,
    PADDED_CIPHERS,
    SHARED_CIPHERS,
    assert_same_bytes,
    cipher,
    raw_key_args,
    size_id,
)

PASSPHRASE = "correct horse battery staple"
SALT = "0f1e2d3c4b5a6978"

backends = pytest.mark.parametrize("backend", ("default", "gpu"))
matrix = pytest.mark.parametrize(
    "c, size",
    [(c, s) for c in SHARED_CIPHERS for s in INTEROP_SIZES],
    ids=[f"{c}-{size_id(s)}" for c in SHARED_CIPHERS for s in INTEROP_SIZES],
)


@pytest.fixture
def check_interop(run_cli, run_openssl):
    """Encrypts `plaintext` with both tools under `args`, demands identical
    ciphertext, then decrypts each tool's ciphertext with the other."""

    def check(plaintext: bytes, *args: str, ours_only: Sequence[str] = ()) -> bytes:
        """`ours_only`: extra flags for warpcrypt alone (--backend ...)."""
        ours = run_cli.enc(plaintext, "-e", *ours_only, *args)
        theirs = run_openssl.enc(plaintext, "-e", *args)
        assert_same_bytes(ours, theirs, "warpcrypt ciphertext vs openssl")
        assert_same_bytes(run_cli.enc(theirs, "-d", *ours_only, *args), plaintext,
                          "warpcrypt decrypting openssl's ciphertext")
        assert_same_bytes(run_openssl.enc(ours, "-d", *args), plaintext,
                          "openssl decrypting warpcrypt's ciphertext")
        return ours

    return check


def plaintext_of(size: int, random_bytes) -> bytes:
    return random_bytes(size, f"plaintext-{size}")


def key_iv(c, random_bytes, tag: str = "") -> list[str]:
    key = random_bytes(c.key_len, f"key-{c}-{tag}")
    iv = random_bytes(c.iv_len, f"iv-{c}-{tag}")
    return raw_key_args(c, key, iv)


@matrix
def test_raw_key(c, size, check_interop, random_bytes):
    plaintext = plaintext_of(size, random_bytes)
    ciphertext = check_interop(plaintext, c.flag, *key_iv(c, random_bytes, size))
    assert len(ciphertext) == c.ciphertext_len(size)


@matrix
def test_passphrase_pbkdf2_fixed_salt(c, size, check_interop, random_bytes):
    # With -S, openssl 3.0 writes no Salted__ header (and reads none back).
    plaintext = plaintext_of(size, random_bytes)
    ciphertext = check_interop(
        plaintext, c.flag, "-pass", f"pass:{PASSPHRASE}", "-pbkdf2", "-S", SALT
    )
    assert len(ciphertext) == c.ciphertext_len(size)


@matrix
def test_passphrase_pbkdf2_random_salt(c, size, run_cli, run_openssl, random_bytes):
    plaintext = plaintext_of(size, random_bytes)
    args = (c.flag, "-pass", f"pass:{PASSPHRASE}", "-pbkdf2")

    ours = run_cli.enc(plaintext, "-e", *args)
    assert ours[:8] == b"Salted__", f"no Salted__ header: {ours[:16].hex()}"
    assert len(ours) == 16 + c.ciphertext_len(size)
    assert_same_bytes(run_openssl.enc(ours, "-d", *args), plaintext,
                      "openssl decrypting warpcrypt's salted ciphertext")

    theirs = run_openssl.enc(plaintext, "-e", *args)
    assert_same_bytes(run_cli.enc(theirs, "-d", *args), plaintext,
                      "warpcrypt decrypting openssl's salted ciphertext")


@pytest.mark.parametrize("c", SHARED_CIPHERS, ids=str)
@pytest.mark.parametrize("size", (0, 17, 4096), ids=size_id)
def test_legacy_kdf(c, size, check_interop, random_bytes):
    """No -pbkdf2/-iter: EVP_BytesToKey with sha256, as openssl 3 does."""
    check_interop(plaintext_of(size, random_bytes), c.flag,
                  "-pass", f"pass:{PASSPHRASE}", "-S", SALT)


@pytest.mark.parametrize("c", PADDED_CIPHERS, ids=str)
@pytest.mark.parametrize("size", (0, 16, 32, 4096, MIB), ids=size_id)
def test_nopad_block_multiples(c, size, check_interop, random_bytes):
    plaintext = plaintext_of(size, random_bytes)
    ciphertext = check_interop(plaintext, c.flag, "-nopad", *key_iv(c, random_bytes))
    assert len(ciphertext) == size


@pytest.mark.parametrize("name", ("aes-128-ecb", "aes-256-ecb"))
def test_ecb_needs_no_iv(name, check_interop, random_bytes):
    c = cipher(name)
    check_interop(plaintext_of(100, random_bytes), c.flag, "-K",
                  random_bytes(c.key_len, "ecb-key").hex())


@pytest.mark.parametrize("bits", (128, 192, 256))
@pytest.mark.parametrize(
    "iv",
    [
        "00000000000000000000000000000000",
        "000000000000000000000000fffffffe",  # carry out of the low 32 bits
        "0000000000000000fffffffffffffffe",  # carry out of the low 64 bits
        "00000000fffffffffffffffffffffffd",  # carry across 96 bits
        "fffffffffffffffffffffffffffffffe",  # wraps the whole 128-bit counter
    ],
    ids=["zero", "carry32", "carry64", "carry96", "wrap128"],
)
@pytest.mark.parametrize("size", (4096 + 5, 8 * MIB + 5), ids=size_id)
@backends
def test_ctr_counter_carries(bits, iv, size, backend, check_interop, random_bytes,
                             backend_args):
    """CTR's IV is one 128-bit big-endian counter; carries cross every word
    (the GPU must honour the 2^32 and 2^64 carries)."""
    c = cipher(f"aes-{bits}-ctr")
    key = random_bytes(c.key_len, f"ctr-key-{bits}").hex()
    check_interop(plaintext_of(size, random_bytes), c.flag, "-K", key, "-iv", iv,
                  ours_only=backend_args(backend))


@pytest.mark.parametrize(
    "counter_le",
    ["00000000", "fdffffff", "ffffffff"],
    ids=["zero", "near-overflow", "overflow"],
)
@backends
def test_chacha20_counter_overflow(counter_le, backend, check_interop, random_bytes,
                                   backend_args):
    """OpenSSL's 16-byte ChaCha20 IV is a little-endian 32-bit block counter
    then a 12-byte nonce; on overflow OpenSSL carries into the nonce."""
    nonce = "fffffffe" + random_bytes(8, "chacha-nonce").hex()
    key = random_bytes(32, "chacha-key").hex()
    check_interop(plaintext_of(64 * 5 + 7, random_bytes), "-chacha20",
                  "-K", key, "-iv", counter_le + nonce, ours_only=backend_args(backend))


def test_cipher_by_c_option_matches_dash_form(run_cli, run_openssl, random_bytes):
    c = cipher("aes-256-ctr")
    plaintext = plaintext_of(1000, random_bytes)
    keys = key_iv(c, random_bytes)
    expected = run_openssl.enc(plaintext, c.flag, *keys)
    assert_same_bytes(run_cli.enc(plaintext, "-c", c.name, *keys), expected,
                      "warpcrypt -c aes-256-ctr")


@pytest.mark.parametrize("alias, name", [("aes128", "aes-128-cbc"),
                                         ("aes192", "aes-192-cbc"),
                                         ("aes256", "aes-256-cbc")])
def test_openssl_aliases(alias, name, run_cli, run_openssl, random_bytes):
    """include/warpcrypt/warpcrypt.h accepts openssl's aesNNN (CBC) aliases."""
    c = cipher(name)
    plaintext = plaintext_of(33, random_bytes)
    keys = key_iv(c, random_bytes)
    expected = run_openssl.enc(plaintext, c.flag, *keys)
    assert_same_bytes(run_cli.enc(plaintext, f"-{alias}", *keys), expected,
                      f"warpcrypt -{alias}")


def test_explicit_e_equals_default(run_cli, random_bytes):
    c = cipher("aes-128-cbc")
    plaintext = plaintext_of(50, random_bytes)
    keys = key_iv(c, random_bytes)
    assert run_cli.enc(plaintext, c.flag, *keys) == run_cli.enc(plaintext, "-e", c.flag, *keys)


def test_random_salt_differs_and_is_the_one_used(run_cli, random_bytes):
    """Two encryptions draw different salts, and the body under the header is
    what a fixed -S of that salt produces."""
    plaintext = plaintext_of(4096, random_bytes)
    args = ("-aes-256-cbc", "-pass", f"pass:{PASSPHRASE}", "-pbkdf2")
    first = run_cli.enc(plaintext, *args)
    second = run_cli.enc(plaintext, *args)
    assert first[8:16] != second[8:16], "two runs drew the same salt"
    for blob in (first, second):
        fixed = run_cli.enc(plaintext, *args, "-S", blob[8:16].hex())
        assert_same_bytes(blob[16:], fixed, "salted body vs fixed -S encryption")
